"""The per-user key-value store over the database: strictly one user's entries."""

import pytest

from tools.context import KeyValueStore
from tools.models import MemoryItem
from tools.store import DatabaseStore

pytestmark = pytest.mark.django_db(transaction=True)


async def test_it_gives_back_what_was_put(owner):
    store = DatabaseStore(owner.pk)

    await store.put("city", {"name": "Lyon", "since": 2020})

    assert await store.get("city") == {"name": "Lyon", "since": 2020}


async def test_it_answers_none_for_a_missing_key(owner):
    store = DatabaseStore(owner.pk)

    assert await store.get("nothing here") is None


async def test_it_replaces_the_value_of_an_existing_key(owner):
    store = DatabaseStore(owner.pk)
    await store.put("colour", "blue")

    await store.put("colour", "green")

    assert (await store.get("colour"), await MemoryItem.objects.acount()) == ("green", 1)


async def test_it_does_not_show_one_users_entries_to_another(owner, stranger):
    mine, theirs = DatabaseStore(owner.pk), DatabaseStore(stranger.pk)
    await mine.put("secret", "owner's")

    assert (await theirs.get("secret"), await theirs.items()) == (None, [])


async def test_it_keeps_the_same_key_apart_for_two_users(owner, stranger):
    mine, theirs = DatabaseStore(owner.pk), DatabaseStore(stranger.pk)
    await mine.put("name", "O")

    await theirs.put("name", "S")

    assert (await mine.get("name"), await theirs.get("name")) == ("O", "S")


async def test_it_does_not_let_one_user_delete_anothers_entry(owner, stranger):
    mine, theirs = DatabaseStore(owner.pk), DatabaseStore(stranger.pk)
    await mine.put("note", "keep me")

    deleted = await theirs.delete("note")

    assert (deleted, await mine.get("note")) == (False, "keep me")


async def test_it_deletes_an_entry_and_says_so(owner):
    store = DatabaseStore(owner.pk)
    await store.put("note", "x")

    assert (await store.delete("note"), await store.get("note")) == (True, None)


async def test_it_lists_the_items_with_a_prefix_in_key_order(owner):
    store = DatabaseStore(owner.pk)
    for key in ["pref:b", "other", "pref:a"]:
        await store.put(key, key.upper())

    assert await store.items("pref:") == [("pref:a", "PREF:A"), ("pref:b", "PREF:B")]


async def test_it_refuses_a_key_longer_than_200_characters(owner):
    store = DatabaseStore(owner.pk)

    with pytest.raises(ValueError, match="at most 200"):
        await store.put("k" * 201, 1)


async def test_it_refuses_a_value_that_is_not_json(owner):
    store = DatabaseStore(owner.pk)

    with pytest.raises(ValueError, match="JSON"):
        await store.put("when", object())


def test_it_satisfies_the_key_value_store_protocol_of_the_tools():
    store: KeyValueStore = DatabaseStore(1)

    assert all(callable(getattr(store, name)) for name in ("get", "put", "delete", "items"))
