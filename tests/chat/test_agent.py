"""The ReAct loop on its own: no database, no sockets."""

import asyncio

from chat.agent import RegistryToolbox, run_agent
from providers.budget import ContextBudget, estimate
from providers.demo import DemoProvider
from providers.types import ChatMessage, Finish, TextDelta, ToolCallEnd, ToolCallStart
from tools import tool
from tools.registry import ToolRegistry, default_registry


class Recorder:
    """An AgentSink that keeps what it is told, in order."""

    def __init__(self):
        self.log = []

    def __getattr__(self, name):
        async def record(*args):
            self.log.append((name, *args))

        return record


class TwoCallsThenDone:
    """A provider that asks for `wait_for_go` and `go` in one step, then answers."""

    label, is_demo = "two calls", False

    async def stream(self, messages, tools):
        if messages[-1].role == "tool":
            yield TextDelta("both finished")
            yield Finish("stop")
            return
        for index, name in enumerate(["wait_for_go", "go"]):
            yield ToolCallStart(index, f"call_{index}", name)
            yield ToolCallEnd(index, f"call_{index}", name, "{}", {})
        yield Finish("tool_calls")


def registry_with_a_rendezvous():
    started = asyncio.Event()

    @tool(timeout=2)
    async def wait_for_go() -> str:
        """Wait until go has run."""
        await started.wait()
        return "went"

    @tool
    async def go() -> str:
        """Let wait_for_go finish."""
        started.set()
        return "go"

    return ToolRegistry([wait_for_go, go])


async def test_the_calls_of_one_step_run_at_the_same_time():
    # wait_for_go can only finish while go runs: run one after the other, it would time out.
    messages = [ChatMessage("user", "go")]
    outcome = await run_agent(
        provider=TwoCallsThenDone(),
        messages=messages,
        toolbox=RegistryToolbox(registry_with_a_rendezvous()),
        sink=Recorder(),
        max_steps=5,
    )
    results = [(m.tool_call_id, m.status, m.content) for m in messages if m.role == "tool"]
    assert results == [("call_0", "success", "went"), ("call_1", "success", "go")]
    assert outcome.reason == "done"


async def test_it_loops_until_an_answer_without_tool_calls():
    messages = [ChatMessage("user", "what is 23*19?")]
    outcome = await run_agent(
        provider=DemoProvider(delay=0),
        messages=messages,
        toolbox=RegistryToolbox(default_registry()),
        sink=Recorder(),
        max_steps=5,
    )
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2].tool_call_id == messages[1].tool_calls[0].id
    assert (outcome.reason, outcome.steps) == ("done", 2)


async def test_it_stops_at_the_step_limit():
    messages = [ChatMessage("user", "what is 23*19?")]
    outcome = await run_agent(
        provider=DemoProvider(delay=0),
        messages=messages,
        toolbox=RegistryToolbox(default_registry()),
        sink=Recorder(),
        max_steps=1,
    )
    assert (outcome.reason, outcome.steps) == ("max_steps", 1)
    assert messages[-1].role == "tool"


async def test_the_sink_hears_of_each_call_before_it_runs_and_after_it_completes():
    sink = Recorder()
    await run_agent(
        provider=DemoProvider(delay=0),
        messages=[ChatMessage("user", "what is 2+2?")],
        toolbox=RegistryToolbox(default_registry()),
        sink=sink,
        max_steps=5,
    )
    names = [entry[0] for entry in sink.log if entry[0] != "text_delta" and entry[0] != "tool_call_args_delta"]
    assert names == [
        "assistant_started",
        "tool_call_started",
        "assistant_completed",
        "tool_call_running",
        "tool_call_completed",
        "step_finished",
        "assistant_started",
        "assistant_completed",
    ]


class ReadsThenAnswers:
    """A provider that asks for `read_page` once, then answers."""

    label, is_demo = "reads", False

    async def stream(self, messages, tools):
        if messages[-1].role == "tool":
            yield TextDelta("read it")
            yield Finish("stop")
            return
        yield ToolCallStart(0, "call_0", "read_page")
        yield ToolCallEnd(0, "call_0", "read_page", "{}", {})
        yield Finish("tool_calls")


async def notes_of_a_run_that_outgrows_its_window(unread: bool) -> list[str]:
    """A long history that does not fit, and a tool whose long result makes the second step leave out more."""

    @tool
    async def read_page() -> str:
        """A long page."""
        return "p" * 4000

    toolbox = RegistryToolbox(ToolRegistry([read_page]))
    history = [ChatMessage("user" if i % 2 == 0 else "assistant", f"{i} " + "h" * 400) for i in range(20)]
    history.append(ChatMessage("user", "read the page"))
    window = estimate(history, toolbox.definitions()) - 300
    sink = Recorder()
    await run_agent(
        provider=ReadsThenAnswers(),
        messages=history,
        toolbox=toolbox,
        sink=sink,
        max_steps=5,
        budget=ContextBudget(window=window, reserve=0, unread=unread),
    )
    return [entry[1] for entry in sink.log if entry[0] == "note"]


async def test_a_step_that_leaves_out_more_says_so_again_with_the_count():
    notes = await notes_of_a_run_that_outgrows_its_window(unread=False)
    counts = [int(text.split()[2]) for text in notes]
    assert len(counts) == 2 and counts[0] < counts[1], notes


async def test_a_history_not_read_whole_is_said_to_be_trimmed_once_a_run():
    # Its older messages were never read (chat/store/snapshot.py): the note has no count, and a second would repeat it.
    notes = await notes_of_a_run_that_outgrows_its_window(unread=True)
    assert len(notes) == 1 and notes[0].startswith("The oldest messages were left out to fit"), notes
