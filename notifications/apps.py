from django.apps import AppConfig, apps


class NotificationsConfig(AppConfig):
    name = "notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .dispatch import Dispatcher

        #: The process's notifier: its threads record, coalesce and send (never the run's event loop).
        self.dispatcher = Dispatcher()  # its window: AGENTWEB_NOTIFY_WINDOW
        apps.get_app_config("chat").notifier = self.dispatcher.submit
