from django.apps import AppConfig, apps
from django.db.models.signals import post_delete, post_save


class NotificationsConfig(AppConfig):
    name = "notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .audience import Generations
        from .dispatch import Dispatcher
        from .models import Preference

        #: Counts the writes of anyone's channels, so that who is told (notifications/audience.py) is read again.
        self.generations = Generations()

        #: The process's notifier: its threads record, coalesce and send (never the run's event loop).
        self.dispatcher = Dispatcher()  # its window: AGENTWEB_NOTIFY_WINDOW
        apps.get_app_config("chat").notifier = self.dispatcher.submit
        # Who is told (notifications/audience.py) is kept until a preference is written.
        post_save.connect(_preference_written, sender=Preference, dispatch_uid="notifications-audience-save")
        post_delete.connect(_preference_written, sender=Preference, dispatch_uid="notifications-audience-delete")


def _preference_written(**_) -> None:
    apps.get_app_config("notifications").generations.changed()
