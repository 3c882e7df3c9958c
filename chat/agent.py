"""The ReAct loop: model → tool calls → tools (in parallel) → results → model …

No ORM and no channel layer here: the loop reports what happens to an AgentSink and runs tools
through a Toolbox; chat/runs/execute.py provides both.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from providers.base import Provider
from providers.budget import ContextBudget, estimate, estimate_message, estimate_text
from providers.structured import AnswerFormat, retry_prompt, validate_answer
from providers.types import (
    ChatMessage,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    ToolDefinition,
    Usage,
)
from tools.context import ToolContext
from tools.executor import ToolResult, execute_tool
from tools.registry import ToolRegistry

#: A call of a tool the thread's agent does not have (agents/services.py says the same).
NOT_AVAILABLE = "Tool {name!r} is not available to this agent."
#: A call of a tool the person turned off for this chat (Thread.disabled_tools).
TURNED_OFF = "Tool {name!r} is turned off for this chat."


class AgentSink(Protocol):
    async def assistant_started(self) -> None: ...
    async def text_delta(self, text: str) -> None: ...
    async def reasoning_delta(self, text: str) -> None: ...
    async def tool_call_started(self, index: int, call_id: str, name: str) -> None: ...
    async def tool_call_args_delta(self, index: int, text: str) -> None: ...
    async def assistant_completed(self, step: StepResult) -> None: ...
    async def tool_call_running(self, index: int) -> None: ...
    async def tool_call_completed(self, index: int, result: ToolResult) -> None: ...
    async def tool_call_awaiting(self, index: int, allow: dict[str, bool]) -> None: ...
    # The step's calls have all completed or wait for a person (told after run_calls and tool_call_awaiting): a
    # sink that holds the calls' state writes it now.
    async def step_finished(self) -> None: ...
    async def note(self, text: str) -> None: ...

    # Optional, synchronous: assistant_interrupted(usage), when the step's model call ends early (Stop, a failure)
    # after the server answered some of it (see stream_step).


class ApprovalPolicy(Protocol):
    def requirement(self, call: ToolCallRequest) -> dict[str, bool] | None:
        """The choices to offer a person before `call` may run, or None when it may run at once."""
        ...


class NoApprovals:
    def requirement(self, call: ToolCallRequest) -> dict[str, bool] | None:
        return None


class Toolbox(Protocol):
    def definitions(self) -> list[ToolDefinition]: ...
    def returns_direct(self, name: str) -> bool: ...
    async def execute(self, call: ToolCallRequest) -> ToolResult: ...


@dataclass
class StepResult:
    """One model response, complete."""

    message: ChatMessage
    finish_reason: str
    #: The call's tokens: {"input_tokens", "output_tokens", "estimated"}; estimated (providers/budget.py) when the
    #: server sent no count, or only one of the two (see step_usage).
    usage: dict[str, Any] = field(default_factory=dict)
    # The provider's index of each call in message.tool_calls (the key the sink was told at the start).
    indexes: list[int] = field(default_factory=list)
    # Calls whose arguments could not be decoded: index → why. They are answered with an error, not run.
    invalid_calls: dict[int, str] = field(default_factory=dict)
    reasoning: str = ""
    #: With a structured answer asked for (providers/structured.py), a step without tool calls: its JSON value
    #: when it matches the schema (`structured_ok`), else what is wrong with it (`answer_errors`).
    structured: Any = None
    structured_ok: bool = False
    answer_errors: list[str] = field(default_factory=list)


MAX_UNREADABLE_STEPS = 3


class AgentGaveUp(Exception):
    """The model kept answering with calls that cannot be read; the message says so to the person."""


@dataclass(frozen=True)
class AgentOutcome:
    reason: str  # done | return_direct | max_steps | waiting (calls await a person's decision)
    steps: int


@dataclass(frozen=True)
class DecidedCall:
    """A call of a paused step that a person approved (args possibly edited): it runs when the run resumes."""

    index: int
    call: ToolCallRequest


class RegistryToolbox:
    """The tools of a ToolRegistry, each call given its ToolContext (user, thread, call id, store)."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        disabled: frozenset[str] = frozenset(),
        context: Callable[[ToolCallRequest], ToolContext] | None = None,
        allowed: frozenset[str] | None = None,
        turned_off: frozenset[str] = frozenset(),
    ):
        self.registry = registry
        self.disabled = disabled
        self.context = context
        # The tools the thread's agent has (None: no restriction): a call of any other never runs.
        self.allowed = allowed
        # The tools the person turned off for the thread: not in `registry`, and a call of one never runs either.
        self.turned_off = turned_off

    def definitions(self) -> list[ToolDefinition]:
        return [ToolDefinition(t.name, t.description, t.parameters) for t in self.registry.all()]

    def returns_direct(self, name: str) -> bool:
        tool = self.registry.get(name)
        return bool(tool and tool.return_direct)

    async def execute(self, call: ToolCallRequest) -> ToolResult:
        if self.allowed is not None and call.name not in self.allowed:
            return ToolResult(status="error", content=NOT_AVAILABLE.format(name=call.name), duration_ms=0)
        if call.name in self.turned_off:
            return ToolResult(status="error", content=TURNED_OFF.format(name=call.name), duration_ms=0)
        if call.name in self.disabled:
            return ToolResult(status="error", content=f"Tool '{call.name}' is disabled.", duration_ms=0)
        unavailable = getattr(self.disabled, "unavailable", None)  # an MCP server not connected yet
        if unavailable is not None and self.registry.get(call.name) is None and (message := unavailable(call.name)):
            return ToolResult(status="error", content=message, duration_ms=0)
        context = self.context(call) if self.context else None
        return await execute_tool(self.registry, call.name, call.args, context=context)


async def run_agent(
    *,
    provider: Provider,
    messages: list[ChatMessage],
    toolbox: Toolbox,
    sink: AgentSink,
    max_steps: int,
    policy: ApprovalPolicy | None = None,
    resume: list[DecidedCall] | None = None,
    budget: ContextBudget | None = None,
    answer: AnswerFormat | None = None,
) -> AgentOutcome:
    """Run until the model answers without a tool call, a tool returns directly, calls await approval,
    or `max_steps` model calls have been made.

    `answer`: the final answer is a JSON value of that schema (providers/structured.py). Every step is asked for it
    (the model may still call tools first); the last step the limit allows must answer (`force`). The first step
    without tool calls is the answer: when it does not match, the model is told the errors (a user message of this
    run, not stored; a note tells the person) and tries again, within the step limit.

    `messages` is extended in place with every assistant and tool message. `resume` continues a step
    that waited for approval: its approved calls run first. ModelError and CancelledError propagate to
    the caller; tool failures never do (they become error results). With a `budget`, each model call is
    sent the history trimmed to the model's context window (`messages` itself is not trimmed), and the
    sink is told when messages were left out.
    """
    policy = policy or NoApprovals()
    definitions = toolbox.definitions()
    if resume:
        results = await run_calls([(d.index, d.call) for d in resume], {}, toolbox, sink)
        direct = any(toolbox.returns_direct(d.call.name) for d in resume)
        await sink.step_finished()
        messages.extend(tool_message(d.call, r) for d, r in zip(resume, results, strict=True))
        if direct:
            return AgentOutcome("return_direct", 0)
    unreadable_steps = 0
    noted, told = 0, ""
    for step_number in range(1, max_steps + 1):
        sent = messages
        if budget is not None:
            fitted = budget.fit(messages, definitions)
            sent = fitted.messages
            if fitted.dropped > noted:  # said once, and again only when more is left out
                noted, text = fitted.dropped, budget.note(fitted.dropped)
                # A history not read whole counts nothing (ContextBudget.unread): its note would only repeat.
                if text != told:
                    told = text
                    await sink.note(text)
        fmt = dataclasses.replace(answer, force=step_number == max_steps) if answer is not None else None
        step = await stream_step(provider, sent, definitions, sink, protocol=_protocol(provider, budget), answer=fmt)
        messages.append(step.message)
        for text in take_notes(provider):
            await sink.note(text)
        if not step.message.tool_calls:
            if answer is not None and not step.structured_ok:
                await sink.note(invalid_answer_note(step.answer_errors, step_number < max_steps))
                if step_number < max_steps:
                    messages.append(ChatMessage(role="user", content=retry_prompt(step.answer_errors, answer.schema)))
                    continue
                return AgentOutcome("max_steps", step_number)
            return AgentOutcome("done", step_number)
        # Each unreadable call goes back to the model as an error it can correct, a few times over.
        unreadable_steps = unreadable_steps + 1 if len(step.invalid_calls) == len(step.indexes) else 0
        if unreadable_steps > MAX_UNREADABLE_STEPS:
            raise AgentGaveUp(
                f"The model sent tool calls that could not be read {unreadable_steps} times in a row; "
                "the run stopped. A model with native tool calling, or another tool protocol, may do better."
            )
        calls = list(zip(step.indexes, step.message.tool_calls, strict=True))
        # A call whose arguments could not be read is answered with an error, never put to a person.
        waiting = {i: allow for i, call in calls if i not in step.invalid_calls and (allow := policy.requirement(call))}
        ready = [(i, call) for i, call in calls if i not in waiting]
        results = await run_calls(ready, step.invalid_calls, toolbox, sink)
        messages.extend(tool_message(call, result) for (_, call), result in zip(ready, results, strict=True))
        for index, allow in waiting.items():
            await sink.tool_call_awaiting(index, allow)
        direct = any(toolbox.returns_direct(call.name) for _, call in ready)
        await sink.step_finished()
        if waiting:
            return AgentOutcome("waiting", step_number)
        if direct:
            return AgentOutcome("return_direct", step_number)
    return AgentOutcome("max_steps", max_steps)


def invalid_answer_note(errors: list[str], again: bool) -> str:
    what = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
    then = "the model was asked again with the errors" if again else "the step limit leaves no further try"
    return f"The answer did not match the required JSON Schema ({what}): {then}."


def _protocol(provider: Provider, budget: ContextBudget | None) -> str:
    """How the request is written (for an estimate of its size): the budget's, else the provider's text protocol."""
    if budget is not None:
        return budget.protocol
    return getattr(provider, "protocol", "native")


def step_usage(
    reported: Usage | None,
    sent: list[ChatMessage],
    definitions: list[ToolDefinition],
    answer: ChatMessage,
    reasoning: str,
    protocol: str = "native",
) -> dict[str, Any]:
    """The call's tokens as the server counted them; a count it did not send is estimated as the context budget
    estimates (providers/budget.py: what was sent, what came back), and the whole marked `estimated`."""
    input_tokens = reported.input_tokens if reported is not None else None
    output_tokens = reported.output_tokens if reported is not None else None
    estimated = input_tokens is None or output_tokens is None
    if input_tokens is None:
        input_tokens = estimate(sent, definitions, protocol)
    if output_tokens is None:
        output_tokens = estimate_message(answer, protocol) + estimate_text(reasoning)
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, "estimated": estimated}


def take_notes(provider: Provider) -> list[str]:
    """What a provider wrapper noticed during the step (e.g. a tool call found in the text)."""
    take = getattr(provider, "take_notes", None)
    return take() if take else []


async def stream_step(
    provider: Provider,
    messages: list[ChatMessage],
    definitions: list[ToolDefinition],
    sink: AgentSink,
    *,
    protocol: str = "native",
    answer: AnswerFormat | None = None,
) -> StepResult:
    """One model call. `answer`: a structured answer is asked for (passed to the provider), and an answer without
    tool calls is validated against its schema before the sink is told the step completed."""
    await sink.assistant_started()
    text: list[str] = []
    reasoning: list[str] = []
    ended: dict[int, ToolCallEnd] = {}
    usage: Usage | None = None
    finish_reason = "stop"
    started = False  # a call began (its arguments may be all that came)
    try:
        asked = {"answer": answer} if answer is not None else {}  # a provider without structured answers never sees it
        async for event in provider.stream(messages, definitions, **asked):
            if isinstance(event, TextDelta):
                text.append(event.text)
                await sink.text_delta(event.text)
            elif isinstance(event, ToolCallArgsDelta):
                await sink.tool_call_args_delta(event.index, event.text)
            elif isinstance(event, ToolCallStart):
                started = True
                await sink.tool_call_started(event.index, event.id, event.name)
            elif isinstance(event, ToolCallEnd):
                ended[event.index] = event
            elif isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
                await sink.reasoning_delta(event.text)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, Finish):
                finish_reason = event.reason
    except BaseException:
        # The call ended without its end (Stop, a broken stream): the server read the prompt and wrote this much, so
        # it counts, estimated where the server sent no count. A call that never got an answer cost nothing.
        interrupted = getattr(sink, "assistant_interrupted", None)
        if (text or reasoning or started or usage) and interrupted is not None:
            partial = ChatMessage(role="assistant", content="".join(text))
            interrupted(step_usage(usage, messages, definitions, partial, "".join(reasoning), protocol))
        raise
    ends = [ended[index] for index in sorted(ended)]
    reply = ChatMessage(role="assistant", content="".join(text), tool_calls=[call_request(end) for end in ends])
    step = StepResult(
        message=reply,
        finish_reason=finish_reason,
        usage=step_usage(usage, messages, definitions, reply, "".join(reasoning), protocol),
        indexes=[end.index for end in ends],
        invalid_calls={end.index: end.error or "invalid arguments" for end in ends if end.args is None},
        reasoning="".join(reasoning),
    )
    if answer is not None and not step.message.tool_calls:
        checked = validate_answer(step.message.content, answer.schema)
        step.structured, step.structured_ok, step.answer_errors = checked.value, checked.valid, checked.errors
    await sink.assistant_completed(step)
    return step


def call_request(end: ToolCallEnd) -> ToolCallRequest:
    """The call as the conversation keeps it. One that could not be read keeps the model's own text, shown as it
    wrote it and sent back with it (as written by a text protocol; a native API, which refuses arguments that are
    not an object, gets `{}` and the text in the call's error result: providers/unreadable_calls.py)."""
    if end.args is not None:
        return ToolCallRequest(end.id, end.name, end.args)
    return ToolCallRequest(end.id, end.name, {}, raw=end.written if end.written is not None else end.raw)


async def run_calls(
    calls: list[tuple[int, ToolCallRequest]], invalid: dict[int, str], toolbox: Toolbox, sink: AgentSink
) -> list[ToolResult]:
    """Run calls concurrently; results come back in the calls' order."""

    async def run_one(index: int, call: ToolCallRequest) -> ToolResult:
        await sink.tool_call_running(index)
        if index in invalid:
            # The provider's or parser's own words say what was wrong and how to write the call.
            result = ToolResult(
                status="error", content=f"Your call to {call.name} could not be used: {invalid[index]}", duration_ms=0
            )
        else:
            result = await toolbox.execute(call)
        await sink.tool_call_completed(index, result)
        return result

    return list(await asyncio.gather(*(run_one(index, call) for index, call in calls)))


def tool_message(call: ToolCallRequest, result: ToolResult) -> ChatMessage:
    return ChatMessage(role="tool", content=result.content, tool_call_id=call.id, name=call.name, status=result.status)
