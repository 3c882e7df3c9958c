from tools import MemoryStore, ToolContext, ToolUser


async def test_it_stores_and_reads_back_a_value():
    store = MemoryStore()

    await store.put("colour", "blue")

    assert await store.get("colour") == "blue"


async def test_it_answers_none_for_a_missing_key():
    assert await MemoryStore().get("nothing") is None


async def test_it_reports_whether_delete_removed_something():
    store = MemoryStore({"a": 1})

    assert (await store.delete("a"), await store.delete("a")) == (True, False)


async def test_it_deletes_a_key_whose_value_is_none():
    store = MemoryStore({"a": None})

    assert await store.delete("a") is True


async def test_it_lists_items_with_a_prefix_sorted_by_key():
    store = MemoryStore({"trip/b": 2, "trip/a": 1, "work": 3})

    assert await store.items("trip/") == [("trip/a", 1), ("trip/b", 2)]
    assert [key for key, _ in await store.items()] == ["trip/a", "trip/b", "work"]


def test_it_builds_an_empty_context_by_default():
    assert ToolContext() == ToolContext(user=None, thread_id=None, tool_call_id=None, store=None, search_messages=None)


def test_it_gives_a_user_no_groups_by_default():
    assert ToolUser(id=1, username="ann").groups == frozenset()
