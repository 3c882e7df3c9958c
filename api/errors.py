"""The HTTP status of each refusal code the run layer gives (chat/error_codes.py: one table, exception → code and
message, shared with the websocket), for both APIs."""

from __future__ import annotations

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
