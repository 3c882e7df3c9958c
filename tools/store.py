"""The per-user key-value store of the tools (``tools.context.KeyValueStore``) over ``MemoryItem`` rows.

Every query is filtered by the owner given at construction: a tool can only ever see its caller's entries.
Async methods only, through Django's async ORM (which runs the queries in the sync thread for us).
"""

from __future__ import annotations

import json
from typing import Any

from tools.models import MemoryItem

__all__ = ["MAX_KEY_LENGTH", "MAX_VALUE_BYTES", "DatabaseStore"]

MAX_KEY_LENGTH = 200
MAX_VALUE_BYTES = 64 * 1024  # a memory is a note, not a file


class DatabaseStore:
    """One user's entries. Values are anything JSON can hold; keys are 1-200 characters."""

    def __init__(self, user_id: int):
        if user_id is None:
            raise ValueError("A store belongs to a user: user_id is required.")
        self.user_id = user_id

    def __repr__(self) -> str:
        return f"DatabaseStore(user_id={self.user_id!r})"

    def _entries(self):
        return MemoryItem.objects.filter(owner_id=self.user_id)

    async def get(self, key: str) -> Any | None:
        item = await self._entries().filter(key=key).only("value").afirst()
        return None if item is None else item.value

    async def put(self, key: str, value: Any) -> None:
        _check_key(key)
        _check_value(value)
        await MemoryItem.objects.aupdate_or_create(owner_id=self.user_id, key=key, defaults={"value": value})

    async def delete(self, key: str) -> bool:
        deleted, _ = await self._entries().filter(key=key).adelete()
        return deleted > 0

    async def items(self, prefix: str = "") -> list[tuple[str, Any]]:
        entries = self._entries().order_by("key")
        if prefix:
            entries = entries.filter(key__startswith=prefix)
        return [(item.key, item.value) async for item in entries.only("key", "value")]


def _check_key(key: Any) -> None:
    if not isinstance(key, str) or not key.strip():
        raise ValueError("A key must be a non-empty string.")
    if len(key) > MAX_KEY_LENGTH:
        raise ValueError(f"A key may be at most {MAX_KEY_LENGTH} characters, this one has {len(key)}.")


def _check_value(value: Any) -> None:
    if value is None:
        # get() answers None for a missing key, so a stored null could not be told apart: delete instead.
        raise ValueError("None (null) cannot be stored; delete the key instead.")
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The value cannot be stored as JSON: {exc}") from None
    if size > MAX_VALUE_BYTES:
        raise ValueError(f"The value is {size} bytes as JSON; at most {MAX_VALUE_BYTES} may be stored.")
