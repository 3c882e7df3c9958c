"""A person's API keys: the rules for making one (its expiry, how many), listing them and finding one to revoke,
shared by the settings page (api/keys_views.py), the admin (api/admin.py) and `manage.py apikeys`."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

import audit

from .models import ApiKey

#: A key's name, at most (the column's).
NAME_LENGTH = ApiKey._meta.get_field("name").max_length
#: A key may last from a day to ten years; no expiry at all is an empty field (or no --expires).
MIN_DAYS, MAX_DAYS = 1, 3650
#: A person's keys still in use (not revoked, not expired) at most: the settings page lists them all.
MAX_LIVE_KEYS = 50
#: The settings page lists a person's newest keys, revoked and expired ones included, up to this many.
LISTED_KEYS = 100


class NoSuchKey(Exception):
    """Not one of this person's keys: someone else's id and a made-up one are refused the same way (404)."""


def issue(user, name: str, *, expires_in_days: int | None, by, ip: str | None = None, via: str) -> tuple[ApiKey, str]:
    """A new key for `user`, made by `by` (the person, an admin, or None: a command) and recorded in the audit log in
    the same transaction: a key is never made unrecorded. Returns the row and the key (shown once)."""
    with transaction.atomic():
        row, key = ApiKey.issue(user, name, expires_in_days=expires_in_days)
        audit.record(
            audit.Action.API_KEY_CREATED,
            actor=by,
            target=row,
            ip=ip,
            detail={"owner": user.get_username(), "via": via, "expires_at": _when(row.expires_at)},
        )
    return row, key


def revoke(rows, *, by, ip: str | None = None, via: str) -> int:
    """Revoke `rows` (the not yet revoked among them), each recorded in the audit log. Returns how many."""
    now = timezone.now()
    count = 0
    with transaction.atomic():
        for row in rows:
            if row.revoked_at is not None:
                continue
            if not ApiKey.objects.filter(pk=row.pk, revoked_at__isnull=True).update(revoked_at=now):
                continue  # revoked meanwhile, by someone else: their revocation is the one recorded
            row.revoked_at = now
            count += 1
            audit.record(
                audit.Action.API_KEY_REVOKED,
                actor=by,
                target=row,
                ip=ip,
                detail={"owner": row.user.get_username(), "via": via},
            )
    return count


def _when(moment) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None


def live_keys(user) -> QuerySet[ApiKey]:
    """`user`'s keys that still work: not revoked, not expired."""
    now = timezone.now()
    return ApiKey.objects.filter(user=user, revoked_at__isnull=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    )


def keys_of(user) -> list[ApiKey]:
    """The keys the settings page lists: the person's own, newest first."""
    return list(ApiKey.objects.filter(user=user).order_by("-created_at", "-id")[:LISTED_KEYS])


def key_of(user, key_id) -> ApiKey:
    """`user`'s own key `key_id`; NoSuchKey for anyone else's, or none."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        raise NoSuchKey
    row = ApiKey.objects.filter(pk=key_id, user=user).first()
    if row is None:
        raise NoSuchKey
    return row


def days_problem(days: int | None) -> str | None:
    """Why a key may not expire after `days`, or None (None days: it does not expire)."""
    if days is not None and not MIN_DAYS <= days <= MAX_DAYS:
        return _("A key expires after %(min)s to %(max)s days (or never: leave it out).") % {
            "min": MIN_DAYS,
            "max": MAX_DAYS,
        }
    return None


def owner_problem(user) -> str | None:
    """Why `user` may not be given a new key now, or None."""
    if not user.is_active:
        return _("The account %(name)s is deactivated: a key of theirs would not work.") % {"name": user.get_username()}
    if live_keys(user).count() >= MAX_LIVE_KEYS:
        return _("%(name)s has %(n)s keys in use already: revoke one first.") % {
            "name": user.get_username(),
            "n": MAX_LIVE_KEYS,
        }
    return None
