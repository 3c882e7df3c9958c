"""The HTTP status of each refusal code the run layer gives (chat/error_codes.py: one table, exception → code and
message, shared with the websocket), for both APIs."""

from __future__ import annotations

HTTP_STATUS: dict[str, int] = {
    "bad_frame": 400,
    "invalid_request": 400,
    "invalid_args": 400,
    "invalid_input": 400,
    "unknown_tool": 400,
    "images_not_supported": 400,
    "context_length_exceeded": 400,
    "unauthenticated": 401,
    "not_found": 404,
    "model_not_found": 404,
    "run_active": 409,
    "already_decided": 409,
    "not_allowed": 409,
    "unsupported_media_type": 415,
    "rate_limited": 429,
    "budget_exhausted": 429,
    "unavailable": 503,
}


def status_of(code: str) -> int:
    return HTTP_STATUS.get(code, 400)
