"""The retry policy, Retry-After parsing, and building providers (with retries and timeouts) from settings.

How retries behave against a real failing server is in test_faults.py.
"""

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from providers.anthropic import AnthropicProvider
from providers.config import ModelConfig, build_provider
from providers.demo import DemoProvider
from providers.http_provider import retry_after_seconds
from providers.ollama import OllamaProvider
from providers.openai import OpenAIProvider
from providers.protocols import NativeLeakGuardProvider, TextProtocolProvider
from providers.retry import RetryingProvider, RetryPolicy
from providers.types import ChatMessage, Finish, ModelError, TextDelta


class Waits(list):
    """A stand-in for asyncio.sleep that records how long the retry layer asked to wait."""

    async def __call__(self, seconds):
        self.append(seconds)


# --- the policy -----------------------------------------------------------------------------------


def test_retry_after_is_honoured_up_to_the_cap():
    policy = RetryPolicy(max_retry_after=60)
    rng = random.Random(1)
    assert policy.wait(1, 0.0, rng) == 0.0
    assert policy.wait(2, 12.5, rng) == 12.5
    assert policy.wait(1, 60.0, rng) == 60.0
    assert policy.wait(1, 61.0, rng) is None  # longer than we would keep a person waiting: fail now


def test_backoff_grows_with_jitter_and_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0)
    rng = random.Random(7)
    for retry, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (9, 3.0)]:
        waits = {policy.wait(retry, None, rng) for _ in range(50)}
        assert all(ceiling / 2 <= w <= ceiling for w in waits)
        assert len(waits) > 1  # jittered, so that many clients do not come back in step


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"Retry-After": " 1.5 "}, 1.5),
        ({"Retry-After": "0"}, 0.0),
        ({"Retry-After": "-3"}, 0.0),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),  # the precise one wins (OpenAI, Anthropic)
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": "nan"}, None),
        ({}, None),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past: no wait
    ],
)
def test_retry_after_forms(headers, expected):
    assert retry_after_seconds(httpx.Headers(headers)) == expected


def test_retry_after_as_a_future_http_date():
    when = datetime.now(UTC) + timedelta(seconds=30)
    seconds = retry_after_seconds(httpx.Headers({"Retry-After": format_datetime(when, usegmt=True)}))
    assert 28 <= seconds <= 30


async def test_the_wrapper_passes_events_and_labels_through():
    provider = RetryingProvider(DemoProvider(delay=0), RetryPolicy(max_attempts=3), sleep=Waits())
    assert (provider.label, provider.is_demo) == (DemoProvider.label, True)
    events = [e async for e in provider.stream([ChatMessage(role="user", content="hi")], [])]
    assert isinstance(events[0], TextDelta) and isinstance(events[-1], Finish)


async def test_a_plain_model_error_is_never_retried():
    class Failing:
        label, is_demo, calls = "failing", False, 0

        async def stream(self, messages, tools):
            self.calls += 1
            raise ModelError("broken")
            yield

    inner, waits = Failing(), Waits()
    with pytest.raises(ModelError, match=r"^broken$"):
        async for _ in RetryingProvider(inner, sleep=waits).stream([], []):
            pass
    assert (inner.calls, waits) == (1, [])


# --- configuration ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api", "kind", "base_url"),
    [
        ("openai", OpenAIProvider, "https://api.openai.com/v1"),
        ("anthropic", AnthropicProvider, "https://api.anthropic.com"),
        ("ollama", OllamaProvider, "http://localhost:11434"),
        ("OLLAMA", OllamaProvider, "http://localhost:11434"),
    ],
)
def test_each_api_with_its_default_address(api, kind, base_url):
    config = ModelConfig(api=api, model="m", api_key="secret-key")
    guarded = build_provider(config)
    assert isinstance(guarded, NativeLeakGuardProvider)
    provider = guarded.inner
    assert type(provider) is kind
    assert (provider.base_url, provider.model, provider.timeout) == (base_url, "m", 600.0)
    assert (provider.connect_timeout, provider.read_timeout) == (None, None)
    assert config.public_info() == {"label": f"m · {base_url}", "is_demo": False, "help": "", "context_window": None}
    assert "secret-key" not in repr(provider)


def test_retries_and_timeouts_from_settings():
    values = {
        "api": "anthropic",
        "base_url": "http://proxy.internal:8080",
        "model": "claude-x",
        "api_key": "k",
        "max_attempts": "4",
        "timeout": 120,
        "connect_timeout": "2.5",
        "read_timeout": 30,
    }
    provider = build_provider(ModelConfig.from_mapping(values)).inner
    assert isinstance(provider, RetryingProvider)
    assert provider.policy.max_attempts == 4
    assert provider.label == "claude-x · http://proxy.internal:8080"
    inner = provider.inner
    assert isinstance(inner, AnthropicProvider)
    assert (inner.timeout, inner.connect_timeout, inner.read_timeout) == (120.0, 2.5, 30.0)


def test_without_retry_settings_one_attempt_and_a_zero_timeout_means_none():
    config = ModelConfig.from_mapping({"api": "openai", "base_url": "http://x/v1", "model": "m", "timeout": 0})
    assert config.max_attempts == 1
    provider = build_provider(config).inner
    assert isinstance(provider, OpenAIProvider)
    assert provider.timeout is None


def test_a_setting_that_is_not_a_number():
    with pytest.raises(ModelError, match=r"max_attempts='three' is not a number"):
        ModelConfig.from_mapping({"api": "openai", "max_attempts": "three"})


def test_demo_unknown_api_and_missing_model():
    assert isinstance(build_provider(ModelConfig(max_attempts=5), demo_delay=0), DemoProvider)
    with pytest.raises(
        ModelError, match=r"AGENTWEB_LLM_API='gemini' is not available.*openai, anthropic, ollama, demo"
    ):
        build_provider(ModelConfig(api="gemini", model="m"))
    with pytest.raises(ModelError, match="No model name is configured"):
        build_provider(ModelConfig(api="ollama"))


@pytest.mark.parametrize("protocol", ["hermes", "xml"])
def test_a_text_protocol_wraps_the_provider(protocol):
    provider = build_provider(ModelConfig(api="openai", model="m", tool_protocol=protocol))
    assert isinstance(provider, TextProtocolProvider)
    assert provider.protocol == protocol


def test_an_unknown_tool_protocol_is_a_clear_error():
    with pytest.raises(ModelError, match="AGENTWEB_LLM_TOOL_PROTOCOL='json'"):
        build_provider(ModelConfig(api="openai", model="m", tool_protocol="json"))
