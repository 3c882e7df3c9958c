"""A run worker (chat/worker.py) takes the runs handed to it as they come, whatever its database thread is doing."""

import asyncio
import threading

from asgiref.sync import sync_to_async
from channels.testing import ApplicationCommunicator

from chat import runs, worker


async def test_runs_handed_over_at_once_reach_their_starts_while_the_database_thread_is_busy(monkeypatch):
    """channels' consumers hop to the one database thread before each message; in a worker that thread holds the
    starting runs' reads and writes, so 200 turns sent at once reached their starts over 12 s, one behind another's
    trips, and the last failed as taken by no worker."""
    monkeypatch.setattr(worker, "prepare_process", lambda: None)  # no tuning or signal handler for the test's process
    started = []

    async def start(message):  # what a run's start does is not this test's: only that it is reached
        started.append(message["run"])

    monkeypatch.setattr(runs, "start_handed_over", start)
    release = threading.Event()
    # The database thread is asgiref's one thread-sensitive thread: held here without touching a connection (an earlier
    # test's connection in that thread would be checked, and refused without the django_db mark).
    busy = asyncio.ensure_future(sync_to_async(release.wait, thread_sensitive=True)())
    communicator = ApplicationCommunicator(
        worker.RunWorker.as_asgi(), {"type": "channel", "channel": runs.RUNS_CHANNEL}
    )
    try:
        for run in range(3):
            await communicator.send_input({"type": "run.launch", "run": run})
        for _ in range(200):
            if len(started) == 3:
                break
            await asyncio.sleep(0.01)

        assert started == [0, 1, 2]
    finally:
        release.set()
        await busy
        communicator.stop()
