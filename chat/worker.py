"""`manage.py runworker agentweb-runs`: a process that runs the runs Daphne processes hand over.

With AGENTWEB_RUN_WORKERS on, a Daphne process stores the person's message, opens the run, and sends it
to the `agentweb-runs` channel (chat/runs.py launch_run); one worker takes it and runs it to its end. The
run then outlives the Daphne process, and any number of Daphne processes and workers share the load.
"""

from __future__ import annotations

from channels.consumer import AsyncConsumer

from . import runs


class RunWorker(AsyncConsumer):
    async def run_launch(self, message):
        await runs.start_handed_over(message)
