"""A conversation that no longer fits the model's context: recognising a server that says so, and what to tell a person.

Servers say it in their own words: OpenAI and llama-cpp-python with the code `context_length_exceeded`,
llama.cpp's server with the type `exceed_context_size_error` and the size in `n_ctx`, vLLM and others only
in the message. Whatever the wording, the person is told the same thing, and what they can do about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ADVICE = (
    "Start a new chat, or edit the last message to make it shorter. To keep long chats going, give the model a "
    "larger context on its server (llama.cpp: -c, Ollama: num_ctx) and set the model's context window in the "
    "admin so that the oldest messages are left out."
)
_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "model_context_window_exceeded"})
#: Messages that say the context is exceeded, with the context's size where they give it.
_SIZE_PATTERNS = (
    re.compile(r"maximum context length is (\d+)", re.I),  # OpenAI, vLLM, llama-cpp-python
    re.compile(r"available context size \((\d+) tokens\)", re.I),  # llama.cpp
    re.compile(r"max(?:imum)? context size \((\d+) tokens\)", re.I),  # llama.cpp, without context shift
    re.compile(r"exceeds? context window of (\d+)", re.I),  # llama-cpp-python's own check
    re.compile(r"prompt is too long: \d+ tokens > (\d+)", re.I),  # Anthropic
)
_WORDING = re.compile(r"context (?:length|size|window)|prompt is too long|too many tokens", re.I)


@dataclass(frozen=True)
class ContextFull:
    #: The model's context in tokens, when the server said it.
    tokens: int | None = None

    def message(self) -> str:
        return context_full_message(self.tokens)


def context_full_message(tokens: int | None) -> str:
    size = f" ({tokens} tokens)" if tokens else ""
    return f"This conversation no longer fits the model's context{size}. {ADVICE}"


#: The share of a filled context above which the conversation, not the answer, is what filled it.
CONVERSATION_SHARE = 0.75
OUTPUT_LIMIT_ADVICE = (
    "Set the model's max output tokens in the admin (for example 1024, well under its context) so that its answers "
    "stop in time."
)


def context_filled_message(prompt_tokens: int | None, answer_tokens: int | None, output_limit: int | None) -> str:
    """An answer that stopped at the end of the model's context (not at an output limit) fails the run with this.

    Two cases need different help: the conversation itself takes (nearly) all the context: shorten it or start a new
    chat (context_full_message); or a short conversation left room, and the answer ran on into the end of the context
    because no output limit was set (`output_limit` None) or one larger than the room left: set one. Without the
    server's counts the two cannot be told apart, and both are said."""
    total = (prompt_tokens or 0) + (answer_tokens or 0)
    why = (
        "no output limit is set for this model"
        if output_limit is None
        else f"its output limit ({output_limit} tokens) is larger than the room the context had left"
    )
    if prompt_tokens is None or answer_tokens is None:
        unknown = f"If the conversation is short, the answer filled the context: {why}. {OUTPUT_LIMIT_ADVICE}"
        return f"{context_full_message(total or None)} {unknown}"
    if prompt_tokens >= CONVERSATION_SHARE * total:
        return context_full_message(total)
    return (
        f"The answer filled the model's context ({total} tokens: {prompt_tokens} of conversation, {answer_tokens} of "
        f"answer) and was cut off there, because {why}. {OUTPUT_LIMIT_ADVICE} The conversation itself still fits."
    )


def context_exceeded(payload: Any, text: str) -> ContextFull | None:
    """What an error response (its JSON `payload`, or None, and its human `text`) says about the context."""
    error = payload.get("error") if isinstance(payload, dict) else None
    fields = error if isinstance(error, dict) else payload if isinstance(payload, dict) else {}
    coded = any(str(fields.get(key) or "") in _CODES for key in ("code", "type"))
    size = next((int(m.group(1)) for p in _SIZE_PATTERNS if (m := p.search(text or ""))), None)
    if not coded and size is None and not (_WORDING.search(text or "") and "exceed" in (text or "").lower()):
        return None
    n_ctx = fields.get("n_ctx")
    if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0:
        size = n_ctx
    return ContextFull(size)
