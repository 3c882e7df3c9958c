"""Open sockets close when the person behind them signs out or is deactivated, not only at their next action. (A
change of a person's token budget changes the settings stamp by a trigger: tools/settings_cache.py.)"""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save

from delivery import person_group

from . import live


def end_sessions(user_id: int, session_key: str | None) -> None:
    """Close the person's sockets of that session (all of them when None)."""
    message = {"type": "session.ended", "session": session_key}
    async_to_sync(live.delivery().tell)(person_group(user_id), message)


def on_logged_out(sender, request, user, **kwargs) -> None:
    if user is not None:
        session = getattr(request, "session", None)
        end_sessions(user.pk, getattr(session, "session_key", None) or None)


def on_user_saved(sender, instance, created, **kwargs) -> None:
    if not created and not instance.is_active:
        end_sessions(instance.pk, None)


def connect() -> None:
    user_logged_out.connect(on_logged_out, dispatch_uid="chat.end_sessions_on_logout")
    post_save.connect(on_user_saved, sender=get_user_model(), dispatch_uid="chat.end_sessions_on_deactivation")
