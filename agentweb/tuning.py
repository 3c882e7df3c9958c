"""How a serving process is tuned, once the app is loaded and before it takes its first connection.

`agentweb.serve` calls `tune_process()` when Daphne is ready (every way agentweb is served goes through it:
`make run`, the deployment's command, the tests' and the benchmarks' servers). Each setting was measured with
`make bench` (docs/performance.md, "what we keep and why").
"""

from __future__ import annotations

import gc
import sys

# A page view runs in a thread beside the event loop and takes the GIL back after each of its queries: with the
# default 5 ms switch interval a busy loop made it wait up to 5 ms each time (page p99 ~50 ms while 50 answers
# streamed). 1 ms lets it back in sooner, at the price of a few more switches.
SWITCH_INTERVAL = 0.001

# Python collects its youngest generation each time the objects it tracks, allocated minus freed, grow by 700 (its
# default), and what a collection finds alive moves on to an older generation. A worker streaming 200 answers holds
# thousands of short-lived objects at any moment (frames queued for Redis, their futures, timers), so at 700 it
# collected dozens of times a second, moved whatever was in flight on towards the oldest generation, and a full
# collection followed every 1-2 s, walking the live runs' ~65,000 objects: 11-70 ms each, every stream of the
# process stopped (logged with gc.callbacks; docs/performance.md P30). Objects freed by their reference count,
# nearly all of them, never count towards the threshold: what reaches it is what stays alive or in cycles, so garbage
# in cycles waits for at most this many objects more before a collection frees it.
YOUNG_COLLECTION_THRESHOLD = 50_000


def tune_process() -> None:
    import_every_view()
    freeze_what_start_up_loaded()
    collect_young_objects_less_often()
    sys.setswitchinterval(SWITCH_INTERVAL)


def import_every_view() -> None:
    """Import the view modules now rather than at the first request (which paid ~15 ms for it), so that the freeze
    below covers them too."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (the import is the point)


def freeze_what_start_up_loaded() -> None:
    """What start-up loaded (Django, Channels, Twisted, the app: some 95,000 objects) lives as long as the process.
    Moved out of the cyclic collector's reach, it is no longer walked by every full collection, which took about
    60 ms: a page's whole latency budget, and every stream of the process stalled for as long."""
    gc.collect()
    gc.freeze()


def collect_young_objects_less_often() -> None:
    """The older generations keep Python's thresholds (each collected after 10 of the next younger one's)."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, oldest)
