"""Which model a run talks to, and building its provider."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .base import Provider
from .demo import CONNECT_HELP, DEMO_LABEL, DemoProvider
from .http_provider import DEFAULT_TOTAL_TIMEOUT
from .retry import RetryingProvider, RetryPolicy
from .secrets import public_url
from .types import ModelError

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"
OLLAMA_DEFAULT_BASE_URL = "http://localhost:11434"
DEFAULT_BASE_URLS = {
    "openai": OPENAI_DEFAULT_BASE_URL,
    "anthropic": ANTHROPIC_DEFAULT_BASE_URL,
    "ollama": OLLAMA_DEFAULT_BASE_URL,
}
SUPPORTED_APIS = ("openai", "anthropic", "ollama", "demo")
TOOL_PROTOCOLS = ("hermes", "xml")
#: The environment variable an API's key is also read from when AGENTWEB_LLM_API_KEY is not set.
API_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_TEXT_FIELDS = ("api", "base_url", "model", "api_key", "tool_protocol")


@dataclass(frozen=True)
class ModelConfig:
    api: str = ""
    base_url: str = ""
    model: str = ""
    #: Never in repr(): a config may end up in a log line or a traceback.
    api_key: str = field(default="", repr=False)
    tool_protocol: str = "native"
    #: Attempts per model call, the first included, for 429/5xx/connection failures before the first token.
    #: 1 here (a config built without these settings does not retry); settings default it to 3.
    max_attempts: int = 1
    #: Seconds for one request, from sending it to the answer's last byte (0: no limit).
    timeout: float = DEFAULT_TOTAL_TIMEOUT
    #: Override the shared client's connect (10 s) and read (300 s: the longest silence) timeouts.
    connect_timeout: float | None = None
    read_timeout: float | None = None
    #: The answer's length limit (None: the provider's default) and sampling temperature (None: the server's).
    max_tokens: int | None = None
    temperature: float | None = None
    #: Nucleus sampling (None: the server's default); an agent may set it (agents/services.py with_sampling).
    top_p: float | None = None
    #: The model's context window in tokens: the history sent is trimmed to fit it (None: not trimmed).
    context_window: int | None = None
    #: Prices per million input and output tokens (None: not priced): each call's cost is computed from them.
    price_input: Decimal | None = None
    price_output: Decimal | None = None

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> ModelConfig:
        """From a settings dict (AGENTWEB_LLM); the numeric keys are optional, numbers or numeric strings."""
        fields: dict[str, Any] = {key: values.get(key) or "" for key in _TEXT_FIELDS}
        numbers = (
            ("max_attempts", int),
            ("timeout", float),
            ("connect_timeout", float),
            ("read_timeout", float),
            ("max_tokens", int),
            ("temperature", float),
            ("top_p", float),
            ("context_window", int),
        )
        for key, kind in numbers:
            value = values.get(key)
            if value is None or value == "":
                continue
            try:
                fields[key] = kind(value)
            except (TypeError, ValueError):
                raise ModelError(f"The model setting {key}={value!r} is not a number.") from None
        return cls(**fields)

    @property
    def resolved_base_url(self) -> str:
        return self.base_url or DEFAULT_BASE_URLS.get(self.resolved_api, "")

    @property
    def resolved_api(self) -> str:
        """`demo` when nothing names a model server, as the README promises."""
        if self.api:
            return self.api.lower()
        return "openai" if self.base_url else "demo"

    @property
    def is_demo(self) -> bool:
        return self.resolved_api == "demo"

    def public_info(self) -> dict[str, Any]:
        """What a browser may know about the model: never the key, nor the credentials of the base URL."""
        if self.is_demo:
            return {"label": DEMO_LABEL, "is_demo": True, "help": CONNECT_HELP, "context_window": self.context_window}
        return {
            "label": f"{self.model} · {public_url(self.resolved_base_url)}",
            "is_demo": False,
            "help": "",
            "context_window": self.context_window,
        }


def build_provider(
    config: ModelConfig,
    *,
    demo_delay: float = 0.03,
    transport: str = "streaming",
    demo_says: Callable[[str], str] | None = None,
) -> Provider:
    """The provider for `config`, retried per `config.max_attempts`; `transport`: how model servers are read
    (providers/client.py; the app's AGENTWEB_LLM_TRANSPORT); `demo_says`: the demo model's texts in its language."""
    api = config.resolved_api
    if api == "demo":
        return DemoProvider(delay=demo_delay, **({"say": demo_says} if demo_says else {}))
    if api not in DEFAULT_BASE_URLS:
        raise ModelError(
            f"AGENTWEB_LLM_API={config.api!r} is not available in this version;"
            f" use one of: {', '.join(SUPPORTED_APIS)}."
        )
    if not config.model:
        raise ModelError(
            "No model name is configured: set AGENTWEB_LLM_MODEL (e.g. qwen3, gpt-4o-mini, claude-sonnet-4-5)."
        )
    common: dict[str, Any] = {
        "base_url": config.resolved_base_url,
        "model": config.model,
        "api_key": config.api_key or None,
        "timeout": config.timeout or None,
        "connect_timeout": config.connect_timeout,
        "read_timeout": config.read_timeout,
        "transport": transport,
    }
    provider: Provider
    if api == "openai":
        from .openai import OpenAIProvider

        provider = OpenAIProvider(
            **common,
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            length_means_full_context=config.max_tokens is None,
        )
    elif api == "anthropic":
        from .anthropic import AnthropicProvider

        limit = {"max_tokens": config.max_tokens} if config.max_tokens else {}  # else its own default
        provider = AnthropicProvider(**common, **limit, temperature=config.temperature, top_p=config.top_p)
    else:
        from .ollama import OllamaProvider

        options: dict[str, Any] = {}
        if config.max_tokens:
            options["num_predict"] = config.max_tokens
        if config.temperature is not None:
            options["temperature"] = config.temperature
        if config.top_p is not None:
            options["top_p"] = config.top_p
        provider = OllamaProvider(**common, options=options or None)
    if config.max_attempts > 1:
        provider = RetryingProvider(provider, RetryPolicy(max_attempts=config.max_attempts))
    return with_tool_protocol(provider, config.tool_protocol or "native")


def with_tool_protocol(provider: Provider, protocol: str) -> Provider:
    """Native tool calling (guarded against calls leaking into the text), or a text protocol around it."""
    from .protocols import NativeLeakGuardProvider, TextProtocolProvider

    protocol = protocol.lower()
    if protocol == "native":
        return NativeLeakGuardProvider(provider)
    if protocol in TOOL_PROTOCOLS:
        return TextProtocolProvider(provider, protocol)
    raise ModelError(
        f"AGENTWEB_LLM_TOOL_PROTOCOL={protocol!r} is not known; use one of: native, {', '.join(TOOL_PROTOCOLS)}."
    )
