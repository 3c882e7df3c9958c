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


DB_SESSIONS = "django.contrib.sessions.backends.db"
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def current_user(session_key: str | None, user_id: object = None):
    """The user whose session `session_key` still is, re-read now: None once they logged out, their session
    ended, their password changed or their account was deactivated. An open websocket asks this per action.

    `user_id`: whom the caller expects (the socket's user). With database sessions and the model backend, the
    session and that user are then read in one statement; the checks are the same."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, load_backend
    from django.utils.crypto import constant_time_compare

    if not session_key:
        return None
    if user_id is not None and settings.SESSION_ENGINE == DB_SESSIONS:
        return _current_user_in_one_statement(session_key, user_id)
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    if not store.exists(session_key):
        return None
    user_id, backend_path = store.get(SESSION_KEY), store.get(BACKEND_SESSION_KEY)
    if user_id is None or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    user = load_backend(backend_path).get_user(user_id)
    if user is None or not user.is_active:
        return None
    if not constant_time_compare(store.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash()):
        return None
    return user


def _current_user_in_one_statement(session_key: str, user_id: object):
    """current_user for database sessions: the expected user's row with the session's data beside it."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model, load_backend
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session
    from django.db.models import Subquery
    from django.utils import timezone
    from django.utils.crypto import constant_time_compare

    User = get_user_model()
    live = Session.objects.filter(session_key=session_key, expire_date__gt=timezone.now())
    row = list(
        User._default_manager.filter(pk=user_id).annotate(_session_data=Subquery(live.values("session_data")[:1]))[:1]
    )
    if not row or row[0]._session_data is None:
        return None
    user = row[0]
    data = SessionStore(session_key=session_key).decode(user._session_data)
    session_user, backend_path = data.get(SESSION_KEY), data.get(BACKEND_SESSION_KEY)
    if session_user is None or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    if str(session_user) != User._meta.pk.value_to_string(user):
        return None
    backend = load_backend(backend_path)
    if backend_path == MODEL_BACKEND:
        if not backend.user_can_authenticate(user):
            return None
    else:  # another backend decides for itself who the session's user is
        user = backend.get_user(session_user)
    if user is None or not user.is_active:
        return None
    if not constant_time_compare(data.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash()):
        return None
    return user
