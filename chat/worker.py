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

from . import runs


class RunWorker(AsyncConsumer):
    async def run_launch(self, message):
        interrupt_runs_on_stop()
        await runs.start_handed_over(message)


_stop_handled = False


def interrupt_runs_on_stop() -> None:
    """On SIGTERM (systemd, Docker, a deploy) the runs streaming in this worker write what they have and become
    interrupted (chat.runs.interrupt_live_runs); then the process ends as SIGTERM would have ended it. Installed
    when the worker starts its first run: channels' runworker offers no earlier hook, and before it there is
    nothing to keep."""
    global _stop_handled
    if _stop_handled:
        return
    _stop_handled = True
    loop = asyncio.get_running_loop()

    async def stop() -> None:
        try:
            await runs.interrupt_live_runs()
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    loop.add_signal_handler(signal.SIGTERM, lambda: asyncio.ensure_future(stop()))
