"""The context budget: what is left out when the history does not fit the model's context window."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat.agent import RegistryToolbox, run_agent
from providers.budget import ContextBudget, estimate, estimate_message, estimate_tools
from providers.protocols.prompts import render_messages
from providers.types import ChatMessage, Finish, TextDelta, ToolCallRequest, ToolDefinition
from tools.registry import ToolRegistry

SYSTEM = ChatMessage("system", "You are helpful.")
WORDS = "x" * 400  # 100 tokens of text


def user(text=WORDS):
    return ChatMessage("user", text)


def answer(text=WORDS):
    return ChatMessage("assistant", text)


def call(call_id, text=""):
    return ChatMessage("assistant", text, tool_calls=[ToolCallRequest(call_id, "calculator", {"expression": "1+1"})])


def result(call_id, text=WORDS):
    return ChatMessage("tool", text, tool_call_id=call_id, name="calculator", status="success")


def budget_for(messages, keep_tokens, reserve=100):
    """A budget whose window leaves room for `keep_tokens` of messages besides the reserve."""
    return ContextBudget(window=keep_tokens + reserve, reserve=reserve)


def check_shape(kept, starts_with_user=True):
    """The kept history is one a model accepts: every call answered, every result right after its call."""
    rest = [m for m in kept if m.role != "system"]
    if starts_with_user:
        assert rest[0].role == "user"
    unanswered: set[str] = set()
    for message in rest:
        if message.role == "tool":
            assert message.tool_call_id in unanswered, "a result without its call"
            unanswered.discard(message.tool_call_id)
        else:
            assert not unanswered, "a call without its result"
            unanswered = {c.id for c in message.tool_calls}
    assert not unanswered


def test_the_estimate_counts_text_calls_and_tool_schemas():
    assert estimate_message(user("x" * 400)) == 100 + 4
    with_call = estimate_message(call("c1"))
    assert with_call > estimate_message(answer(""))
    tools = [ToolDefinition("calculator", "Evaluate arithmetic.", {"type": "object", "properties": {}})]
    assert estimate_tools(tools) > 0
    assert estimate([user()], tools) == estimate_message(user()) + estimate_tools(tools)


def test_a_history_that_fits_is_sent_whole():
    messages = [SYSTEM, user(), answer(), user()]
    fitted = ContextBudget(window=10_000).fit(messages)
    assert (fitted.messages, fitted.dropped) == (messages, 0)


def test_the_oldest_messages_are_left_out_first_and_the_system_prompt_and_last_question_stay():
    old_q, old_a, mid_q, mid_a, last = user("old?" * 100), answer("old." * 100), user("mid?" * 100), answer(), user()
    messages = [SYSTEM, old_q, old_a, mid_q, mid_a, last]
    keep = estimate([SYSTEM, mid_q, mid_a, last])
    fitted = budget_for(messages, keep).fit(messages)
    assert fitted.messages == [SYSTEM, mid_q, mid_a, last]
    assert fitted.dropped == 2
    assert fitted.tokens <= keep


def test_the_messages_passed_in_are_not_changed():
    messages = [SYSTEM, user(), answer(), user()]
    copy = list(messages)
    ContextBudget(window=150, reserve=0).fit(messages)
    assert messages == copy


def test_a_call_and_its_results_are_left_out_together():
    messages = [SYSTEM, user(), call("c1"), result("c1"), result("c1b"), answer(), user()]
    messages[2].tool_calls.append(ToolCallRequest("c1b", "calculator", {"expression": "2"}))
    # Room for the last question and a little more: not for the call and its two results.
    keep = estimate([SYSTEM, messages[-1]]) + estimate_message(messages[2]) + 10
    fitted = budget_for(messages, keep).fit(messages)
    assert fitted.messages == [SYSTEM, messages[-1]]
    check_shape(fitted.messages)


def test_the_kept_history_never_starts_with_a_result_or_an_answer():
    # Room for everything after the first question, but that would start with the answer to it.
    messages = [SYSTEM, user(), call("c1"), result("c1"), answer(), user()]
    keep = estimate(messages[2:]) + 5
    fitted = budget_for(messages, keep).fit(messages)
    assert fitted.messages == [SYSTEM, messages[-1]]
    assert fitted.dropped == 4


def test_the_last_question_and_the_newest_step_stay_even_when_they_do_not_fit():
    messages = [SYSTEM, user("q" * 4000), call("c1"), result("c1", "r" * 4000)]
    fitted = ContextBudget(window=200, reserve=100).fit(messages)
    assert fitted.messages == messages
    assert fitted.dropped == 0


def test_inside_a_long_run_the_earlier_steps_go_first_and_the_question_stays():
    steps = [m for i in range(4) for m in (call(f"c{i}"), result(f"c{i}"))]
    messages = [SYSTEM, user(), *steps]
    keep = estimate([SYSTEM, messages[1], *steps[-2:]]) + 5
    fitted = budget_for(messages, keep).fit(messages)
    assert fitted.messages == [SYSTEM, messages[1], *steps[-2:]]
    check_shape(fitted.messages)


def test_the_tool_schemas_take_their_share():
    messages = [SYSTEM, user(), answer(), user()]
    tools = [ToolDefinition(f"t{i}", "d" * 400, {"type": "object"}) for i in range(3)]
    window = estimate(messages) + 100
    assert ContextBudget(window=window, reserve=100).fit(messages).dropped == 0
    assert ContextBudget(window=window, reserve=100).fit(messages, tools).dropped == 2


def test_the_note_says_how_many_and_the_window():
    budget = ContextBudget(window=4096)
    assert budget.note(3) == "The oldest 3 messages were left out to fit the model's context window (4096 tokens)."
    assert budget.note(1).startswith("The oldest message was left out")


def test_the_note_does_not_count_what_was_never_read():
    """A long chat's turn reads only its newest messages (chat/store/snapshot.py): what it leaves out of those is
    not all that was left out."""
    budget = ContextBudget(window=4096, unread=True)
    assert budget.note(3) == "The oldest messages were left out to fit the model's context window (4096 tokens)."


message_kinds = st.lists(st.sampled_from(["user", "answer", "step1", "step2"]), min_size=1, max_size=14)


@settings(max_examples=200, deadline=None)
@given(kinds=message_kinds, sizes=st.lists(st.integers(0, 800), min_size=30, max_size=30), room=st.integers(0, 900))
def test_property_whatever_is_cut_the_history_stays_well_formed(kinds, sizes, room):
    messages = [SYSTEM]
    for i, kind in enumerate(kinds):
        text = "y" * sizes[i]
        if kind == "user":
            messages.append(user(text))
        elif kind == "answer":
            messages.append(answer(text))
        else:
            calls = [ToolCallRequest(f"c{i}_{j}", "calculator", {}) for j in range(int(kind[-1]))]
            messages.append(ChatMessage("assistant", text, tool_calls=calls))
            messages += [result(c.id, text) for c in calls]
    messages.append(user("last"))
    fitted = ContextBudget(window=room + 50, reserve=50).fit(messages)
    kept = fitted.messages
    assert kept[0] == SYSTEM and kept[-1] == messages[-1]
    assert fitted.dropped == len(messages) - len(kept)
    # What is kept is the newest part, in order.
    positions = [next(i for i, m in enumerate(messages) if m is k) for k in kept]
    assert positions == sorted(positions)
    check_shape(kept, starts_with_user=fitted.dropped > 0)


# --- in the agent loop -------------------------------------------------------------------------


class Notes:
    """An AgentSink that keeps the notes and ignores the rest."""

    def __init__(self):
        self.notes = []

    async def note(self, text):
        self.notes.append(text)

    def __getattr__(self, name):
        async def ignore(*args):
            return None

        return ignore


class CountingProvider:
    """Answers at once, remembering the messages of every request."""

    def __init__(self):
        self.requests = []

    async def stream(self, messages, tools):
        self.requests.append(list(messages))
        yield TextDelta("ok")
        yield Finish("stop")


async def test_the_loop_sends_the_trimmed_history_keeps_the_whole_one_and_says_so():
    history = [SYSTEM, user(), answer(), user(), answer(), user("and now?")]
    provider, sink = CountingProvider(), Notes()
    budget = ContextBudget(window=estimate([SYSTEM, *history[3:]]) + 100, reserve=100)
    await run_agent(
        provider=provider,
        messages=history,
        toolbox=RegistryToolbox(ToolRegistry([])),
        sink=sink,
        max_steps=1,
        budget=budget,
    )
    assert provider.requests[0] == [SYSTEM, *history[3:6]]
    assert len(history) == 7  # the stored history is whole, and has the answer
    assert sink.notes == [budget.note(2)]


async def test_no_note_when_nothing_was_left_out():
    provider, sink = CountingProvider(), Notes()
    await run_agent(
        provider=provider,
        messages=[SYSTEM, user()],
        toolbox=RegistryToolbox(ToolRegistry([])),
        sink=sink,
        max_steps=1,
        budget=ContextBudget(window=100_000),
    )
    assert sink.notes == []


# --- with a text tool protocol: what is sent is the rendered conversation --------------------------

CALCULATOR = ToolDefinition(
    "calculator",
    "Evaluate an arithmetic expression and return the result.",
    {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
)


@pytest.mark.parametrize("protocol", ["hermes", "xml"])
def test_with_a_text_protocol_the_tool_instructions_in_the_system_prompt_are_counted(protocol):
    messages = [SYSTEM, user(), answer(), user(), answer(), user("and now?")]
    # Room for everything as the native estimate counts it, not for what the text protocol really sends.
    budget = ContextBudget(window=estimate(messages, [CALCULATOR]) + 100, reserve=100, protocol=protocol)
    fitted = budget.fit(messages, [CALCULATOR])
    sent = render_messages(protocol, fitted.messages, [CALCULATOR])
    assert estimate(sent) <= budget.limit
    assert fitted.dropped > 0


@pytest.mark.parametrize("protocol", ["hermes", "xml"])
def test_with_a_text_protocol_calls_and_results_are_counted_as_the_text_sent(protocol):
    messages = [SYSTEM, user(), call("c1"), result("c1"), answer(), user()]
    tokens = ContextBudget(window=100_000, protocol=protocol).fit(messages, [CALCULATOR]).tokens
    assert tokens >= estimate(render_messages(protocol, messages, [CALCULATOR]))
