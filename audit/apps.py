from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import receivers
        from .retention import Pruner

        receivers.connect()
        #: The process's loop that prunes the log past its retention and reads in the admin's bulk entries, started
        #: where the schedules' ticker starts (agentweb/serve.py start_schedules): the one periodic hook there is.
        self.pruner = Pruner()
