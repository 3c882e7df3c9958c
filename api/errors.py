"""The HTTP status of each refusal code the run layer gives (chat/error_codes.py: one table, exception → code and
message, shared with the websocket), for both APIs; and each API's error body, one shape each (docs/api.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse

HTTP_STATUS: dict[str, int] = {
    "bad_frame": 400,
    "bad_request": 400,
    "invalid_request": 400,
    "context_length_exceeded": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "model_not_found": 404,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
    "images_not_supported": 422,
    "unknown_tool": 422,
    "invalid_args": 422,
    "invalid_input": 422,
    "run_active": 409,
    "already_decided": 409,
    "not_allowed": 409,
    "no_active_run": 409,
    "rate_limited": 429,
    "too_many_streams": 429,
    "budget_exhausted": 429,
    "unavailable": 503,
}


def status_of(code: str) -> int:
    return HTTP_STATUS.get(code, 400)


def run_api_error(code: str, message: str) -> dict[str, Any]:
    """The run API's error body (/api/v1/)."""
    return {"error": {"code": code, "message": message}}


def openai_error(message: str, *, code: str, kind: str, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error body (/v1/): `type` is OpenAI's kind of error."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def too_large_shapes() -> tuple[tuple[str, Callable[[str], dict[str, Any]]], ...]:
    """(path prefix, the body of a 413 there) for each API: a body over its limit is refused before the app sees it
    (agentweb/request_limits.py), in the API's own shape; the rest of the app answers `{"error": message}`."""
    too_large = "payload_too_large"
    openai_prefix = reverse("openai_models").removesuffix("models")
    run_api_prefix = reverse("run_api:openapi-json").removesuffix("openapi.json")
    return (
        (openai_prefix, lambda message: openai_error(message, code=too_large, kind="invalid_request_error")),
        (run_api_prefix, lambda message: run_api_error(too_large, message)),
    )
