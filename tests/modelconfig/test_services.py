"""Which models can be picked and which configuration a choice means; a row's settings reach the provider."""

import pytest

from modelconfig.services import UnknownModel, available_models, check_choice, config_for
from providers.config import ModelConfig, build_provider
from providers.types import ChatMessage
from tests.support.model_server import (
    NDJSONResponse,
    ScriptedModelServer,
    SSEResponse,
    anthropic_sse_body,
    ollama_ndjson_body,
    openai_sse_body,
)

from .conftest import SECRET

pytestmark = pytest.mark.django_db


def test_without_rows_the_environment_is_the_one_model(settings):
    assert available_models(groups=frozenset()) == [
        {"id": "default", "name": "Demo model (offline, scripted)", "label": "Demo model (offline, scripted)",
         "is_demo": True, "context_window": None}
    ]  # fmt: skip
    config, info = config_for(None)
    assert config == ModelConfig.from_mapping(settings.AGENTWEB_LLM)
    assert (info["id"], info["is_demo"]) == ("default", True)
    assert config_for("42")[1]["id"] == "default"


def test_the_environment_model_is_listed_with_its_label(settings):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "api": "openai", "base_url": "http://h:1/v1", "model": "m"}
    [entry] = available_models(groups=frozenset())
    assert entry == {
        "id": "default",
        "name": "m · http://h:1/v1",
        "label": "m · http://h:1/v1",
        "is_demo": False,
        "context_window": None,
    }


def test_enabled_rows_are_listed_and_the_default_row_replaces_the_environment(make_row):
    local = make_row(name="Local")
    make_row(name="Off", enabled=False)
    assert [e["id"] for e in available_models(groups=frozenset())] == ["default", str(local.pk)]
    assert config_for(None)[1]["id"] == "default"  # no row is the default yet

    claude = make_row(name="Claude", api="anthropic", model="claude-sonnet-4-5", is_default=True)
    entries = available_models(groups=frozenset())
    assert [e["name"] for e in entries] == ["Claude", "Local"]
    assert all(set(e) == {"id", "name", "label", "is_demo", "context_window"} for e in entries)
    assert SECRET not in str(entries)
    assert config_for(None)[1]["id"] == str(claude.pk)
    assert config_for("default")[1]["id"] == str(claude.pk)
    assert config_for(str(local.pk))[0].model == "qwen3"


def test_a_disabled_or_unknown_choice_falls_back_to_the_default_and_cannot_be_picked(make_row):
    off = make_row(name="Off", enabled=False)
    default = make_row(name="Default", is_default=True)
    assert config_for(str(off.pk))[1]["id"] == str(default.pk)
    for bad in (str(off.pk), "999", "abc", "-1"):
        with pytest.raises(UnknownModel):
            check_choice(bad, groups=frozenset())
    assert check_choice("default", groups=frozenset())["id"] == str(default.pk)
    assert check_choice(str(default.pk), groups=frozenset())["label"] == "Default"


def test_a_demo_row_is_labelled_as_the_demo(make_row):
    row = make_row(name="Playground", api="demo", model="", base_url="")
    assert "Demo" in row.label and row.public_info()["is_demo"]
    assert "Demo" in make_row(name="Demo", api="demo").label


def test_a_row_becomes_a_config_with_the_transport_settings_of_the_environment(make_row, settings):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "max_attempts": 3, "timeout": 120.0, "read_timeout": 30.0}
    row = make_row(max_output_tokens=512, temperature=0.3, context_window=4096, tool_protocol="hermes")
    config = row.to_config()
    assert (config.api, config.base_url, config.model, config.api_key, config.tool_protocol) == (
        "openai",
        "http://127.0.0.1:9/v1",
        "qwen3",
        SECRET,
        "hermes",
    )
    assert (config.max_tokens, config.temperature, config.context_window) == (512, 0.3, 4096)
    assert (config.max_attempts, config.timeout, config.read_timeout, config.connect_timeout) == (3, 120.0, 30.0, None)


async def first_request(provider, server):
    async for _ in provider.stream([ChatMessage("user", "hi")], []):
        pass
    return server.requests[0]["json"]


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
async def test_max_tokens_and_temperature_reach_every_api(api):
    with ScriptedModelServer() as server:
        body = {
            "openai": SSEResponse(openai_sse_body(text="ok")),
            "anthropic": SSEResponse(anthropic_sse_body(text="ok")),
            "ollama": NDJSONResponse(ollama_ndjson_body(text="ok")),
        }[api]
        server.enqueue(body)
        url = server.base_url if api == "openai" else server.root_url
        config = ModelConfig(api=api, base_url=url, model="m", max_tokens=321, temperature=0.25)
        sent = await first_request(build_provider(config), server)
    if api == "ollama":
        assert sent["options"] == {"num_predict": 321, "temperature": 0.25}
    else:
        assert (sent["max_tokens"], sent["temperature"]) == (321, 0.25)


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
async def test_without_them_each_api_keeps_its_own_defaults(api):
    with ScriptedModelServer() as server:
        server.enqueue(
            NDJSONResponse(ollama_ndjson_body(text="ok"))
            if api == "ollama"
            else SSEResponse(anthropic_sse_body(text="ok") if api == "anthropic" else openai_sse_body(text="ok"))
        )
        url = server.base_url if api == "openai" else server.root_url
        sent = await first_request(build_provider(ModelConfig(api=api, base_url=url, model="m")), server)
    assert "temperature" not in sent and "options" not in sent
    assert sent.get("max_tokens") == (4096 if api == "anthropic" else None)


def test_the_settings_mapping_may_carry_the_new_numbers():
    config = ModelConfig.from_mapping({"api": "openai", "model": "m", "max_tokens": "100", "context_window": 2048})
    assert (config.max_tokens, config.context_window, config.temperature) == (100, 2048, None)
    assert "api_key" not in repr(ModelConfig(api_key="sk-x"))
