"""The history a run reads (chat/store/snapshot.py): with the model's window known, a long chat's turn reads only
its newest messages, and the model is sent what it would be sent from the whole history; a chat that fits is read
whole. Runs on SQLite by default and on PostgreSQL with DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentweb."""

from __future__ import annotations

import random

import pytest

from chat import store
from chat.models import Message, Thread, ToolCall
from providers.budget import CHARS_PER_TOKEN, ContextBudget
from providers.context_strategy import last_turns

pytestmark = pytest.mark.django_db

WORDS = ["plan", "budget", "quarter", "tool", "answer", "question", "review", "draft", "numbers", "team"]


def long_chat(owner, turns: int) -> Thread:
    """Turns of varied lengths; every fifth answer calls a tool first; one answer failed and was answered again."""
    rng = random.Random(7)
    thread = Thread.objects.create(owner=owner, title="long")
    order = 0

    def add(role, content="", **fields) -> Message:
        nonlocal order
        order += 1
        return Message.objects.create(thread=thread, order=order, role=role, content=content, **fields)

    def words(n: int) -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(1, n)))

    for turn in range(turns):
        add("user", words(30))
        if turn == turns // 2:
            add("assistant", words(200), status=Message.Status.ERROR)  # the retry below answers it again
        if turn % 5 == 0:
            calling = add("assistant", "")
            ToolCall.objects.create(message=calling, call_id=f"c{turn}", name="calculator", args={"e": "6*7"})
            add("tool", "42", tool_call_id=f"c{turn}", name="calculator")
        add("assistant", words(120))
    return thread


def history(thread: Thread, newest_chars: int | None = None):
    return store.history_and_last_order(thread_id=thread.pk, system_prompt="Be brief.", newest_chars=newest_chars)


def test_a_chat_that_fits_is_read_whole(owner):
    thread = long_chat(owner, turns=6)
    assert history(thread, newest_chars=1_000_000) == history(thread)


@pytest.mark.parametrize("protocol", ["native", "hermes"])
@pytest.mark.parametrize("window", [60, 200, 700, 2500])
def test_a_long_chat_reads_its_newest_part_and_the_model_is_sent_the_same(owner, window, protocol):
    thread = long_chat(owner, turns=80)
    whole, last = history(thread)
    newest, newest_last = history(thread, newest_chars=CHARS_PER_TOKEN * window)
    budget = ContextBudget(window, reserve=window // 4, protocol=protocol)

    assert len(newest) < len(whole)  # it did not read all of it
    assert newest_last == last
    assert budget.fit(newest).messages == budget.fit(whole).messages
    # The last_n strategy cuts the history it is given, and the budget trims what is left, the same way.
    assert budget.fit(last_turns(newest, 30)).messages == budget.fit(last_turns(whole, 30)).messages


def test_a_run_reads_what_its_models_window_can_hold(owner, settings):
    """prepare_run gives the history four characters per token of the model's window; the budget it runs with then
    sends what it would send of the whole history, and its note does not count what was not read."""
    from chat.runs.execute import context_budget, prepare_run
    from tools.settings_cache import SETTINGS_CACHE

    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "context_window": 300}
    thread = long_chat(owner, turns=80)
    setup = prepare_run(thread)
    whole = store.history_and_last_order(thread_id=thread.pk, system_prompt=setup.history[0].content)[0]
    budget = context_budget(setup.config)

    assert setup.unread and len(setup.history) < len(whole)
    assert budget.fit(setup.history).messages == budget.fit(whole).messages

    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "context_window": None}
    SETTINGS_CACHE.clear()  # the model is kept per tool settings' stamp
    unknown = prepare_run(Thread.objects.get(pk=thread.pk))
    assert not unknown.unread and unknown.history == whole
