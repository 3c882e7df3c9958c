"""Context strategies: what part of a thread's history a run sends the model.

- `trim` (the default, as always): the whole history, trimmed to the model's window by the context budget
  (providers/budget.py `ContextBudget.fit`, at every model call).
- `last_n`: the system prompt and the last N turns (a turn: a user message and everything after it until the next
  one); still trimmed to the window when they do not fit.
- `summarise`: once the history passes `share` of the window, the older turns (all but the last `keep_turns`) are
  summarised by a model (chat/summaries.py) into a summary kept on the thread; requests then carry the summary as a
  system note and the turns after it, trimmed to the window as ever. When that history grows past the share again,
  a new summary (of the previous one and the turns since) takes its place.

Plain Python, no Django: the run layer applies a strategy to the history it loaded before the run's first model
request (chat/runs/execute.py); the budget's trimming goes on at each call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .budget import estimate
from .types import ChatMessage, ToolDefinition

STRATEGIES = ("trim", "last_n", "summarise")
DEFAULT_LAST_N = 10
DEFAULT_SHARE = 0.75
DEFAULT_KEEP_TURNS = 2


@dataclass(frozen=True)
class ContextStrategy:
    """How a run's history is cut before it is sent (see the module's docstring)."""

    kind: str = "trim"
    #: last_n: how many turns are kept.
    last_n: int = DEFAULT_LAST_N
    #: summarise: the share of the window (its limit: the window less the answer's reserve) past which older
    #: turns are summarised; how many of the last turns are kept as they are (the current one included); and the
    #: model configuration that summarises (a ModelConfiguration's id, or None: the run's own model).
    share: float = DEFAULT_SHARE
    keep_turns: int = DEFAULT_KEEP_TURNS
    summary_model: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in STRATEGIES:
            raise ValueError(f"Unknown context strategy {self.kind!r}; use one of: {', '.join(STRATEGIES)}.")

    @classmethod
    def from_mapping(cls, values: dict[str, Any] | None) -> ContextStrategy:
        """From data (an agent's field, settings): {"kind": "last_n", "last_n": 6}, {"kind": "summarise", "share":
        0.6, "model": "3"}; None or {} is `trim`."""
        values = dict(values or {})
        if "model" in values:
            values["summary_model"] = values.pop("model")
        if values.get("summary_model") is not None:
            values["summary_model"] = str(values["summary_model"])
        known = {"kind", "last_n", "share", "keep_turns", "summary_model"}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"Unknown context strategy field(s): {', '.join(sorted(unknown))}.")
        return cls(**values)


def split_turns(messages: Sequence[ChatMessage]) -> tuple[list[ChatMessage], list[list[ChatMessage]]]:
    """The system messages the history starts with, and its turns: each starts at a user message and runs until the
    next. Anything between the system messages and the first user message belongs to the first turn."""
    head: list[ChatMessage] = []
    index = 0
    while index < len(messages) and messages[index].role == "system":
        head.append(messages[index])
        index += 1
    turns: list[list[ChatMessage]] = []
    for message in messages[index:]:
        if message.role == "user" or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return head, turns


def last_turns(messages: Sequence[ChatMessage], n: int) -> list[ChatMessage]:
    """The system messages the history starts with and its last `n` turns (at least one)."""
    head, turns = split_turns(messages)
    return head + [m for turn in turns[-max(n, 1) :] for m in turn]


def needs_summary(
    messages: Sequence[ChatMessage],
    definitions: Sequence[ToolDefinition],
    *,
    limit: int,
    share: float,
    protocol: str = "native",
) -> bool:
    """Whether the history (as it would be sent) has passed `share` of `limit` tokens."""
    return estimate(messages, definitions, protocol) > share * limit


@dataclass(frozen=True)
class SummaryCut:
    """Where a history is cut for a summary: the turns to summarise (`older`), the index in the history of the first
    message kept (`keep_from`), and how many turns are kept."""

    older: list[ChatMessage]
    keep_from: int


def summary_cut(messages: Sequence[ChatMessage], keep_turns: int) -> SummaryCut | None:
    """The older turns of `messages` (all but the last `keep_turns`, at least one kept), or None when there are none
    to summarise."""
    head, turns = split_turns(messages)
    keep = max(keep_turns, 1)
    if len(turns) <= keep:
        return None
    older = [m for turn in turns[:-keep] for m in turn]
    return SummaryCut(older, len(head) + len(older))


SUMMARY_INSTRUCTIONS = (
    "You summarise the earlier part of a conversation between a user and an AI assistant that uses tools, so that "
    "the assistant can go on without it. Keep what matters later: the user's goals, questions and preferences, "
    "facts and figures found (with tool results that were relied on), decisions and open points. Write plain "
    "prose or short bullet points, in the conversation's language, at most about 300 words. Do not address the "
    "user; do not add anything that was not said."
)


def summary_request(older: Sequence[ChatMessage], previous: str = "") -> list[ChatMessage]:
    """The messages a summarising model is sent: its instructions, then (as one user message) the previous summary,
    if any, and the older turns written out as a transcript."""
    parts: list[str] = []
    if previous:
        parts.append(f"Summary so far:\n{previous}\n")
    parts.append("Conversation to summarise:")
    for message in older:
        if message.role == "system":
            parts.append(f"[note] {message.content}")
        elif message.role == "tool":
            status = " (error)" if message.status == "error" else ""
            parts.append(f"[tool result {message.name or ''}{status}] {message.content}")
        else:
            text = message.content
            for call in message.tool_calls:
                text += f"\n[calls {call.name} with {call.raw if call.raw is not None else call.args}]"
            parts.append(f"[{message.role}] {text}")
    parts.append("\nWrite the summary now.")
    return [
        ChatMessage(role="system", content=SUMMARY_INSTRUCTIONS),
        ChatMessage(role="user", content="\n".join(parts)),
    ]
