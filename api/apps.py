import asyncio

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        #: Releases of followed threads started on the event loop itself (api/responses.py), kept until they end:
        #: the loop keeps only a weak reference to a task.
        self.releasing: set[asyncio.Task] = set()
