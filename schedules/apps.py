from django.apps import AppConfig


class SchedulesConfig(AppConfig):
    name = "schedules"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .ticker import Ticker

        #: The process's one loop that fires due schedules, started by the process that fires them: a run worker
        #: (chat/management/commands/runworker.py) with AGENTWEB_RUN_WORKERS, else a Daphne process (agentweb/serve.py).
        self.ticker = Ticker()
        #: The thread firings open their turns on (firing.py firing_threads), made on first use.
        self.firing_executor = None
