"""Neutral shapes shared by every provider, the agent loop and the run glue.

Nothing here knows about Django, HTTP or a particular model server: providers translate
these to and from their wire formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCallRequest:
    """A complete tool call as the model asked for it."""

    id: str
    name: str
    args: dict[str, Any]
    #: A call whose arguments could not be read: what the model wrote (`args` is {} then). Its argument text from a
    #: native tool call (sent back in the call's result: providers/unreadable_calls.py); the whole call from a text
    #: protocol (sent back as written).
    raw: str | None = None


@dataclass(frozen=True)
class ImagePart:
    """An image attached to a user message: its media type (image/png, …) and its bytes in base64."""

    media_type: str
    data: str
    name: str = ""


@dataclass
class ChatMessage:
    role: Role
    content: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    # Tool messages only:
    tool_call_id: str | None = None
    name: str | None = None
    status: Literal["success", "error"] | None = None
    # User messages only: the images attached to it, sent in each provider's wire format (a text tool protocol
    # sends none, and says so in the text).
    images: list[ImagePart] = field(default_factory=list)


@dataclass(frozen=True)
class ToolDefinition:
    """What a model is told about a tool."""

    name: str
    description: str
    parameters: dict[str, Any]


# --- stream events a provider yields -------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStart:
    index: int
    id: str
    name: str


@dataclass(frozen=True)
class ToolCallArgsDelta:
    index: int
    text: str


@dataclass(frozen=True)
class ToolCallEnd:
    """The arguments of call `index` are complete.

    `args` is the decoded object, or None with `error` saying why the raw text is unusable. `written`: for a
    call read from text (hermes, xml) that could not be used, the whole call as the model wrote it there.
    """

    index: int
    id: str
    name: str
    raw: str
    args: dict[str, Any] | None
    error: str | None = None
    written: str | None = None


@dataclass(frozen=True)
class Usage:
    """The tokens of one model call as the server counted them (a count it did not send is None)."""

    input_tokens: int | None = None
    output_tokens: int | None = None

    def as_dict(self) -> dict[str, int]:
        return {
            k: v
            for k, v in (("input_tokens", self.input_tokens), ("output_tokens", self.output_tokens))
            if v is not None
        }


@dataclass(frozen=True)
class Finish:
    """The model finished this response. `reason` is normalised: stop, tool_calls, length, content_filter, other."""

    reason: str


StreamEvent = TextDelta | ReasoningDelta | ToolCallStart | ToolCallArgsDelta | ToolCallEnd | Usage | Finish


class ModelError(Exception):
    """The model server could not give an answer. The message is shown to the person as it is:
    it names the server and what it answered, and never contains an API key."""
