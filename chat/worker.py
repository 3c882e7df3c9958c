"""`manage.py runworker agentweb-runs`: a process that runs the runs Daphne processes hand over.

With AGENTWEB_RUN_WORKERS on, a Daphne process stores the person's message, opens the run, and sends it
to the `agentweb-runs` channel (chat/runs/start.py launch_run); one worker takes it and runs it to its end. The
run then outlives the Daphne process, and any number of Daphne processes and workers share the load.
"""

from __future__ import annotations

import asyncio
import os
import signal

from channels.consumer import AsyncConsumer

from agentweb.tuning import tune_process

from . import runs


class RunWorker(AsyncConsumer):
    async def run_launch(self, message):
        prepare_process()
        await runs.start_handed_over(message)


_prepared = False


def prepare_process() -> None:
    """Done when the worker starts its first run: channels' runworker offers no earlier hook, and before it there
    is nothing to keep. The process is tuned as agentweb.serve tunes a Daphne process (agentweb/tuning.py)."""
    global _prepared
    if _prepared:
        return
    _prepared = True
    tune_process()
    interrupt_runs_on_stop()


def stop_mcp_servers() -> None:
    from tools.mcp.manager import default_manager

    default_manager().shutdown()


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
