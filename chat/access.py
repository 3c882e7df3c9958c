"""Every id a client sends goes through here: another user's id and a random one get the same answer."""

from __future__ import annotations

import uuid

from .models import Thread


class NotFound(Exception):
    """The object does not exist, or is not the user's: the two are never told apart."""


def parse_uuid(value: object) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        raise NotFound from None


def get_thread_for_user(user, thread_id: object) -> Thread:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        raise NotFound
    try:
        return Thread.objects.get(id=parse_uuid(thread_id), owner=user)
    except Thread.DoesNotExist:
        raise NotFound from None


def current_user(session_key: str | None):
    """The user whose session `session_key` still is, re-read now: None once they logged out, their session
    ended, their password changed or their account was deactivated. An open websocket asks this per action."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, load_backend
    from django.utils.crypto import constant_time_compare

    if not session_key:
        return None
    # A session that ended (logged out, expired, never was) reads as empty: no user in it.
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    user_id, backend_path = store.get(SESSION_KEY), store.get(BACKEND_SESSION_KEY)
    if user_id is None or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    user = load_backend(backend_path).get_user(user_id)
    if user is None or not user.is_active:
        return None
    if not constant_time_compare(store.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash()):
        return None
    return user
