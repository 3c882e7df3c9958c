"""What a model without native tool calling is sent: tools in the system prompt, calls and results as text.

`render_messages` rewrites a neutral conversation for a text protocol:
- the tool specs go into the system prompt in the protocol's format (appended to an existing system
  message, or as a new first one);
- an assistant turn's earlier calls are written back as the protocol's markup after its text, so the
  model sees the same format it is asked to write;
- tool results become a user turn of `<tool_response>` blocks (consecutive results share one turn, as
  parallel calls' results do in the Hermes chat template).

The result has no tool calls and no tool roles, so any chat server accepts it as plain conversation.
"""

from __future__ import annotations

import json
from typing import Any

from ..types import ChatMessage, ToolCallRequest, ToolDefinition
from .coerce import schema_types

PROTOCOLS = ("hermes", "xml")
#: The blocks each protocol's prompt shows the model besides its calls: the tool list, the results it is given and
#: (xml) its rules and example call. A small model copies them into its answer; the parsers never show them.
HERMES_PROMPT_BLOCKS = ("tool_response", "tools")
XML_PROMPT_BLOCKS = ("tool_response", "tools", "rules", "example_function_name")


def render_messages(protocol: str, messages: list[ChatMessage], tools: list[ToolDefinition]) -> list[ChatMessage]:
    _check(protocol)
    out: list[ChatMessage] = []
    rest = list(messages)
    if tools:
        prompt = system_prompt(protocol, tools)
        if rest and rest[0].role == "system":
            first = rest.pop(0)
            prompt = f"{first.content.rstrip()}\n\n{prompt}" if first.content.strip() else prompt
        out.append(ChatMessage(role="system", content=prompt))
    previous_was_result = False
    for message in rest:
        if message.role == "tool":
            response = tool_response(protocol, message)
            if previous_was_result:
                out[-1] = ChatMessage(role="user", content=f"{out[-1].content}\n{response}")
            else:
                out.append(ChatMessage(role="user", content=response))
            previous_was_result = True
            continue
        previous_was_result = False
        if message.role == "assistant" and message.tool_calls:
            calls = "\n".join(call_markup(protocol, call) for call in message.tool_calls)
            text = message.content.rstrip()
            out.append(ChatMessage(role="assistant", content=f"{text}\n{calls}" if text else calls))
        else:
            out.append(ChatMessage(role=message.role, content=message.content + images_not_sent(message)))
    return out


def images_not_sent(message: ChatMessage) -> str:
    """A text tool protocol sends text only: the model is told an image was attached and not sent."""
    if not message.images:
        return ""
    names = ", ".join(image.name or "an image" for image in message.images)
    return (
        f"\n\n[Attached image(s) not sent: {names}. This model is reached through a text tool protocol, "
        "which sends text only.]"
    )


def system_prompt(protocol: str, tools: list[ToolDefinition]) -> str:
    _check(protocol)
    return hermes_system_prompt(tools) if protocol == "hermes" else xml_system_prompt(tools)


def call_markup(protocol: str, call: ToolCallRequest) -> str:
    _check(protocol)
    if call.raw is not None and call.raw.lstrip().startswith("<"):
        return call.raw  # a call that could not be read, as the model wrote it in its text
    if call.raw is not None:  # unreadable arguments of a native call (the protocol changed since)
        arguments = call.raw if call.raw.strip() else "{}"
        return f'<tool_call>\n{{"name": {json.dumps(call.name)}, "arguments": {arguments}}}\n</tool_call>'
    if protocol == "hermes":
        return (
            f"<tool_call>\n{json.dumps({'name': call.name, 'arguments': call.args}, ensure_ascii=False)}\n</tool_call>"
        )
    return xml_element(call.name, call.args)


def tool_response(protocol: str, message: ChatMessage) -> str:
    _check(protocol)
    failed = message.status == "error"
    if protocol == "hermes":
        payload: dict[str, Any] = {"name": message.name or "", "content": _json_or_text(message.content)}
        if failed:
            payload["status"] = "error"
        return f"<tool_response>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_response>"
    lines = ["<tool_response>", f"  <tool_name>{message.name or ''}</tool_name>"]
    if failed:
        lines.append("  <status>error</status>")
    lines += [f"  <result>{message.content}</result>", "</tool_response>"]
    return "\n".join(lines)


# --- Hermes --------------------------------------------------------------------------------


def hermes_system_prompt(tools: list[ToolDefinition]) -> str:
    specs = ",\n".join(
        json.dumps(
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            },
            ensure_ascii=False,
        )
        for t in tools
    )
    return (
        "# Tools\n\n"
        "You are a function calling AI model. You may call one or more functions to assist with the user query. "
        "Don't make assumptions about what values to plug into functions.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n[{specs}]\n</tools>\n\n"
        "For each function call, return a JSON object with the function name and arguments within "
        "<tool_call></tool_call> XML tags:\n"
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\n'
        "Function results come back to you within <tool_response></tool_response> XML tags. "
        "When no function is needed, answer directly."
    )


def _function(tool: ToolDefinition) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


# --- morphXml ------------------------------------------------------------------------------

_XML_RULES = """<rules>
- To call a function, write one XML element whose tag name is the function name.
- Put each parameter in a child element named after it.
- Values must follow the schema: write numbers, booleans and enum values as they are; for an array,
  repeat the parameter's element once per item; for an object, use child elements or JSON.
- Do not add or remove functions or parameters. Give each required parameter once.
- You may call several functions in one turn, or the same function more than once.
- Function results come back to you within <tool_response></tool_response> tags.
</rules>"""

_XML_EXAMPLE = """For each function call, write the function name and parameters in this format:
<example_function_name>
  <example_parameter_1>value_1</example_parameter_1>
  <example_parameter_2>This is the value for the second parameter
that can span
multiple lines</example_parameter_2>
</example_function_name>"""


def xml_system_prompt(tools: list[ToolDefinition]) -> str:
    definitions = "\n\n".join(_xml_tool_definition(tool) for tool in tools)
    return "\n\n".join(
        [
            "# Tools\nYou may call one or more functions to assist with the user query.",
            f"You have access to the following functions:\n<tools>\n{definitions}\n</tools>",
            _XML_RULES,
            _XML_EXAMPLE,
        ]
    )


def _xml_tool_definition(tool: ToolDefinition) -> str:
    lines = [f"name: {tool.name}"]
    if tool.description:
        lines.append(f"description: {tool.description}")
    lines.append("parameters:")
    properties = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or ())
    if not properties:
        lines.append("  (none)")
    for name in sorted(properties):
        schema = properties[name] if isinstance(properties[name], dict) else {}
        extras = []
        if "enum" in schema:
            extras.append("enum: " + json.dumps(schema["enum"], ensure_ascii=False))
        if "default" in schema:
            extras.append("default: " + json.dumps(schema["default"], ensure_ascii=False))
        if schema.get("description"):
            extras.append(str(schema["description"]))
        need = "required" if name in required else "optional"
        extra = f" - {'; '.join(extras)}" if extras else ""
        lines.append(f"  - {name} ({_type_label(schema)}, {need}){extra}")
    lines.append("schema: " + json.dumps(tool.parameters, ensure_ascii=False))
    return "\n".join(lines)


def _type_label(schema: dict[str, Any]) -> str:
    types = schema_types(schema) or ["any"]
    label = " | ".join(types)
    items = schema.get("items")
    if label == "array" and isinstance(items, dict):
        return f"array<{_type_label(items)}>"
    return label


def xml_element(name: str, value: Any, indent: str = "") -> str:
    """A value as morphXml: objects as child elements, arrays as the element repeated, text as written."""
    if isinstance(value, list):
        if not value:
            return f"{indent}<{name}></{name}>"
        return "\n".join(xml_element(name, item, indent) for item in value)
    if isinstance(value, dict):
        if not value:
            return f"{indent}<{name}></{name}>"
        inner = "\n".join(xml_element(key, item, indent + "  ") for key, item in value.items())
        return f"{indent}<{name}>\n{inner}\n{indent}</{name}>"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"{indent}<{name}>{text}</{name}>"


def _json_or_text(content: str) -> Any:
    """A result that is a JSON object or array is embedded as such rather than as an escaped string."""
    stripped = content.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return content


def _check(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise ValueError(f"Unknown tool protocol {protocol!r}; use one of: {', '.join(PROTOCOLS)}.")
