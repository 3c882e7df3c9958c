from typing import Annotated

import pytest

from tools import (
    InjectedArg,
    InjectedContext,
    InjectedStore,
    InjectedThreadId,
    InjectedToolCallId,
    InjectedUser,
    KeyValueStore,
    MemoryStore,
    ToolContext,
    ToolUser,
    tool,
)
from tools.executor import execute_tool
from tools.registry import ToolRegistry

ANN = ToolUser(id=7, username="ann", groups=frozenset({"staff"}))


async def _run(made, args=None, context=None):
    return await execute_tool(ToolRegistry([made]), made.name, args or {}, context=context)


@tool
def whoami(
    greeting: str,
    user: Annotated[ToolUser, InjectedUser],
    thread: Annotated[str, InjectedThreadId],
    call: Annotated[str, InjectedToolCallId()],
) -> str:
    """Say who is asking."""
    return f"{greeting} {user.username} in {thread} via {call}"


def test_it_leaves_every_injected_parameter_out_of_the_schema():
    assert whoami.parameters == {
        "type": "object",
        "properties": {"greeting": {"type": "string"}},
        "required": ["greeting"],
    }


def test_it_records_the_injected_parameters_on_the_tool():
    assert [(i.name, i.marker) for i in whoami.injections] == [
        ("user", InjectedUser),
        ("thread", InjectedThreadId),
        ("call", InjectedToolCallId),
    ]


async def test_it_fills_user_thread_and_call_id_from_the_context():
    context = ToolContext(user=ANN, thread_id="t-1", tool_call_id="call-9")

    result = await _run(whoami, {"greeting": "hi"}, context)

    assert (result.status, result.content) == ("success", "hi ann in t-1 via call-9")


async def test_it_fills_the_store():
    @tool
    async def keep(value: str, store: Annotated[KeyValueStore, InjectedStore]) -> str:
        """Keep a value."""
        await store.put("kept", value)
        return "ok"

    store = MemoryStore()
    await _run(keep, {"value": "v"}, ToolContext(store=store))

    assert store.data == {"kept": "v"}


async def test_it_fills_the_whole_context():
    @tool
    def where(context: Annotated[ToolContext, InjectedContext]) -> str:
        """Where."""
        return context.thread_id

    assert (await _run(where, context=ToolContext(thread_id="t-2"))).content == "t-2"


async def test_it_gives_an_empty_context_when_none_is_passed():
    @tool
    def where(context: Annotated[ToolContext, InjectedContext]) -> str:
        """Where."""
        return repr(context.user)

    assert (await _run(where)).content == "None"


async def test_it_reports_an_injected_value_the_context_lacks_without_calling_the_tool():
    calls = []

    @tool
    def needs_user(user: Annotated[ToolUser, InjectedUser]) -> str:
        """Needs a user."""
        calls.append(user)
        return "called"

    result = await _run(needs_user, context=ToolContext(thread_id="t"))

    assert (result.status, result.content) == (
        "error",
        "Tool 'needs_user' needs the current user, which this call does not provide.",
    )
    assert calls == []


async def test_it_uses_the_default_when_an_optional_injected_value_is_missing():
    @tool
    def maybe_user(user: Annotated[ToolUser | None, InjectedUser] = None) -> str:
        """Maybe a user."""
        return user.username if user else "anonymous"

    assert (await _run(maybe_user)).content == "anonymous"
    assert (await _run(maybe_user, context=ToolContext(user=ANN))).content == "ann"


@pytest.mark.parametrize("spoofed", [{"user": {"username": "root"}}, {"call": "fake"}])
async def test_it_never_lets_the_model_set_an_injected_parameter(spoofed):
    context = ToolContext(user=ANN, thread_id="t-1", tool_call_id="call-9")

    result = await _run(whoami, {"greeting": "hi", **spoofed}, context)

    assert result.content == "hi ann in t-1 via call-9"


async def test_it_drops_a_spoofed_value_even_when_the_injected_parameter_has_a_default():
    @tool
    def maybe_user(user: Annotated[ToolUser | None, InjectedUser] = None) -> str:
        """Maybe a user."""
        return repr(user)

    assert (await _run(maybe_user, {"user": "root"})).content == "None"


async def test_it_leaves_a_plain_injected_arg_to_its_default():
    @tool
    def configured(x: int, setting: Annotated[str, InjectedArg] = "default") -> str:
        """Configured."""
        return f"{x} {setting}"

    assert configured.parameters["properties"] == {"x": {"type": "integer"}}
    assert (await _run(configured, {"x": 1, "setting": "model says"})).content == "1 default"
