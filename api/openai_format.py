"""OpenAI's chat-completions format, read and written: a request checked before anything is written, and the
bodies, chunks and errors a client of OpenAI's API expects (https://platform.openai.com/docs/api-reference/chat)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from chat.text import unstorable_text

from .errors import openai_error

#: The roles a request's history may hold; the last message must be the person's.
ROLES = ("system", "user", "assistant")


class Refused(Exception):
    """A request refused with OpenAI's error shape: `status`, `message`, `type`, `code`, `param`."""

    def __init__(self, status: int, message: str, *, code: str, param: str | None = None, kind: str = ""):
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param
        self.kind = kind or ("invalid_request_error" if status < 500 else "server_error")

    def body(self) -> dict[str, Any]:
        return openai_error(self.message, code=self.code, kind=self.kind, param=self.param)


@dataclass(frozen=True)
class CompletionRequest:
    model: str
    history: list[tuple[str, str]]  # every message before the last, as (role, text)
    content: str  # the last message: the person's, which opens the turn
    stream: bool
    include_usage: bool

    def characters(self) -> int:
        return len(self.content) + sum(len(text) for _, text in self.history)


def parse_request(body: bytes, content_type: str, *, max_messages: int) -> CompletionRequest:
    """The request, checked whole before anything is written (Refused otherwise)."""
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise Refused(415, "Send the request as JSON (Content-Type: application/json).", code="unsupported_media_type")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise Refused(400, f"The body is not valid JSON: {error}", code="invalid_json") from None
    if not isinstance(data, dict):
        raise Refused(400, "The body must be a JSON object.", code="invalid_request")
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise Refused(
            400, "model: required, a string (GET /v1/models lists them).", code="invalid_request", param="model"
        )
    if data.get("tools") or data.get("functions"):
        raise Refused(
            400,
            "Client-side tools are not supported: the agent's own tools run on the server (approvals included).",
            code="client_tools_not_supported",
            param="tools",
        )
    if data.get("n", 1) != 1:
        raise Refused(400, "n: only 1 is supported.", code="invalid_request", param="n")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Refused(400, "messages: required, a non-empty list.", code="invalid_request", param="messages")
    if len(messages) > max_messages:
        raise Refused(
            400,
            f"messages: at most {max_messages} messages in one request.",
            code="context_length_exceeded",
            param="messages",
        )
    turns = [_message(index, message) for index, message in enumerate(messages)]
    role, content = turns[-1]
    if role != "user" or not content.strip():
        raise Refused(400, "messages: the last message must be the user's, with text.", code="invalid_request")
    stream = data.get("stream", False)
    options = data.get("stream_options") or {}
    if not isinstance(stream, bool) or not isinstance(options, dict):
        raise Refused(400, "stream: a boolean; stream_options: an object.", code="invalid_request", param="stream")
    return CompletionRequest(
        model=model,
        history=turns[:-1],
        content=content,
        stream=stream,
        include_usage=bool(options.get("include_usage")),
    )


def _message(index: int, message: Any) -> tuple[str, str]:
    where = f"messages[{index}]"
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        roles = ", ".join(ROLES)
        raise Refused(400, f"{where}: an object whose role is one of {roles}.", code="invalid_request", param=where)
    content = message.get("content")
    if isinstance(content, list):  # content parts: the text ones, joined
        if not all(isinstance(part, dict) and part.get("type") == "text" for part in content):
            raise Refused(400, f"{where}.content: only text parts are supported.", code="invalid_request", param=where)
        content = "".join(str(part.get("text", "")) for part in content)
    if content is None and message["role"] == "assistant":
        content = ""
    if not isinstance(content, str):
        raise Refused(400, f"{where}.content: a string or a list of text parts.", code="invalid_request", param=where)
    if unstorable_text(content) is not None:
        raise Refused(400, f"{where}.content: holds characters that cannot be stored.", code="invalid_request")
    return message["role"], content


# --- what goes back ---------------------------------------------------------------------------------------------------


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def usage_of(totals: dict[str, Any] | None) -> dict[str, int] | None:
    if not totals:
        return None
    prompt, completion = int(totals.get("input_tokens") or 0), int(totals.get("output_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def chunk(
    ident: str, model: str, *, delta: dict | None = None, finish: str | None = None, usage=None, choices=True
) -> str:
    """One `chat.completion.chunk`, as an SSE `data:` line."""
    body: dict[str, Any] = {"id": ident, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if choices else []
    if usage is not None or not choices:
        body["usage"] = usage
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def completion(ident: str, model: str, content: str, finish: str, usage: dict | None) -> dict[str, Any]:
    return {
        "id": ident,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def error_event(refused: Refused) -> str:
    return f"data: {json.dumps(refused.body(), ensure_ascii=False)}\n\n"
