"""A structured final answer: the run's answer is a JSON value that a JSON Schema validates.

A provider is asked for it with `stream(messages, tools, answer=AnswerFormat(...))` and does what its server does
best:

- OpenAI-compatible: `response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}` on
  every step (tool calls are not bound by it; the answer's text is); a server that refuses the option (a 400/422
  naming it) is remembered and gets the `final_answer` tool instead.
- Anthropic: a `final_answer` tool whose input schema is the answer's, forced with `tool_choice` when the step must
  answer (`force`: the run's last step, or no other tool offered).
- Ollama: `format` (the schema itself).
- A text tool protocol (hermes, xml): the `final_answer` tool, described in the prompt like the others.

Whichever way it travels, the provider hands the answer back as the step's text: a `final_answer` call comes out as
a TextDelta of its arguments (`final_answer_as_text`), never as a tool call the run would have to execute and
answer. So the loop (chat/agent.py) sees one thing: a step without tool calls whose text should be the JSON value,
validated here (`validate_answer`, Draft 2020-12).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from .types import StreamEvent, TextDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart, ToolDefinition

FINAL_ANSWER_TOOL = "final_answer"
FINAL_ANSWER_DESCRIPTION = (
    "Give your final answer to the user with this tool, once you have it: its arguments are the answer, in the "
    "shape its schema asks for. Call it alone, and only once."
)


@dataclass(frozen=True)
class AnswerFormat:
    """The JSON Schema the run's final answer must match. `force`: this step must answer (no further tool calls)."""

    schema: dict[str, Any] = field(default_factory=dict)
    name: str = "answer"
    #: OpenAI's strict mode (the server constrains decoding to the schema). Only for schemas that follow its
    #: subset; off by default, since our own validation is what decides.
    strict: bool = False
    force: bool = False


def final_answer_tool(answer: AnswerFormat) -> ToolDefinition:
    """The tool a provider without a native structured output offers: its parameters are the answer's schema. A
    schema whose root is not an object is wrapped: the answer is then the call's `value`."""
    return ToolDefinition(FINAL_ANSWER_TOOL, FINAL_ANSWER_DESCRIPTION, tool_parameters(answer.schema))


def tool_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"value": schema}, "required": ["value"]}


def unwrap(schema: dict[str, Any], value: Any) -> Any:
    """The answer from a final_answer call's arguments (see tool_parameters)."""
    if schema.get("type") != "object" and isinstance(value, dict) and set(value) == {"value"}:
        return value["value"]
    return value


def with_final_answer(tools: list[ToolDefinition], answer: AnswerFormat | None) -> list[ToolDefinition]:
    """`tools` with the final_answer tool (alone, when the step must answer)."""
    if answer is None:
        return tools
    final = final_answer_tool(answer)
    return [final] if answer.force else [*[t for t in tools if t.name != FINAL_ANSWER_TOOL], final]


async def final_answer_as_text(
    events: AsyncIterator[StreamEvent], schema: dict[str, Any]
) -> AsyncIterator[StreamEvent]:
    """`events` with the final_answer call turned into the step's text: its arguments, as JSON (unwrapped, see
    tool_parameters), after whatever text came before. Other calls pass on untouched. Arguments that could not be
    read go out as the model wrote them, and the validation says what is wrong with them."""
    final: set[int] = set()
    async for event in events:
        if isinstance(event, ToolCallStart) and event.name == FINAL_ANSWER_TOOL:
            final.add(event.index)
        elif isinstance(event, ToolCallArgsDelta) and event.index in final:
            continue  # the whole answer comes with the call's end, unwrapped
        elif isinstance(event, ToolCallEnd) and (event.index in final or event.name == FINAL_ANSWER_TOOL):
            if event.args is None:
                yield TextDelta(event.raw)
            else:
                yield TextDelta(json.dumps(unwrap(schema, event.args), ensure_ascii=False))
        else:
            yield event


@dataclass(frozen=True)
class Checked:
    """An answer's text checked against the schema: the value when it matches, else what is wrong (non-empty)."""

    value: Any = None
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors


def validate_answer(text: str, schema: dict[str, Any]) -> Checked:
    """The answer's text as JSON (a ```json fence around it is allowed), validated with Draft 2020-12."""
    from jsonschema import Draft202012Validator

    body = strip_fence(text)
    if not body:
        return Checked(errors=["The answer is empty: it must be a JSON value matching the schema."])
    try:
        value = json.loads(body)
    except ValueError as exc:
        return Checked(errors=[f"The answer is not valid JSON: {exc}."])
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        return Checked(errors=[_describe(e) for e in errors[:10]])
    return Checked(value=value)


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"


def strip_fence(text: str) -> str:
    body = text.strip()
    if body.startswith("```") and body.endswith("```") and len(body) >= 6:
        body = body[3:-3]
        first, _, rest = body.partition("\n")
        body = rest if first.strip().lower() in ("json", "") else body
    return body.strip()


def retry_prompt(errors: list[str], schema: dict[str, Any]) -> str:
    """What the model is told when its answer did not match: the errors, and the schema once more."""
    listed = "\n".join(f"- {e}" for e in errors)
    return (
        "Your final answer does not match the required JSON Schema:\n"
        f"{listed}\n"
        "Answer again with only a JSON value that matches this schema:\n"
        f"{json.dumps(schema, ensure_ascii=False)}"
    )


def check_schema(schema: Any) -> list[str]:
    """What is wrong with a schema itself (for whoever sets one: an agent's form or import), [] when it is usable."""
    from jsonschema import Draft202012Validator, SchemaError

    if not isinstance(schema, dict):
        return ["The schema must be a JSON object."]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return [exc.message]
    return []
