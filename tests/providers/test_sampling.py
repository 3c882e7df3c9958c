"""top_p (an agent's sampling setting, docs/agents.md) in each API's request, beside temperature and the limit."""

from providers.anthropic import AnthropicProvider
from providers.config import ModelConfig, build_provider
from providers.ollama import OllamaProvider
from providers.openai import OpenAIProvider
from providers.types import ChatMessage

HI = [ChatMessage(role="user", content="hi")]


def inner(provider):
    while hasattr(provider, "inner") or hasattr(provider, "provider"):
        provider = getattr(provider, "inner", None) or provider.provider
    return provider


def test_each_api_sends_top_p_as_it_takes_it():
    openai = OpenAIProvider(base_url="http://x/v1", model="m", temperature=0.2, top_p=0.9, max_tokens=10)
    assert {k: openai.request_body(HI, [])[k] for k in ("temperature", "top_p", "max_tokens")} == {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 10,
    }
    anthropic = AnthropicProvider(model="m", top_p=0.9, max_tokens=10)
    assert (anthropic.request_body(HI, [])["top_p"], anthropic.request_body(HI, [])["max_tokens"]) == (0.9, 10)
    assert "top_p" not in OpenAIProvider(base_url="http://x/v1", model="m").request_body(HI, [])


def test_build_provider_passes_top_p_to_every_api():
    for api in ("openai", "anthropic", "ollama"):
        provider = inner(build_provider(ModelConfig(api=api, model="m", top_p=0.5, temperature=0.1, max_tokens=7)))
        body = provider.request_body(HI, [])
        if isinstance(provider, OllamaProvider):
            assert body["options"] == {"num_predict": 7, "temperature": 0.1, "top_p": 0.5}
        else:
            assert (body["top_p"], body["temperature"], body["max_tokens"]) == (0.5, 0.1, 7)
