"""The offline demo model, through the same provider interface as a real one."""

from providers.demo import DemoProvider, find_expression
from providers.types import ChatMessage, Finish, TextDelta, ToolCallEnd, ToolDefinition

TOOLS = [
    ToolDefinition("calculator", "Evaluate arithmetic.", {"type": "object"}),
    ToolDefinition("current_time", "The time.", {"type": "object"}),
]


async def collect(messages, tools=TOOLS):
    return [event async for event in DemoProvider(delay=0).stream(messages, tools)]


def text_of(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_it_calls_the_calculator_for_arithmetic():
    events = await collect([ChatMessage("user", "what is 23*19?")])
    calls = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(c.name, c.args) for c in calls] == [("calculator", {"expression": "23*19"})]
    assert events[-1] == Finish("tool_calls")


async def test_it_calls_current_time_with_the_zone_asked_for():
    events = await collect([ChatMessage("user", "What time is it in Europe/Paris?")])
    calls = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(c.name, c.args) for c in calls] == [("current_time", {"timezone": "Europe/Paris"})]


async def test_it_calls_both_tools_in_one_step_when_asked_both():
    events = await collect([ChatMessage("user", "what is 2+2 and what time is it?")])
    assert [e.name for e in events if isinstance(e, ToolCallEnd)] == ["calculator", "current_time"]


async def test_it_answers_from_the_tool_result_and_says_it_is_a_demo():
    call_turn = await collect([ChatMessage("user", "what is 23*19?")])
    call = next(e for e in call_turn if isinstance(e, ToolCallEnd))
    from providers.types import ToolCallRequest

    history = [
        ChatMessage("user", "what is 23*19?"),
        ChatMessage("assistant", "", tool_calls=[ToolCallRequest(call.id, call.name, call.args)]),
        ChatMessage("tool", "437", tool_call_id=call.id, name="calculator", status="success"),
    ]
    answer = text_of(await collect(history))
    assert "23*19 = 437" in answer
    assert "demo model" in answer


async def test_without_a_question_for_its_tools_it_explains_itself():
    events = await collect([ChatMessage("user", "hello")])
    assert not [e for e in events if isinstance(e, ToolCallEnd)]
    assert "demo model" in text_of(events)


async def test_its_answers_do_not_repeat_how_to_connect_a_real_model():
    """The environment variables are said once, in the page's banner and the README: not under every answer."""
    for question in ("hello", "what is 2+2?"):
        events = await collect([ChatMessage("user", question)])
        assert "AGENTWEB_LLM" not in text_of(events)
    assert len(text_of(await collect([ChatMessage("user", "hello")]))) < 300


async def test_it_only_calls_tools_it_was_given():
    events = await collect([ChatMessage("user", "what is 23*19?")], tools=[])
    assert not [e for e in events if isinstance(e, ToolCallEnd)]


def test_it_finds_the_arithmetic_in_a_sentence():
    assert find_expression("Could you work out (3 + 4) * 5 for me?") == "(3 + 4) * 5"
    assert find_expression("sqrt(16) + 1 please") == "sqrt(16) + 1"
    assert find_expression("I have 3 cats") is None
