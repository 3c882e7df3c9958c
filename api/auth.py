"""Who a request from a program is: `Authorization: Bearer <key>`, and nothing else (no session cookie in its place).

A key acts as its person: the same tools, agents, models, budget and rate limits. A missing, unknown, expired or
revoked key is refused with 401 and a JSON error (each API gives the error its own shape), never a login page."""

from __future__ import annotations

from django.http import HttpRequest

from chat.caller import Caller
from chat.models import Source

from .models import ApiKey


class KeyRefused(Exception):
    """The request carries no usable API key; the message says why, for the person reading the error."""


def bearer_key(request: HttpRequest) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return key.strip()


def authenticate(request: HttpRequest) -> ApiKey:
    """The request's API key (its person at `.user`), its use noted; KeyRefused when there is none usable. A session
    cookie is never looked at: a page's sign-in cannot stand in for a key."""
    key = bearer_key(request)
    if key is None:
        raise KeyRefused("Send an API key: Authorization: Bearer <key> (make one on your settings page).")
    row = ApiKey.matching(key)
    if row is None:
        raise KeyRefused("This API key is not valid.")
    refusal = row.refusal()
    if refusal is not None:
        raise KeyRefused(refusal)
    row.note_use()
    return row


def still_usable(key_id: int):
    """The person of key `key_id` if the key may still be used now, else None: re-checked when a run starts."""
    row = ApiKey.objects.select_related("user").filter(pk=key_id).first()
    return None if row is None or row.refusal() is not None else row.user


def caller_of(key: ApiKey) -> Caller:
    """A turn opened with `key`: checked again as it is written, marked as the API's, with the key recorded."""
    return Caller(current=lambda: still_usable(key.pk), source=Source.API, api_key_id=key.pk)
