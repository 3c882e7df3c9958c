"""`record`: the one way an event is written. Bounded and cleaned here, so that no caller's input can make the
write fail; what happens when the database fails depends on the action (audit/actions.py FAIL_OPEN)."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import DatabaseError, models, transaction

from . import Target
from .actions import FAIL_OPEN, Action
from .models import LABEL_LENGTH, Event

log = logging.getLogger("agentweb.audit")

#: A detail holds this many facts at most, each a short scalar.
DETAIL_ITEMS = 12
DETAIL_TEXT = 200
#: Words that never name a fact the log keeps: a detail key holding one of them is dropped (and the drop logged).
SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "token",
        "key",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "args",
        "arguments",
        "message",
        "code",
    }
)


def record(
    action: Action,
    *,
    actor=None,
    actor_name: str = "",
    target: models.Model | Target | None = None,
    ip: str | None = None,
    detail: Mapping[str, Any] | None = None,
    at: datetime | None = None,
    admin_log_entry: int | None = None,
) -> Event | None:
    """Write one event. `actor`: the signed-in user who did it (None: the system, a command, or nobody signed in);
    `target`: a model instance or a `Target`; `ip`: the client's address as the server saw it (an unreadable one is
    left out); `detail`: a few facts, cleaned by `clean_detail`.

    A fail-closed action (every one not in FAIL_OPEN) writes in the caller's transaction and raises when the database
    does: call it inside the action's `transaction.atomic()`, so the action is undone with it. A fail-open action
    writes in a savepoint of its own and, when that fails, logs the error and returns None."""
    action = Action(action)
    row = Event(
        action=action,
        actor=actor if getattr(actor, "pk", None) is not None else None,
        actor_name=(actor_name or (actor.get_username() if getattr(actor, "pk", None) is not None else ""))[:150],
        ip=clean_ip(ip),
        detail=clean_detail(detail or {}),
        admin_log_entry=admin_log_entry,
        **target_fields(target),
    )
    if at is not None:
        row.at = at
    if action not in FAIL_OPEN:
        row.save(force_insert=True)
        return row
    try:
        with transaction.atomic():  # a savepoint: its failure leaves the caller's transaction usable
            row.save(force_insert=True)
    except DatabaseError:
        log.exception("audit: the %s event could not be written; the action went on", action.value)
        return None
    return row


def target_fields(target: models.Model | Target | None) -> dict[str, str]:
    if target is None:
        return {}
    if isinstance(target, Target):
        kind, pk, label = target
    else:
        kind, pk, label = target._meta.label_lower, target.pk, str(target)
    return {
        "target_type": str(kind)[:64],
        "target_id": "" if pk is None else str(pk)[:64],
        "target_label": str(label)[:LABEL_LENGTH],
    }


def clean_ip(ip: str | None) -> str | None:
    if not ip:
        return None
    try:
        address = ipaddress.ip_address(str(ip)[:64])
    except ValueError:
        return None
    # An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d: kept as the IPv4 address it is.
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


def clean_detail(detail: Mapping[str, Any]) -> dict[str, Any]:
    """At most DETAIL_ITEMS facts with short keys and scalar values (text cut to DETAIL_TEXT characters); a key that
    names a secret, a token, arguments or a person's text is dropped whatever its value: the log never holds one."""
    kept: dict[str, Any] = {}
    for key, value in detail.items():
        key = str(key)[:40]
        if set(key.lower().replace("-", "_").split("_")) & SECRET_WORDS:
            log.warning("audit: a detail named %r was dropped (the log keeps no secrets or arguments)", key)
            continue
        if value is None or isinstance(value, bool | int | float):
            kept[key] = value
        else:
            kept[key] = str(value)[:DETAIL_TEXT]
        if len(kept) == DETAIL_ITEMS:
            break
    return kept


def client_ip(request) -> str | None:
    """The address the request came from. Behind the proxy, Daphne's --proxy-headers has put the client's address
    there (docs/deploy.md); nothing here reads a forwarding header a client could write itself."""
    if request is None:
        return None
    return clean_ip(request.META.get("REMOTE_ADDR"))


def socket_ip(scope) -> str | None:
    """The address a websocket came from (its ASGI scope's client, set as for a request)."""
    client = (scope or {}).get("client")
    return clean_ip(client[0]) if client else None
