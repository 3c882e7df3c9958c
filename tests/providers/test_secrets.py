"""API keys and the credentials of a base URL (http://user:password@host/v1) never reach a text the app writes:
not an error message, not a label, not httpx's own log line. Against a real local model server that echoes them."""

import base64
import json
import logging
import re
from urllib.parse import quote, quote_plus

import httpx
import pytest

from providers.anthropic import AnthropicProvider
from providers.config import ModelConfig
from providers.ollama import OllamaProvider
from providers.openai import OpenAIProvider
from providers.secrets import Redactor, basic_auth, masked_url
from providers.types import ModelError
from tests.providers.test_faults import KITS
from tests.providers.test_openai import collect
from tests.support.model_server import EchoRequest, ErrorResponse, ScriptedModelServer, SSEResponse

KEY = "sk-live-SECRET-4f9a8b7c6d5e"
PASSWORD = "pa55-w0rd"
PROVIDERS = {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "ollama": OllamaProvider}


def near_the_cut(secret: str, lead: int = 0) -> str:
    """A server's message that echoes `secret` 12 characters before the 300th, where the text is cut (`lead`: the
    characters that come before the message in the quoted text, e.g. '{"detail": "')."""
    padding = "x" * (300 - 12 - lead - len("Request refused. "))
    return f"Request refused. {padding}{secret} is not a valid API key."


IN_A_DETAIL = len('{"detail": "')


def with_credentials(url: str, user: str = "alice", password: str = PASSWORD) -> str:
    return url.replace("http://", f"http://{user}:{password}@", 1)


@pytest.fixture
def server():
    with ScriptedModelServer() as s:
        yield s


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0)) as c:
        yield c


@pytest.fixture(params=KITS, ids=lambda kit: kit.name)
def kit(request):
    return request.param


async def failure(provider) -> str:
    with pytest.raises(ModelError) as caught:
        await collect(provider)
    return str(caught.value)


@pytest.mark.parametrize(
    "body",
    [near_the_cut(KEY), {"error": {"detail": near_the_cut(KEY, IN_A_DETAIL)}}],
    ids=["plain text", "error object without a message"],
)
async def test_a_key_echoed_where_the_error_text_is_cut_is_masked_whole(server, client, kit, body):
    server.enqueue(ErrorResponse(401, body))
    text = await failure(kit.provider(server, client, api_key=KEY))
    assert "sk-live" not in text and "SECRET" not in text
    assert "Request refused." in text


async def test_a_key_echoed_in_a_mid_stream_error_near_the_cut_is_masked_whole(server, client):
    detail = near_the_cut(KEY, IN_A_DETAIL)
    server.enqueue(SSEResponse(f'data: {{"error": {{"detail": "{detail}"}}}}\n\n'))
    text = await failure(OpenAIProvider(base_url=server.base_url, model="m", api_key=KEY, client=client))
    assert 'reported an error mid-stream: {"detail": "Request refused.' in text
    assert "sk-live" not in text


async def test_a_key_echoed_in_a_stream_event_that_is_not_json_is_masked_whole(server, client):
    server.enqueue(SSEResponse(f"data: {near_the_cut(KEY)}\n\n"))
    text = await failure(OpenAIProvider(base_url=server.base_url, model="m", api_key=KEY, client=client))
    assert "not JSON" in text
    assert "sk-live" not in text


async def test_a_short_key_is_masked_where_it_stands_alone_and_words_are_left_whole(server, client):
    server.enqueue(ErrorResponse(401, {"error": {"message": "expected a valid key, got x"}}))
    text = await failure(OpenAIProvider(base_url=server.base_url, model="m", api_key="x", client=client))
    assert text.endswith("401 Unauthorized: expected a valid key, got ***")


async def test_credentials_in_the_base_url_are_sent_as_basic_auth(server, client, kit):
    server.enqueue(kit.answer("hi"))
    provider = PROVIDERS[kit.name](base_url=with_credentials(kit.url(server)), model="m", client=client)
    got = await collect(provider)
    assert got.text == "hi"
    expected = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert server.requests[0]["headers"]["Authorization"] == expected


async def test_credentials_in_the_base_url_are_not_in_the_label_or_repr(server, client, kit):
    provider = PROVIDERS[kit.name](base_url=with_credentials(kit.url(server)), model="m", client=client)
    assert provider.label == f"m · {kit.url(server)}"
    assert PASSWORD not in repr(provider) and "alice" not in repr(provider)


async def test_credentials_in_the_base_url_are_not_in_an_error(server, client, kit):
    server.enqueue(ErrorResponse(500, {"error": {"message": f"denied for alice:{PASSWORD}"}}))
    provider = PROVIDERS[kit.name](base_url=with_credentials(kit.url(server)), model="m", client=client)
    text = await failure(provider)
    assert text.startswith(f"The model server at {kit.url(server)} answered 500")
    assert PASSWORD not in text


async def test_credentials_in_the_base_url_are_not_in_httpx_request_log_line(server, client, caplog):
    server.enqueue(SSEResponse('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'))
    provider = OpenAIProvider(base_url=with_credentials(server.base_url), model="m", client=client)
    with caplog.at_level(logging.INFO, logger="httpx"):
        await collect(provider)
    assert f"HTTP Request: POST {server.base_url}/chat/completions" in caplog.text
    assert PASSWORD not in caplog.text


def test_the_label_a_browser_sees_has_no_credentials():
    config = ModelConfig(api="openai", base_url=f"https://bob:{PASSWORD}@models.example/v1", model="qwen3")
    assert config.public_info()["label"] == "qwen3 · https://models.example/v1"


async def test_basic_credentials_a_proxy_echoes_in_any_encoding_are_masked(server, client, kit):
    password = "pa55/w0rd+x é"
    url = kit.url(server).replace("http://", "http://alice:pa55%2Fw0rd%2Bx%20%C3%A9@", 1)
    server.enqueue(EchoRequest(401))
    text = await failure(PROVIDERS[kit.name](base_url=url, model="m", client=client))
    sent = server.requests[0]["headers"]["Authorization"]
    assert sent.startswith("Basic ") and "Authorization: ***" in text
    encoded = sent.removeprefix("Basic ")
    for secret in (encoded, encoded[:16], password, "pa55%2Fw0rd"):
        assert secret not in text


@pytest.mark.parametrize(
    "form",
    [
        lambda s: s,
        lambda s: quote(s, safe=""),
        lambda s: re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(s, safe="")),
        lambda s: quote_plus(s),
        lambda s: json.dumps(s)[1:-1],
        lambda s: json.dumps(s).replace("/", "\\/")[1:-1],
    ],
    ids=["raw", "percent-encoded", "percent-encoded lower case", "form-encoded", "JSON", "JSON with \\/"],
)
async def test_a_key_echoed_percent_encoded_or_json_escaped_is_masked(server, client, kit, form):
    key = "sk-live/SECRET+4f9a=8b7c 6d5e"
    server.enqueue(ErrorResponse(400, f"bad key {form(key)} for this model"))
    text = await failure(kit.provider(server, client, api_key=key))
    assert "bad key *** for this model" in text


def test_the_authorization_value_and_its_base64_are_masked_whole():
    redact = Redactor.for_request(url="https://bob:hunter22@models.example/v1")
    value = basic_auth("bob", "hunter22")
    assert redact(f"got {value}; token {value.removeprefix('Basic ')}") == "got ***; token ***"


def test_a_text_cut_in_the_middle_of_a_secret_keeps_none_of_it():
    redact = Redactor(["sk-live-SECRET-4f9a8b7c6d5e"])
    assert redact("refused: sk-live-SEC", cut=True) == "refused: ***"
    assert redact("refused: sk-live-SEC") == "refused: sk-live-SEC"  # not cut: a text that happens to end so


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://TOKEN-abc@h.example/mcp", "https://••••@h.example/mcp"),
        (
            "https://h.example/mcp?access_token=a%2Fb&x-api-key=z&page=2#top",
            "https://h.example/mcp?access_token=••••&x-api-key=••••&page=2#top",
        ),
        ("https://h.example/mcp?sig=&q=token", "https://h.example/mcp?sig=&q=token"),
    ],
    ids=["a user name alone (a token)", "secret parameters by name", "empty and non-secret values"],
)
def test_a_masked_url_shows_no_password_nor_token(url, shown):
    assert masked_url(url) == shown
