"""Every share link id and token goes through here: another owner's link, a revoked one and a made-up one
all get the same NotFound."""

from __future__ import annotations

from chat.access import NotFound, parse_uuid

from .models import ShareLink, hash_token

# token_urlsafe(32) is 43 characters; anything far longer is not a token and is not hashed.
MAX_TOKEN_LENGTH = 128


def get_link_for_user(user, link_id: object) -> ShareLink:
    """The user's own link (active or revoked)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        raise NotFound
    try:
        return ShareLink.objects.select_related("thread").get(id=parse_uuid(link_id), thread__owner=user)
    except ShareLink.DoesNotExist:
        raise NotFound from None


def get_link_for_token(token: str) -> ShareLink:
    """The active link the token opens, for anyone who holds it."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        raise NotFound
    try:
        return ShareLink.objects.active().get(token_hash=hash_token(token))
    except ShareLink.DoesNotExist:
        raise NotFound from None
