"""The one interface every model provider implements."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from .types import ChatMessage, StreamEvent, ToolDefinition


class Provider(Protocol):
    #: A short human label for the model, e.g. "qwen3 · http://localhost:11434/v1".
    label: str
    #: True only for the offline demo model; the UI labels it as such.
    is_demo: bool

    def stream(self, messages: list[ChatMessage], tools: list[ToolDefinition]) -> AsyncIterator[StreamEvent]:
        """Send the conversation and yield neutral stream events until the response ends.

        A provider that can give a structured final answer also takes `answer=AnswerFormat(...)`
        (providers/structured.py): the step's text is then the JSON answer. Callers pass it only when set.

        Raises ModelError when the server cannot be reached or answers with an error.
        Every started tool call is closed by a ToolCallEnd before Finish.
        """
        ...
