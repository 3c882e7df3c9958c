"""ASGI entry point: HTTP through Django, websockets through Channels."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")
# Django must be set up before anything imports models.
django.setup(set_prefix=False)

from django.conf import settings  # noqa: E402

from agentweb.http_handler import PooledThreadASGIHandler  # noqa: E402

# Django's ASGI handler, but page views run on a few kept threads rather than a new thread each (http_handler.py).
django_http_app = PooledThreadASGIHandler(settings.AGENTWEB_HTTP_THREADS)

from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from agentweb.origin import SameOriginValidator  # noqa: E402
from agentweb.socket_auth import SocketAuthMiddlewareStack  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from chat.runs import RUNS_CHANNEL  # noqa: E402
from chat.worker import RunWorker  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Daphne serves the app's own static files so `make run` needs nothing in front of it.
        "http": ASGIStaticFilesHandler(django_http_app),
        # Only the site's own pages (scheme, host and port) or DJANGO_CSRF_TRUSTED_ORIGINS open a websocket.
        "websocket": SameOriginValidator(SocketAuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        # `manage.py runworker agentweb-runs` (AGENTWEB_RUN_WORKERS): runs handed over by Daphne processes.
        "channel": ChannelNameRouter({RUNS_CHANNEL: RunWorker.as_asgi()}),
    }
)
