"""remember / recall / forget: notes the model keeps for the current user, across threads.

Backed by the per-user KeyValueStore of the ToolContext (InjectedStore): a user never sees another's notes,
and the model cannot name a user: the store it is handed already belongs to one.
"""

from typing import Annotated

from tools.base import tool
from tools.context import KeyValueStore
from tools.injection import InjectedStore

MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 10_000
MAX_LISTED = 100  # a recall of everything must not flood the context


@tool
async def remember(key: str, value: str, store: Annotated[KeyValueStore, InjectedStore]) -> str:
    """Remember a note for this user under a key, replacing any note already stored under it.

    Args:
        key: A short name for the note, e.g. "preferred_language" or "project/deadline".
        value: The text to remember.
    """
    key = _check_key(key)
    if len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"The value is too long ({len(value)} characters; the limit is {MAX_VALUE_CHARS}).")
    replaced = await store.get(key) is not None
    await store.put(key, value)
    return f"{'Updated' if replaced else 'Remembered'} {key!r}."


@tool
async def recall(store: Annotated[KeyValueStore, InjectedStore], key: str | None = None) -> str:
    """Recall notes remembered for this user: one key, every key starting with a prefix, or all of them.

    Args:
        key: The key to read. When no note has exactly this key, it is used as a prefix and the matching
            notes are listed. Leave it out to list every note.
    """
    key = (key or "").strip()
    if key:
        value = await store.get(key)
        if value is not None:
            return f"{key}: {value}"
    notes = await store.items(key)
    if not notes:
        return f"Nothing remembered under {key!r}." if key else "Nothing remembered yet."
    lines = [f"{name}: {value}" for name, value in notes[:MAX_LISTED]]
    if len(notes) > MAX_LISTED:
        lines.append(f"… and {len(notes) - MAX_LISTED} more; recall with a longer prefix to see them.")
    return "\n".join(lines)


@tool
async def forget(key: str, store: Annotated[KeyValueStore, InjectedStore]) -> str:
    """Forget the note stored under a key for this user.

    Args:
        key: The exact key of the note to delete.
    """
    key = _check_key(key)
    if await store.delete(key):
        return f"Forgot {key!r}."
    return f"Nothing was remembered under {key!r}."


def _check_key(key: str) -> str:
    key = key.strip()
    if not key:
        raise ValueError("The key must not be empty.")
    if len(key) > MAX_KEY_CHARS:
        raise ValueError(f"The key is too long ({len(key)} characters; the limit is {MAX_KEY_CHARS}).")
    return key
