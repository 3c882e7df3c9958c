"""What this process holds of runs (`RunsHere`): the runs that live in it, and the tasks it keeps going for them.

One `RunsHere` for the app's lifetime, made by chat/apps.py and reached with `runs_here()`: nothing about runs is
kept at a module's level, so what a process holds has one owner and one place to look.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.apps import apps

from ..recorder import RunRecorder

if TYPE_CHECKING:
    from .interaction import RunInteraction


@dataclass
class ActiveRun:
    run_id: int
    task: asyncio.Task
    recorder: RunRecorder
    # With several processes: what reads the run's group, where other processes' Stops arrive.
    inbox: asyncio.Task | None = None
    # Its calls' progress and requests for the person's input (chat/runs/interaction.py).
    interaction: RunInteraction | None = None


class RunsHere:
    """The runs of this process and what it keeps going for them, for the app's lifetime."""

    def __init__(self) -> None:
        #: The runs streaming in this process, by thread.
        self.active: dict[uuid.UUID, ActiveRun] = {}
        #: Runs this process stopped before their task started (chat/runs/cancel.py): start_here does not start them.
        self.stopped_before_start: set[int] = set()
        #: Whether the runs a stopped or dead server left have been dealt with since this process started
        #: (chat/runs/recovery.py ensure_recovered).
        self.recovered = False
        #: Whether the server is stopping cleanly (chat/runs/recovery.py interrupt_live_runs).
        self.stopping = False
        # Tasks started for runs and not awaited by anyone (telling tabs how a run ended once Redis is back, watching
        # a handover, starting a handed-over run): the event loop keeps only weak references to tasks.
        self._background: set[asyncio.Future] = set()

    def in_background(self, work: Coroutine[Any, Any, Any] | asyncio.Future) -> asyncio.Future:
        """`work` as a task kept until it is done."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task


def runs_here() -> RunsHere:
    """This process's runs (made by chat/apps.py for the app's lifetime)."""
    return apps.get_app_config("chat").runs_here
