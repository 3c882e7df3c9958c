"""Runs as tasks that no websocket owns: start, pause for approval, resume, cancel, retry, continue.

The database is the checkpoint: a run that waits for a person's decision is not a task at all, only
rows; the decision that completes its step starts a new task that resumes it, in whichever process
receives that decision, before or after a restart.

start.py opens runs and starts them here or hands them to a worker; execute.py is a run's task; approvals.py
applies decisions and resumes; cancel.py stops; subscribe.py says what a subscriber is sent first; recovery.py
deals with orphans after a restart and on a clean stop; registry.py holds the runs of this process.
"""

from agents.services import UnknownAgent
from delivery import RUNS_CHANNEL, group_name
from modelconfig.services import UnknownModel

from .approvals import InvalidArguments, NotAvailable, decide
from .cancel import cancel
from .execute import load_toolset
from .interaction import InputRefused, answer_input
from .recovery import ensure_recovered, interrupt_live_runs
from .registry import runs_here
from .start import (
    SignedOut,
    begin_followup,
    begin_turn,
    fail_unlaunched,
    launch_run,
    set_model,
    set_tool,
    start_handed_over,
)
from .subscribe import subscribe_texts

__all__ = [
    "RUNS_CHANNEL",
    "InputRefused",
    "InvalidArguments",
    "NotAvailable",
    "SignedOut",
    "UnknownAgent",
    "UnknownModel",
    "answer_input",
    "begin_followup",
    "begin_turn",
    "cancel",
    "decide",
    "ensure_recovered",
    "fail_unlaunched",
    "group_name",
    "interrupt_live_runs",
    "launch_run",
    "load_toolset",
    "runs_here",
    "set_model",
    "set_tool",
    "start_handed_over",
    "subscribe_texts",
]
