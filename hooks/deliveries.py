"""A delivery to `POST /hooks/<id>` taken: checked (signature, body, template, replay, rate), then started as a run of
the trigger's owner, marked as the trigger's (Source.TRIGGER).

Refusals write nothing. An unknown trigger id and a wrong signature get the same 401 and the same message, after the
same work (the signature is checked against a stand-in secret when there is no trigger): nobody learns from the
answer, or from its time, which ids exist. 401 rather than 404 for both, because the sender's fix is the same either
way: the address and the secret they were given together."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentweb.secretbox import UnreadableSecret
from api.errors import status_of
from chat import runs
from chat.caller import Caller
from chat.error_codes import REFUSED, client_error
from chat.models import Source

from . import signing, template
from .limits import delivery_limit
from .models import Delivery, Trigger

#: The longest X-Agentweb-Delivery taken; a longer one is refused.
MAX_DELIVERY_ID = 200
#: Checked in the place of a secret when the id names no trigger: the same HMAC work, and a match is refused anyway.
STAND_IN_SECRET = "no trigger has this id"
NOT_SIGNED = "The delivery's signature does not hold for this address."


@dataclass
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] | None = None


def refused(status: int, message: str, code: str, **more: Any) -> Answer:
    return Answer(status, {"error": {"message": message, "code": code, **more}})


@dataclass(frozen=True)
class Posted:
    trigger_id: str
    body: bytes
    timestamp: str | None
    signature: str | None
    delivery_id: str | None


def find(trigger_id: str) -> Trigger | None:
    if len(trigger_id) > 32:
        return None
    return Trigger.objects.select_related("owner").filter(pk=trigger_id).first()


def check_signature(trigger: Trigger | None, posted: Posted) -> Answer | None:
    """None when the delivery is signed with the trigger's secret; else the one 401 (missing, malformed and stale are
    said as such: they hold whatever the id)."""
    secret = trigger.secret if trigger is not None else STAND_IN_SECRET
    if isinstance(secret, UnreadableSecret):  # the keys that encrypted it are gone: the operator must act
        secret, trigger = STAND_IN_SECRET, None
    try:
        signing.verify(secret, posted.timestamp, posted.signature, posted.body)
    except signing.BadSignature as error:
        message = NOT_SIGNED if "does not match" in str(error) else str(error)
        return refused(401, message, "bad_signature")
    if trigger is None:  # only a forger who guessed the stand-in secret gets here
        return refused(401, NOT_SIGNED, "bad_signature")
    return None


def payload_of(body: bytes) -> dict[str, Any] | Answer:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return refused(400, "The body must be a JSON object.", "invalid_request")
    if not isinstance(payload, dict):
        return refused(400, "The body must be a JSON object.", "invalid_request")
    return payload


def earlier(trigger: Trigger, delivery_id: str) -> Answer | None:
    """The answer to a delivery id seen before: the thread it started (or 409 while it is still being started)."""
    found = Delivery.objects.filter(trigger=trigger, delivery_id=delivery_id).first()
    if found is None:
        return None
    if found.thread_id is None and (timezone.now() - found.created_at).total_seconds() < 60:
        return refused(409, "This delivery is still being started; send it again in a moment.", "delivery_in_progress")
    thread = str(found.thread_id) if found.thread_id else None
    return Answer(202, {"thread": thread, "delivery": delivery_id, "replayed": True})


def reserve(trigger: Trigger, delivery_id: str) -> Delivery | None:
    """The delivery's row, made before its turn so that the same id at once runs once; None when it exists."""
    try:
        with transaction.atomic():
            return Delivery.objects.create(trigger=trigger, delivery_id=delivery_id)
    except IntegrityError:
        return None


def owner_if_active(user_id: int):
    """The trigger's owner, re-read as the turn is written: None once deactivated (the delivery is then refused)."""
    return get_user_model().objects.filter(pk=user_id, is_active=True).first()


def started(delivery: Delivery, thread_id) -> None:
    Delivery.objects.filter(pk=delivery.pk).update(thread_id=thread_id)
    Trigger.objects.filter(pk=delivery.trigger_id).update(last_delivery_at=timezone.now())


async def take(posted: Posted) -> Answer:
    """The whole delivery: its answer (202 with the thread, or a refusal having written nothing)."""
    trigger = await database_sync_to_async(find)(posted.trigger_id)
    bad = check_signature(trigger, posted)
    if bad is not None:
        return bad
    payload = payload_of(posted.body)
    if isinstance(payload, Answer):
        return payload
    delivery_id = posted.delivery_id
    if delivery_id is not None:
        delivery_id = delivery_id.strip()
        if not delivery_id or len(delivery_id) > MAX_DELIVERY_ID or not delivery_id.isprintable():
            message = f"{signing.DELIVERY_HEADER} has 1 to {MAX_DELIVERY_ID} printable characters."
            return refused(400, message, "invalid_request")
        replay = await database_sync_to_async(earlier)(trigger, delivery_id)
        if replay is not None:
            return replay
    try:
        prompt = template.render(trigger.prompt, payload)
    except template.MissingField as missing:
        message = f"The payload has no field {missing.field!r}, which the trigger's prompt uses."
        return refused(400, message, "missing_field", field=missing.field)
    except template.BadTemplate as error:
        return refused(500, f"The trigger's prompt template cannot be read: {error}", "bad_template")
    if not prompt.strip():
        return refused(400, "The prompt made from this payload is empty.", "invalid_request")
    if not await delivery_limit().aallow(trigger.pk):
        return refused(429, "Too many deliveries to this trigger; wait a minute.", "rate_limited")
    delivery_id = delivery_id or f"auto-{uuid.uuid4()}"
    row = await database_sync_to_async(reserve)(trigger, delivery_id)
    if row is None:  # the same id, at the same moment
        replay = await database_sync_to_async(earlier)(trigger, delivery_id)
        return replay or refused(409, "This delivery is being started; send it again.", "delivery_in_progress")
    owner_id = trigger.owner_id
    caller = Caller(current=lambda: owner_if_active(owner_id), source=Source.TRIGGER)
    try:
        turn, setup = await runs.begin_turn(
            user=trigger.owner,
            session_key=None,
            thread_id=None,
            content=prompt,
            client_msg_id=uuid.uuid4(),
            agent=trigger.agent_slug or None,
            model=None,
            caller=caller,
        )
    except BaseException as error:
        await database_sync_to_async(Delivery.objects.filter(pk=row.pk).delete)()
        if isinstance(error, runs.SignedOut):
            return refused(403, "The trigger's owner can no longer start runs.", "owner_inactive")
        if isinstance(error, REFUSED):
            said = client_error(error, {"type": "message.send", "agent": trigger.agent_slug, "model": ""})
            return refused(status_of(said.code), said.message, said.code)
        raise
    await database_sync_to_async(started)(row, turn.thread.pk)
    await runs.launch_run(turn, setup=setup)
    return Answer(202, {"thread": str(turn.thread.pk), "delivery": delivery_id})
