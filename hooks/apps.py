from django.apps import AppConfig
from django.conf import settings


class HooksConfig(AppConfig):
    name = "hooks"
    verbose_name = "Webhook triggers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .limits import trigger_limiter

        # The process's per-trigger delivery limit (hooks/limits.py): one bucket per trigger, shared through Redis
        # by every process when they have it, so a flood cannot be spread over the processes.
        self.delivery_limit = trigger_limiter(settings)
