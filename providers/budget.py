"""The context budget: the history sent to a model is trimmed to fit its context window.

A plain estimate, no tokenizer: about four characters per token, a few tokens per message, the tool
schemas the model is sent, and each image by its size in pixels (providers/image_tokens.py). What is counted
is what is sent: with a text tool protocol (hermes, xml) the tools go into the system prompt as its
instructions, and calls and results travel as text, so those are counted as written
(providers/protocols/prompts.py), not as the native fields they replace.

The system prompt is always kept, and so are the person's last message and the newest step; the oldest
messages go first. An assistant message and the tool results that follow it are one unit, kept or left
out together, and the kept history never starts with a tool result or an assistant message: it starts
with something the person said.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .image_tokens import image_tokens
from .protocols.prompts import PROTOCOLS, call_markup, system_prompt, tool_response
from .types import ChatMessage, ToolDefinition

CHARS_PER_TOKEN = 4
#: Tokens a message costs beyond its text: its role and the wire format's separators.
MESSAGE_OVERHEAD = 4
#: Tokens a tool call or a tool definition costs beyond its JSON.
TOOL_OVERHEAD = 8
#: What is kept free for the answer when the model's output limit is not known.
DEFAULT_RESERVE = 1024


def estimate_text(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_message(message: ChatMessage, protocol: str = "native") -> int:
    if protocol in PROTOCOLS:
        return _estimate_as_text(message, protocol)
    tokens = MESSAGE_OVERHEAD + estimate_text(message.content or "") + estimate_text(message.name or "")
    tokens += sum(image_tokens(image.data) for image in message.images)  # a text protocol sends none
    for call in message.tool_calls:
        arguments = json.dumps(call.args, ensure_ascii=False)
        tokens += TOOL_OVERHEAD + estimate_text(call.id) + estimate_text(call.name) + estimate_text(arguments)
    return tokens


def _estimate_as_text(message: ChatMessage, protocol: str) -> int:
    """A message as a text protocol writes it: a result as a `<tool_response>` block, calls as markup."""
    if message.role == "tool":
        return MESSAGE_OVERHEAD + estimate_text(tool_response(protocol, message))
    if message.role == "assistant" and message.tool_calls:
        calls = "\n".join(call_markup(protocol, call) for call in message.tool_calls)
        return MESSAGE_OVERHEAD + estimate_text(f"{message.content}\n{calls}")
    return MESSAGE_OVERHEAD + estimate_text(message.content or "")


def estimate_tools(definitions: Sequence[ToolDefinition], protocol: str = "native") -> int:
    if not definitions:
        return 0
    if protocol in PROTOCOLS:
        # The instructions and specs the system prompt is given, and a message of their own at most.
        return MESSAGE_OVERHEAD + estimate_text(system_prompt(protocol, list(definitions)))
    return sum(
        TOOL_OVERHEAD
        + estimate_text(d.name)
        + estimate_text(d.description)
        + estimate_text(json.dumps(d.parameters, ensure_ascii=False))
        for d in definitions
    )


def estimate(
    messages: Sequence[ChatMessage], definitions: Sequence[ToolDefinition] = (), protocol: str = "native"
) -> int:
    """The size of a request as `protocol` writes it: "native" (tools in the API's own fields), hermes or xml."""
    return estimate_tools(definitions, protocol) + sum(estimate_message(m, protocol) for m in messages)


@dataclass(frozen=True)
class Fitted:
    messages: list[ChatMessage]
    #: How many messages were left out.
    dropped: int
    #: The estimated size of what is sent, tool schemas included.
    tokens: int


@dataclass
class _Unit:
    """A message and the tool results that follow it: kept or left out as one."""

    messages: list[ChatMessage] = field(default_factory=list)

    @property
    def role(self) -> str:
        return self.messages[0].role

    def tokens(self, protocol: str) -> int:
        return sum(estimate_message(m, protocol) for m in self.messages)


def _units(messages: Sequence[ChatMessage]) -> list[_Unit]:
    units: list[_Unit] = []
    for message in messages:
        if message.role == "tool" and units and units[-1].role != "system":
            units[-1].messages.append(message)
        else:
            units.append(_Unit([message]))
    return units


@dataclass(frozen=True)
class ContextBudget:
    """A model's context window in tokens, and how many of them to keep free for its answer."""

    window: int
    reserve: int = DEFAULT_RESERVE
    #: How the tools, calls and results are written into the request: "native", or a text protocol.
    protocol: str = "native"
    #: The history given to `fit` is the newest part of a longer one, already more than the window holds (the
    #: older messages were not read: chat/store/snapshot.py): the note cannot count what was left out.
    unread: bool = False

    @property
    def limit(self) -> int:
        return self.window - self.reserve

    def fit(self, messages: Sequence[ChatMessage], definitions: Sequence[ToolDefinition] = ()) -> Fitted:
        """The messages to send: all of them when they fit, else without the oldest. Never changes `messages`."""
        used = estimate(messages, definitions, self.protocol)
        if used <= self.limit:
            return Fitted(list(messages), 0, used)
        units = _units(messages)
        last_user = max((i for i, u in enumerate(units) if u.role == "user"), default=None)
        protected = {i for i, u in enumerate(units) if u.role == "system"} | {len(units) - 1}
        if last_user is not None:
            protected.add(last_user)
        dropped: set[int] = set()
        for i, unit in enumerate(units):
            if used <= self.limit:
                break
            if i not in protected:
                dropped.add(i)
                used -= unit.tokens(self.protocol)
        # What is kept starts with something the person said, never with a tool result or an answer.
        for i, unit in enumerate(units):
            if i in dropped or unit.role == "system":
                continue
            if unit.role == "user" or i in protected:
                break
            dropped.add(i)
            used -= unit.tokens(self.protocol)
        if not dropped:
            return Fitted(list(messages), 0, used)
        kept = [m for i, unit in enumerate(units) if i not in dropped for m in unit.messages]
        return Fitted(kept, len(messages) - len(kept), used)

    def note(self, dropped: int) -> str:
        what = "The oldest message was" if dropped == 1 else f"The oldest {dropped} messages were"
        if self.unread:
            what = "The oldest messages were"
        return f"{what} left out to fit the model's context window ({self.window} tokens)."
