"""One person's check-and-reserve, made atomic: a quota or a budget read and then taken by two requests at once must
not let both through on the same remainder.

`lock_person` holds the person until the caller's transaction ends, so whatever it reads and writes after it is seen
whole by the next request of that person. PostgreSQL: the person's `auth_user` row, FOR NO KEY UPDATE (rows that
merely reference the person, such as a Usage or Thread insert, take FOR KEY SHARE and are not held up). SQLite: every
transaction begins IMMEDIATE (agentweb/settings.py SQLITE_OPTIONS), which takes the database's write lock before
anything is read, so one such transaction runs at a time already and no statement is needed.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import connection


def lock_person(user_id: int) -> None:
    """Inside a transaction (Django refuses a row lock outside one): the person's later checks wait for it to end."""
    if not connection.features.has_select_for_update:
        return
    users = get_user_model().objects.filter(pk=user_id)
    no_key = connection.features.has_select_for_no_key_update
    list(users.select_for_update(no_key=no_key).values_list("pk", flat=True))
