"""`manage.py runworker agentweb-runs`: a process that runs the runs Daphne processes hand over.

With AGENTWEB_RUN_WORKERS on, a Daphne process stores the person's message, opens the run, and sends it
to the `agentweb-runs` channel (chat/runs/start.py launch_run); one worker takes it and runs it to its end. The
run then outlives the Daphne process, and any number of Daphne processes and workers share the load.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

from channels.consumer import AsyncConsumer, get_handler_name

from agentweb.tuning import tune_process
from tools.services import mcp_connections

from . import runs

log = logging.getLogger("agentweb.runs")


class RunWorker(AsyncConsumer):
    """The consumer of the runs channel: channels' runworker makes one for the process (and another only if one
    fails), so what it keeps lives as long as the worker does."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Runs being started (their tasks kept here, so that none is collected before it has begun).
        self.starting: set[asyncio.Future] = set()
        self.prepared = False

    async def dispatch(self, message):
        # channels closes stale database connections before every handler, in a hop to the one database thread
        # that the runs already started queue their reads and writes on: 200 turns sent at once were all in Redis
        # within 2.3 s but reached run_launch over 12 s, one behind another's trips. A run's own trips
        # (database_sync_to_async) close stale connections themselves.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def run_launch(self, message):
        if not self.prepared:
            self.prepared = True
            prepare_process()
        # Started, not awaited: channels gives this consumer the channel's messages one at a time, and a run's start
        # (its reads and its claim, hops to the one database thread the streaming runs use too) took long enough that
        # a burst of runs queued behind one another. 200 sent at once were taken at a few a second, and the rest
        # failed after AGENTWEB_RUN_HANDOVER_SECONDS with "no worker" (docs/performance.md, "Production shape").
        starting = asyncio.ensure_future(runs.start_handed_over(message))
        self.starting.add(starting)
        starting.add_done_callback(self._started)

    def _started(self, starting: asyncio.Future) -> None:
        self.starting.discard(starting)
        if not starting.cancelled() and starting.exception() is not None:
            # Untaken, the handover's watch fails the run; taken, it is interrupted once its heartbeat is seen missing.
            log.error("a run could not be started", exc_info=starting.exception())


def prepare_process() -> None:
    """Done when the worker starts its first run: channels' runworker offers no earlier hook, and before it there
    is nothing to keep. The process is tuned as agentweb.serve tunes a Daphne process (agentweb/tuning.py). Should
    channels make a second RunWorker (after one failed), it is done again: the same settings, and the SIGTERM handler
    put in the first one's place."""
    tune_process()
    interrupt_runs_on_stop()


def stop_mcp_servers() -> None:
    mcp_connections().shutdown()


def interrupt_runs_on_stop() -> None:
    """On SIGTERM (systemd, Docker, a deploy) the runs streaming in this worker write what they have and become
    interrupted (chat.runs.interrupt_live_runs); then the process ends as SIGTERM would have ended it."""
    loop = asyncio.get_running_loop()

    async def stop() -> None:
        try:
            await runs.interrupt_live_runs()
        finally:
            # SIGTERM's default action skips atexit: the MCP connections (stdio servers' processes) close first.
            await asyncio.to_thread(stop_mcp_servers)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    loop.add_signal_handler(signal.SIGTERM, lambda: asyncio.ensure_future(stop()))
