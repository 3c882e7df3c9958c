"""What websockets read of who is signed in, for many sockets in one trip to the database (agentweb/batched_trip.py).

A socket reads its session and user as it opens, and its session and thread (with the owner's row) as it
subscribes: in a reconnect storm a thousand tabs do both within seconds. Each function here answers every call
waiting at one moment exactly as the one-socket functions of chat/access.py answer one, with one query for the
sessions and one for the threads or users of them all (Django's database sessions and model backend; other
engines and backends are read one socket at a time, as before).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth import get_user_model, load_backend

from agentweb.batched_trip import BatchedTrip

from .access import MODEL_BACKEND, NotFound, SignedOut, parse_uuid, session_sign_ins, signed_in_thread, signed_in_user
from .models import Thread


def signed_in_threads(calls: list[tuple[str | None, Any, object]]) -> list[Any]:
    """For each (session key, user, thread id): chat.access.signed_in_thread's (user, thread), or the SignedOut or
    NotFound it raises, in the call's place."""
    sign_ins = session_sign_ins([key for key, _, _ in calls])
    results: list[Any] = [None] * len(calls)
    wanted: dict[int, tuple[uuid.UUID | None, Any]] = {}  # the calls read here: their thread id and user id
    for i, (key, user, thread_id) in enumerate(calls):
        sign_in = sign_ins.get(key) if key else None
        if sign_in is None or sign_in.user_id != user.pk:
            results[i] = SignedOut()
        elif sign_in.backend != MODEL_BACKEND:  # its backend reads the user its own way
            results[i] = _one_thread(key, user, thread_id)
        else:
            wanted[i] = (_thread_uuid(thread_id), user.pk)
    threads = _threads_with_owners(wanted.values())
    users = _active_users({user_id for thread_id, user_id in wanted.values() if (thread_id, user_id) not in threads})
    for i, pair in wanted.items():
        thread = threads.get(pair)
        current = thread.owner if thread is not None else users.get(pair[1])
        if not sign_ins[calls[i][0]].holds_for(current):
            results[i] = SignedOut()
        else:
            results[i] = (current, thread) if thread is not None else NotFound()
    return results


def signed_in_users(calls: list[tuple[Any]]) -> list[Any]:
    """For each (session,): channels' get_user, the user the session signs in, or AnonymousUser. As there, a session
    whose password hash no longer matches its user is flushed; a user the session no longer holds for otherwise
    (deactivated) is anonymous, as every action of a socket finds (chat.access.SignIn.holds_for)."""
    from django.contrib.auth.models import AnonymousUser

    sessions = [session for (session,) in calls]
    sign_ins = session_sign_ins([session.session_key for session in sessions])
    model_user_ids = {s.user_id for s in sign_ins.values() if s is not None and s.backend == MODEL_BACKEND}
    users = _active_users(model_user_ids)
    results = []
    for session in sessions:
        sign_in = sign_ins.get(session.session_key) if session.session_key else None
        if sign_in is None:
            results.append(AnonymousUser())
            continue
        user = users.get(sign_in.user_id) if sign_in.backend == MODEL_BACKEND else signed_in_user(sign_in)
        if user is not None and not sign_in.holds_for(user):
            if not sign_in.hash_matches(user):  # the password changed since: as channels' get_user, end the session
                session.flush()
            user = None
        results.append(user or AnonymousUser())
    return results


#: A socket's subscribe: await read_signed_in_thread(session_key, user, thread_id) → (user, thread); raises as
#: chat.access.signed_in_thread does.
read_signed_in_thread = BatchedTrip(signed_in_threads)
#: A socket as it opens: await read_signed_in_user(session) → the user, or AnonymousUser.
read_signed_in_user = BatchedTrip(signed_in_users)


def _one_thread(key, user, thread_id) -> Any:
    try:
        return signed_in_thread(key, user, thread_id)
    except (SignedOut, NotFound) as error:
        return error


def _thread_uuid(thread_id: object) -> uuid.UUID | None:
    try:
        return parse_uuid(thread_id)
    except NotFound:
        return None


def _threads_with_owners(pairs) -> dict[tuple[uuid.UUID, Any], Thread]:
    """The threads of these (thread id, owner id) pairs that exist, with their owners' rows: one query."""
    pairs = {pair for pair in pairs if pair[0] is not None}
    if not pairs:
        return {}
    rows = Thread.objects.select_related("owner").filter(
        id__in={thread_id for thread_id, _ in pairs}, owner_id__in={owner for _, owner in pairs}
    )
    return {(thread.pk, thread.owner_id): thread for thread in rows if (thread.pk, thread.owner_id) in pairs}


def _active_users(user_ids: set) -> dict[Any, Any]:
    """The users Django's model backend would sign in (ModelBackend.get_user) among these ids: one query."""
    if not user_ids:
        return {}
    backend = load_backend(MODEL_BACKEND)
    rows = get_user_model()._default_manager.filter(pk__in=user_ids)
    return {user.pk: user for user in rows if backend.user_can_authenticate(user)}
