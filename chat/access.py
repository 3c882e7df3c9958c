"""Every id a client sends goes through here: another user's id and a random one get the same answer."""

from __future__ import annotations

import uuid
from contextlib import suppress
from dataclasses import dataclass

from django.core.exceptions import ValidationError

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
    sign_in = session_sign_in(session_key)
    if sign_in is None:
        return None
    user = signed_in_user(sign_in)
    return user if sign_in.holds_for(user) else None


def signed_in_user(sign_in: SignIn):
    """The user a sign-in names, as its backend reads them (None when it no longer knows them)."""
    from django.contrib.auth import load_backend

    return load_backend(sign_in.backend).get_user(sign_in.user_id)


def signed_in_thread(session_key: str | None, user, thread_id: object) -> tuple:
    """`user`, re-read as current_user does (SignedOut once their session ended), and their thread: the thread's
    row brings its owner's, so the session and that row are two queries where they were three."""
    sign_in = session_sign_in(session_key)
    if sign_in is None or sign_in.user_id != user.pk:
        raise SignedOut
    thread = None
    if sign_in.backend == MODEL_BACKEND:  # its get_user is this read of the user's row, is_active checked below
        # None when not found: the user's own row tells below whether they are signed out instead.
        with suppress(NotFound, Thread.DoesNotExist):
            thread = Thread.objects.select_related("owner").get(id=parse_uuid(thread_id), owner_id=user.pk)
    current = thread.owner if thread is not None else signed_in_user(sign_in)
    if not sign_in.holds_for(current):
        raise SignedOut
    return current, thread if thread is not None else get_thread_for_user(current, thread_id)


class SignedOut(Exception):
    """The socket's session ended (logged out, expired, password changed, deactivated): nothing was done."""


MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


@dataclass(frozen=True)
class SignIn:
    """What a session holds of who signed in with it."""

    user_id: object
    backend: str
    auth_hash: str

    def holds_for(self, user) -> bool:
        """The session still signs `user` in: same user, active, password unchanged since the sign-in."""
        return user is not None and user.pk == self.user_id and user.is_active and self.hash_matches(user)

    def hash_matches(self, user) -> bool:
        """The user's password is the one they signed in with (Django's session auth hash)."""
        from django.utils.crypto import constant_time_compare

        return constant_time_compare(self.auth_hash, user.get_session_auth_hash())


def session_sign_in(session_key: str | None) -> SignIn | None:
    """The session's sign-in as the database holds it now; None for a session that ended (logged out, expired,
    never was: it reads as empty) or names a backend no longer configured."""
    from importlib import import_module

    from django.conf import settings

    if not session_key:
        return None
    return sign_in_from(import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key))


def session_sign_ins(session_keys: list[str | None]) -> dict[str, SignIn | None]:
    """session_sign_in of each key; with Django's database sessions, one query for all of them."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.sessions.backends import db
    from django.utils import timezone

    keys = {key for key in session_keys if key}
    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    if store_class is not db.SessionStore or len(keys) < 2:  # other engines (a cache first, a cookie): as they read
        return {key: session_sign_in(key) for key in keys}
    rows = store_class.get_model_class().objects.filter(session_key__in=keys, expire_date__gt=timezone.now())
    decoder = store_class()
    found = {key: sign_in_from(decoder.decode(data)) for key, data in rows.values_list("session_key", "session_data")}
    return {key: found.get(key) for key in keys}


def sign_in_from(session) -> SignIn | None:
    """The sign-in a session's data holds (a session store or its decoded dict), None when it holds none."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model

    user_id, backend = session.get(SESSION_KEY), session.get(BACKEND_SESSION_KEY)
    if user_id is None or backend not in settings.AUTHENTICATION_BACKENDS:
        return None
    try:
        user_id = get_user_model()._meta.pk.to_python(user_id)
    except ValidationError:
        return None
    return SignIn(user_id, backend, session.get(HASH_SESSION_KEY, ""))
