from datetime import UTC, datetime

from tools.builtin.search_threads import SNIPPET_CHARS, search_threads
from tools.context import ToolContext
from tools.executor import execute_tool
from tools.registry import ToolRegistry

REGISTRY = ToolRegistry([search_threads])
HIT = {
    "thread": "t-1",
    "thread_title": "Trip planning",
    "role": "user",
    "content": "The  flight to\nLisbon is on May 3.",
    "created_at": datetime(2026, 5, 1, 9, 30, tzinfo=UTC),
}


class FakeSearch:
    """The user's own messages, as the Django side's search would return them."""

    def __init__(self, hits):
        self.hits, self.calls = hits, []

    async def __call__(self, query, limit):
        self.calls.append((query, limit))
        return self.hits[:limit]


async def call(search, **args):
    return await execute_tool(REGISTRY, "search_threads", args, context=ToolContext(search_messages=search))


def test_it_shows_the_model_only_query_and_limit():
    assert search_threads.parameters["properties"].keys() == {"query", "limit"}
    assert search_threads.parameters["required"] == ["query"]


async def test_it_formats_each_hit_with_thread_role_time_and_text():
    result = await call(FakeSearch([HIT]), query="Lisbon")

    assert result.content == (
        '1. "Trip planning" (thread t-1, user, 2026-05-01T09:30+00:00):\nThe flight to Lisbon is on May 3.'
    )


async def test_it_passes_the_query_and_clamps_the_limit():
    search = FakeSearch([])

    await call(search, query=" Lisbon ", limit=500)
    await call(search, query="Lisbon", limit=0)

    assert search.calls == [("Lisbon", 20), ("Lisbon", 1)]


async def test_it_shortens_long_messages():
    hit = {**HIT, "content": "word " * 1000}

    content = (await call(FakeSearch([hit]), query="word")).content

    assert content.endswith("…") and len(content.split("\n", 1)[1]) == SNIPPET_CHARS + 1


async def test_it_numbers_several_hits_and_names_untitled_threads():
    hits = [HIT, {**HIT, "thread": "t-2", "thread_title": "", "role": "assistant", "created_at": None}]

    content = (await call(FakeSearch(hits), query="Lisbon")).content

    assert content.split("\n\n")[1].startswith('2. "Untitled" (thread t-2, assistant):')


async def test_it_says_when_nothing_matches():
    assert (await call(FakeSearch([]), query="Oslo")).content == "No earlier messages match 'Oslo'."


async def test_it_refuses_an_empty_query():
    result = await call(FakeSearch([HIT]), query="  ")

    assert (result.status, result.content) == ("error", "ValueError: The query must not be empty.")


async def test_it_reports_when_search_is_not_available():
    result = await execute_tool(REGISTRY, "search_threads", {"query": "x"})

    assert result.status == "error" and "not available" in result.content


async def test_it_says_which_version_matched():
    older = {**HIT, "shown": False, "version": {"index": 1, "count": 2}}
    edited = {**HIT, "shown": True, "version": {"index": 2, "count": 2}}

    content = (await call(FakeSearch([older, edited]), query="Lisbon")).content

    first, second = content.split("\n\n")
    assert first.startswith('1. "Trip planning" (thread t-1, user, 2026-05-01T09:30+00:00, version 1 of 2, not the')
    assert "version 1 of 2, not the version shown):" in first
    assert second.startswith('2. "Trip planning" (thread t-1, user, 2026-05-01T09:30+00:00, version 2 of 2):')
