"""ASGI entry point: HTTP through Django, websockets through Channels."""

import gc
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")
# Django must be set up before anything imports models.
django.setup(set_prefix=False)

from django.conf import settings  # noqa: E402

from agentweb.http_handler import PooledThreadASGIHandler  # noqa: E402

# Django's ASGI handler, but page views run on a few kept threads rather than a new thread each (http_handler.py).
django_http_app = PooledThreadASGIHandler(settings.AGENTWEB_HTTP_THREADS)

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from agentweb.origin import SameOriginValidator  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from chat.runs import RUNS_CHANNEL  # noqa: E402
from chat.worker import RunWorker  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Daphne serves the app's own static files so `make run` needs nothing in front of it.
        "http": ASGIStaticFilesHandler(django_http_app),
        # Only the site's own pages (scheme, host and port) or DJANGO_CSRF_TRUSTED_ORIGINS open a websocket.
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        # `manage.py runworker agentweb-runs` (AGENTWEB_RUN_WORKERS): runs handed over by Daphne processes.
        "channel": ChannelNameRouter({RUNS_CHANNEL: RunWorker.as_asgi()}),
    }
)

# Every view module is imported now rather than by the first request (which paid ~15 ms for it), so that the
# freeze below covers those modules too.
get_resolver().url_patterns  # noqa: B018 (the import is the point)

# What start-up loaded (Django, Channels, Twisted, the app: some 95,000 objects) lives as long as the process.
# Moved out of the cyclic collector's reach, it is no longer walked by every full collection, which took
# about 60 ms here: a page's whole latency budget, and every stream of the process stalled for as long.
gc.collect()
gc.freeze()

# A page view runs in a thread beside the event loop, and takes the GIL back after each of its queries: with
# the default 5 ms switch interval, a busy loop made it wait up to 5 ms each time (page p99 ~50 ms while 50
# answers streamed). 1 ms lets it back in sooner, at the price of a few more switches.
sys.setswitchinterval(0.001)
