"""A structured final answer through the websocket, against the scripted model server: the request carries each
provider's native option (OpenAI-compatible response_format, Anthropic's final_answer tool, Ollama's format), a
text protocol gets the final_answer tool; an invalid answer is retried once with the errors, and the valid one is
stored beside the text, sent with message.completed and in snapshots."""

import json

import pytest

from chat.models import Message, Thread
from chat.runs import execute
from providers import openai as openai_module
from providers.anthropic import AnthropicProvider
from providers.ollama import OllamaProvider
from providers.openai import OpenAIProvider
from providers.structured import AnswerFormat, validate_answer
from providers.types import ChatMessage, ToolDefinition
from tests.support.model_server import (
    ErrorResponse,
    NDJSONResponse,
    ScriptedModelServer,
    SSEResponse,
    anthropic_sse_body,
    ollama_ndjson_body,
    openai_sse_body,
)

pytestmark = pytest.mark.django_db(transaction=True)

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}
PARIS = {"city": "Paris", "celsius": 21}


@pytest.fixture
def structured(monkeypatch):
    options = execute.RunOptions(answer=AnswerFormat(WEATHER, name="weather"))
    monkeypatch.setattr(execute, "run_options", lambda thread, agent=None: options)


@pytest.fixture
def server(settings):
    openai_module.RESPONSE_FORMAT_REFUSED.clear()
    with ScriptedModelServer() as scripted:

        def use(api, **extra):
            base = scripted.base_url if api == "openai" else scripted.root_url
            settings.AGENTWEB_LLM = {"api": api, "base_url": base, "model": "test-model", **extra}

        scripted.use = use
        yield scripted
    openai_module.RESPONSE_FORMAT_REFUSED.clear()


def completed(events):
    return [e for e in events if e["type"] == "message.completed"]


async def snapshot_of(connect, owner):
    thread = await Thread.objects.aget()
    other = await connect(owner)
    await other.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None)
    return (await other.until("thread.snapshot"))[-1]


async def test_openai_response_format_an_invalid_answer_is_retried_with_the_errors(connect, owner, server, structured):
    server.use("openai")
    server.enqueue(
        SSEResponse(openai_sse_body(text='{"city": "Paris"}')),  # celsius missing
        SSEResponse(openai_sse_body(text=json.dumps(PARIS))),
    )
    client = await connect(owner)
    await client.ask("weather in Paris?")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed" and events[-1]["reason"] == "done"
    first = server.carried(0)
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "weather", "schema": WEATHER, "strict": False},
    }
    assert first["tool_choice"] is None and first["tools"]  # the model may still call its tools
    # The second request tells the model what was wrong, after its own answer.
    retry = server.carried(1)
    assert retry["messages"][-2] == ("assistant", '{"city": "Paris"}')
    role, text = retry["messages"][-1]
    assert role == "user" and "celsius" in text and "required" in text
    notes = [e["text"] for e in events if e["type"] == "run.note"]
    assert len(notes) == 1 and "did not match" in notes[0] and "asked again" in notes[0]
    first_answer, second_answer = completed(events)
    assert "structured" not in first_answer
    assert second_answer["structured"] == PARIS
    stored = [m.structured async for m in Message.objects.filter(role="assistant").order_by("order")]
    assert stored == [None, PARIS]
    snapshot = await snapshot_of(connect, owner)
    answers = [m for m in snapshot["messages"] if m["role"] == "assistant"]
    assert "structured" not in answers[0] and answers[1]["structured"] == PARIS


async def test_anthropic_gets_the_final_answer_tool_and_its_call_is_the_answer(connect, owner, server, structured):
    server.use("anthropic")
    server.enqueue(
        SSEResponse(anthropic_sse_body(tool_calls=[{"id": "toolu_1", "name": "final_answer", "arguments": PARIS}]))
    )
    client = await connect(owner)
    await client.ask("weather in Paris?")
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed" and events[-1]["reason"] == "done"
    carried = server.carried(0)
    assert carried["path"] == "/v1/messages"
    assert "final_answer" in carried["tools"] and len(carried["tools"]) > 1
    assert carried["tool_choice"] is None  # forced only on the step that must answer
    wire = next(t for t in server.requests[0]["json"]["tools"] if t["name"] == "final_answer")
    assert wire["input_schema"] == WEATHER
    [answer] = completed(events)
    assert answer["structured"] == PARIS and json.loads(answer["content"]) == PARIS
    assert not [e for e in events if e["type"].startswith("tool_call.")]  # no card: the call is the answer
    assert (await Message.objects.aget(role="assistant")).structured == PARIS


async def test_ollama_gets_format(connect, owner, server, structured):
    server.use("ollama")
    server.enqueue(NDJSONResponse(ollama_ndjson_body(text=json.dumps(PARIS))))
    client = await connect(owner)
    await client.ask("weather in Paris?")
    events = await client.run_to_end()
    assert server.carried(0)["format"] == WEATHER
    assert completed(events)[0]["structured"] == PARIS


async def test_a_text_protocol_gets_the_final_answer_tool(connect, owner, server, structured):
    server.use("openai", tool_protocol="hermes")
    call = json.dumps({"name": "final_answer", "arguments": PARIS})
    server.enqueue(SSEResponse(openai_sse_body(text=f"<tool_call>\n{call}\n</tool_call>")))
    client = await connect(owner)
    await client.ask("weather in Paris?")
    events = await client.run_to_end()
    carried = server.carried(0)
    assert carried["response_format"] is None and carried["tools"] == []
    assert '"final_answer"' in carried["system"]
    assert completed(events)[0]["structured"] == PARIS


async def test_a_server_that_refuses_response_format_gets_the_final_answer_tool(connect, owner, server, structured):
    server.use("openai")
    refusal = {"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}}
    call = {"id": "c1", "name": "final_answer", "arguments": PARIS}
    server.enqueue(ErrorResponse(400, refusal), SSEResponse(openai_sse_body(tool_calls=[call])))
    client = await connect(owner)
    await client.ask("weather in Paris?")
    events = await client.run_to_end()
    assert server.carried(0)["response_format"] is not None
    again = server.carried(1)
    assert again["response_format"] is None and "final_answer" in again["tools"]
    assert completed(events)[0]["structured"] == PARIS


async def test_without_a_schema_nothing_changes(connect, owner, server):
    server.use("openai")
    server.enqueue(SSEResponse(openai_sse_body(text="Sunny.")))
    client = await connect(owner)
    await client.ask("weather?")
    events = await client.run_to_end()
    assert server.carried(0)["response_format"] is None
    assert "structured" not in completed(events)[0]


# --- the request each provider builds on the step that must answer ----------------------------------------------

TOOLS = [ToolDefinition("calculator", "sums", {"type": "object", "properties": {}})]
ASK = [ChatMessage(role="user", content="weather?")]
FORCED = AnswerFormat(WEATHER, name="weather", force=True)


def test_the_step_that_must_answer():
    openai = OpenAIProvider(base_url="http://x/v1", model="m").request_body(ASK, TOOLS, answer=FORCED)
    assert openai["tool_choice"] == "none" and openai["response_format"]["json_schema"]["schema"] == WEATHER
    anthropic = AnthropicProvider(base_url="http://x", model="m").request_body(ASK, TOOLS, answer=FORCED)
    assert [t["name"] for t in anthropic["tools"]] == ["final_answer"]
    assert anthropic["tool_choice"] == {"type": "tool", "name": "final_answer"}
    ollama = OllamaProvider(base_url="http://x", model="m").request_body(ASK, TOOLS, answer=FORCED)
    assert "tools" not in ollama and ollama["format"] == WEATHER


def test_validation():
    assert validate_answer('```json\n{"city": "Oslo", "celsius": -3}\n```', WEATHER).value == {
        "city": "Oslo",
        "celsius": -3,
    }
    assert "not valid JSON" in validate_answer("Sunny", WEATHER).errors[0]
    errors = validate_answer('{"city": 3, "celsius": 1, "x": 0}', WEATHER).errors
    assert any("city" in e for e in errors) and any("'x'" in e for e in errors)
