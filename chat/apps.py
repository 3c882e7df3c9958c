from django.apps import AppConfig
from django.conf import settings


class ChatConfig(AppConfig):
    name = "chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import live, signals
        from .flush import flush_every_interval
        from .per_loop import PerLoop
        from .ratelimit import send_limiter
        from .runs import placement
        from .runs.heartbeat import beat_every_interval
        from .runs.registry import RunsHere
        from .socket_cap import SocketCap

        #: The deployment's delivery of threads' events (the `delivery` package), for the app's lifetime: its shape
        #: (one process, or processes sharing Redis) is chosen here, once.
        self.delivery = live.start(settings)
        #: What this process holds of runs: the runs streaming in it, and the tasks it keeps for them.
        self.runs_here = RunsHere()
        #: One task per event loop writing the heartbeat of its running runs, one writing their streaming text.
        self.heartbeat = PerLoop("runs-heartbeat", beat_every_interval)
        self.text_flush = PerLoop("streaming-text-flush", flush_every_interval)
        #: How many chat sockets each person holds open in this process (AGENTWEB_MAX_SOCKETS_PER_USER).
        self.sockets = SocketCap()
        #: Where runs live (all here, shared among processes, or in run workers): the deployment's shape, chosen once.
        self.placement = placement.choose(self.delivery, run_workers=settings.AGENTWEB_RUN_WORKERS)
        #: Every frame that makes a model request takes a token of the person's send limit (chat/ratelimit.py).
        self.send_limit = send_limiter(settings)
        #: What a run tells its person off the tabs (chat/notify.py): set by the notifications app as it starts.
        self.notifier = None
        signals.connect()
        from django.db.models.signals import post_migrate

        from .search_index import restore_search_triggers

        post_migrate.connect(restore_search_triggers, sender=self, dispatch_uid="chat.search_triggers")
