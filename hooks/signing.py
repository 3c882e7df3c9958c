"""The signature of a webhook's body, both ways (docs/background.md, "Wire formats"): `X-Agentweb-Timestamp: <unix
seconds>` and `X-Agentweb-Signature: sha256=<hex>`, the HMAC-SHA256 of `<timestamp>.<raw body>` under the secret."""

from __future__ import annotations

import hashlib
import hmac
import time

TIMESTAMP_HEADER = "X-Agentweb-Timestamp"
SIGNATURE_HEADER = "X-Agentweb-Signature"
DELIVERY_HEADER = "X-Agentweb-Delivery"
#: How far a delivery's timestamp may be from now, either way, in seconds.
TOLERANCE = 300


def signature(secret: str, timestamp: int | str, body: bytes) -> str:
    """The header's value for `body` sent at `timestamp`."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signed_headers(secret: str, body: bytes, now: float | None = None) -> dict[str, str]:
    """The headers an outgoing webhook carries."""
    timestamp = int(time.time() if now is None else now)
    return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: signature(secret, timestamp, body)}


class BadSignature(Exception):
    """Why a delivery's signature does not hold (missing, malformed, stale, wrong); the message says which."""


def verify(secret: str, timestamp: str | None, given: str | None, body: bytes, now: float | None = None) -> None:
    """BadSignature unless `given` signs `body` at `timestamp` under `secret`, and `timestamp` is within TOLERANCE."""
    if not timestamp or not given:
        raise BadSignature(f"Sign the body: send {TIMESTAMP_HEADER} and {SIGNATURE_HEADER}.")
    if not timestamp.isdigit():
        raise BadSignature(f"{TIMESTAMP_HEADER} must be unix seconds.")
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE:
        raise BadSignature(f"{TIMESTAMP_HEADER} is more than {TOLERANCE} seconds away from now.")
    if not hmac.compare_digest(signature(secret, timestamp, body), given.strip()):
        raise BadSignature("The signature does not match the body.")
