"""The run layer's synchronous database operations, by concern: opening turns (turns.py), what a run writes as it
goes (steps.py), reading a thread back (snapshot.py), decisions on waiting calls (approvals.py), which process
runs a run (owners.py). Async code calls them through database_sync_to_async (chat/runs/), never directly; raw
SQL lives in chat/queries.py."""

from .approvals import (
    AlreadyDecided,
    DecisionNotOffered,
    approved_calls,
    cancel_waiting_run,
    claim_waiting_run,
    decide_tool_call,
    get_tool_call_for_user,
    grants_groups_and_stamp,
)
from .snapshot import build_snapshot, history_and_last_order, load_history, tool_call_view
from .steps import (
    STOPPED_SERVER_ERROR,
    add_run_note,
    complete_assistant_message,
    create_assistant_message,
    discard_message,
    finish_run,
    heartbeat,
    interrupt_stale_runs,
    next_order,
    pause_run,
    record_tool_calls,
    save_partial_content,
)
from .turns import (
    NothingToFollowUp,
    RunActive,
    TurnStart,
    list_threads,
    search_messages,
    set_thread_model,
    start_followup_run,
    start_turn,
    thread_model_info,
)

__all__ = [
    "STOPPED_SERVER_ERROR",
    "AlreadyDecided",
    "DecisionNotOffered",
    "NothingToFollowUp",
    "RunActive",
    "TurnStart",
    "add_run_note",
    "approved_calls",
    "build_snapshot",
    "cancel_waiting_run",
    "claim_waiting_run",
    "complete_assistant_message",
    "create_assistant_message",
    "decide_tool_call",
    "discard_message",
    "finish_run",
    "get_tool_call_for_user",
    "grants_groups_and_stamp",
    "heartbeat",
    "history_and_last_order",
    "interrupt_stale_runs",
    "list_threads",
    "load_history",
    "next_order",
    "pause_run",
    "record_tool_calls",
    "save_partial_content",
    "search_messages",
    "set_thread_model",
    "start_followup_run",
    "start_turn",
    "thread_model_info",
    "tool_call_view",
]
