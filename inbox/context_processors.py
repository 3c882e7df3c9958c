"""The top bar's count of waiting items on every page (templates/base.html), read only when a page shows it."""

from __future__ import annotations

import logging

from django.db import DatabaseError
from django.utils.functional import SimpleLazyObject

from . import queries

log = logging.getLogger("agentweb.inbox")


def inbox_count(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    def read() -> int | None:
        try:
            return queries.count(user)
        except DatabaseError:  # an error page rendered while the database is away still renders
            log.warning("the inbox count could not be read", exc_info=True)
            return None

    return {"inbox_count": SimpleLazyObject(read)}
