import pytest

from tools.builtin.memory import MAX_KEY_CHARS, MAX_LISTED, MAX_VALUE_CHARS, forget, recall, remember
from tools.context import MemoryStore, ToolContext
from tools.executor import execute_tool
from tools.registry import ToolRegistry

REGISTRY = ToolRegistry([remember, recall, forget])


@pytest.fixture
def store():
    return MemoryStore()


async def call(store, name, **args):
    return await execute_tool(REGISTRY, name, args, context=ToolContext(store=store))


def test_it_shows_the_model_no_store_parameter():
    properties = [sorted(t.parameters["properties"]) for t in (remember, recall, forget)]

    assert properties == [["key", "value"], ["key"], ["key"]]


async def test_it_remembers_a_note_in_the_users_store(store):
    result = await call(store, "remember", key="language", value="Portuguese")

    assert result.content == "Remembered 'language'."
    assert store.data == {"language": "Portuguese"}


async def test_it_says_when_a_note_is_replaced(store):
    await call(store, "remember", key="language", value="Portuguese")

    assert (await call(store, "remember", key="language", value="Dutch")).content == "Updated 'language'."
    assert store.data == {"language": "Dutch"}


async def test_it_recalls_one_key(store):
    store.data.update({"trip": "Lisbon", "trip/date": "May"})

    assert (await call(store, "recall", key="trip")).content == "trip: Lisbon"


async def test_it_recalls_every_key_with_a_prefix_when_none_matches_exactly(store):
    store.data.update({"trip/date": "May", "trip/city": "Lisbon", "work": "x"})

    assert (await call(store, "recall", key="trip/")).content == "trip/city: Lisbon\ntrip/date: May"


async def test_it_lists_every_note_without_a_key(store):
    store.data.update({"b": "2", "a": "1"})

    assert (await call(store, "recall")).content == "a: 1\nb: 2"


async def test_it_says_when_nothing_is_remembered(store):
    assert (await call(store, "recall")).content == "Nothing remembered yet."
    assert (await call(store, "recall", key="x")).content == "Nothing remembered under 'x'."


async def test_it_caps_a_long_listing(store):
    store.data.update({f"k{n:04}": "v" for n in range(MAX_LISTED + 5)})

    lines = (await call(store, "recall")).content.splitlines()

    assert len(lines) == MAX_LISTED + 1 and lines[-1].startswith("… and 5 more")


async def test_it_forgets_a_note(store):
    store.data["x"] = "1"

    assert (await call(store, "forget", key="x")).content == "Forgot 'x'."
    assert store.data == {}


async def test_it_says_when_there_was_nothing_to_forget(store):
    assert (await call(store, "forget", key="x")).content == "Nothing was remembered under 'x'."


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("  ", "v", "The key must not be empty."),
        ("k" * (MAX_KEY_CHARS + 1), "v", "The key is too long"),
        ("k", "v" * (MAX_VALUE_CHARS + 1), "The value is too long"),
    ],
    ids=["empty-key", "long-key", "long-value"],
)
async def test_it_refuses_keys_and_values_out_of_bounds(store, key, value, message):
    result = await call(store, "remember", key=key, value=value)

    assert result.status == "error" and message in result.content
    assert store.data == {}


async def test_it_keeps_users_apart_because_each_call_gets_its_users_store():
    ann, bob = MemoryStore(), MemoryStore()
    await call(ann, "remember", key="secret", value="ann's")

    assert (await call(bob, "recall", key="secret")).content == "Nothing remembered under 'secret'."


async def test_it_reports_a_missing_store():
    result = await execute_tool(REGISTRY, "recall", {})

    assert (result.status, result.content) == (
        "error",
        "Tool 'recall' needs the per-user store, which this call does not provide.",
    )
