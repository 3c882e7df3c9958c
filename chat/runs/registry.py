"""The runs that live in this process (ACTIVE_RUNS), and the group through which other processes reach one."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..recorder import RunRecorder

if TYPE_CHECKING:
    from .interaction import RunInteraction

# --- live runs of this process --------------------------------------------------------------


@dataclass
class ActiveRun:
    run_id: int
    task: asyncio.Task
    recorder: RunRecorder
    # With several processes: what reads the run's group, where other processes' Stops arrive.
    inbox: asyncio.Task | None = None
    # Its calls' progress and requests for the person's input (chat/runs/interaction.py).
    interaction: RunInteraction | None = None


ACTIVE_RUNS: dict[uuid.UUID, ActiveRun] = {}


# Runs this process stopped before their task started (see cancel): start_here does not start them.
stopped_before_start: set[int] = set()
