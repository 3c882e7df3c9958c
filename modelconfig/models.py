"""A model a person can pick for a thread: which server, which model, how to call it. The key stays here,
encrypted at rest (agentweb/fields.py)."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models, transaction
from django.db.models import Q
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from agentweb.fields import EncryptedTextField, PasswordURLField
from agentweb.pinned_secrets import PinnedSecrets, PinnedSecretsQuerySet
from agentweb.secretbox import UnreadableSecret
from providers.config import DEFAULT_BASE_URLS, ModelConfig
from providers.demo import CONNECT_HELP, DEMO_LABEL
from providers.secrets import origin
from providers.types import ModelError
from tools.groups import may_use

log = logging.getLogger("agentweb.modelconfig")

#: The settings a configuration takes from AGENTWEB_LLM rather than from its row: retries and timeouts.
TRANSPORT_SETTINGS = ("max_attempts", "timeout", "connect_timeout", "read_timeout")


def validate_base_url(value: str) -> None:
    """http(s) and a host; names without a dot (http://ollama:11434 in a compose network) are fine."""
    if isinstance(value, UnreadableSecret):
        return  # stored encrypted with a key that is not configured: kept as it is
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("Enter an http:// or https:// address, e.g. http://localhost:11434/v1.")


class ModelConfiguration(PinnedSecrets):
    """Its API key is sent to where its base URL points (the API's public address when blank): a change of that
    origin clears a key not typed again with it (agentweb/pinned_secrets.py)."""

    ADDRESS_FIELDS = ("base_url", "api")
    PINNED_SECRETS = {"api_key": ""}

    class Api(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible (OpenAI, vLLM, llama.cpp, LM Studio, Ollama /v1 …)"
        ANTHROPIC = "anthropic", "Anthropic Messages API"
        OLLAMA = "ollama", "Ollama native API"
        DEMO = "demo", "Demo model (offline, scripted, not an AI)"

    class ToolProtocol(models.TextChoices):
        NATIVE = "native", "native (the server's tool calling)"
        HERMES = "hermes", "hermes (<tool_call> JSON in the text)"
        XML = "xml", "xml (morphXml in the text)"

    name = models.CharField(max_length=100, unique=True, help_text=_("What people see in the model picker."))
    api = models.CharField(_("API"), max_length=16, choices=Api.choices, default=Api.OPENAI)
    # Encrypted at rest when it carries a password (agentweb/fields.py PasswordURLField); the admin hides the
    # password, the list and every text show public_url(base_url).
    base_url = PasswordURLField(
        _("base URL"),
        validators=[validate_base_url],
        max_length=500,
        blank=True,
        help_text=format_lazy(
            _("e.g. http://localhost:11434/v1. Blank: the API's public address ({addresses})."),
            addresses=", ".join(f"{api}: {url}" for api, url in DEFAULT_BASE_URLS.items()),
        ),
    )
    model = models.CharField(
        _("model id"), max_length=200, blank=True, help_text=_("The model name sent to the server.")
    )
    # Write-only in the admin; never sent to a browser, never in a log line or a repr. Encrypted at rest: an
    # UnreadableSecret when the key that encrypted it is not configured (to_config then refuses to use it).
    api_key = EncryptedTextField("API key", blank=True)
    tool_protocol = models.CharField(max_length=16, choices=ToolProtocol.choices, default=ToolProtocol.NATIVE)
    context_window = models.PositiveIntegerField(
        default=8192,
        validators=[MinValueValidator(256)],
        help_text=_("Tokens. The history sent to the model is trimmed to fit, oldest messages first."),
    )
    max_output_tokens = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)], help_text=_("Blank: the provider's default.")
    )
    temperature = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(2.0)],
        help_text=_("Blank: the server's default."),
    )
    price_input = models.DecimalField(
        _("price per million input tokens"),
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_("Blank: not priced. Any currency, the same for both prices; the cost of each call is stored."),
    )
    price_output = models.DecimalField(
        _("price per million output tokens"),
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    supports_images = models.BooleanField(
        _("takes images"),
        default=False,
        help_text=_(
            "The model reads images (a vision model): images attached to a message are sent to it. "
            "Off: a message with an image is refused before anything is sent."
        ),
    )
    enabled = models.BooleanField(default=True, help_text=_("Offered in the picker and usable by threads."))
    is_default = models.BooleanField(
        _("default"),
        default=False,
        help_text=_(
            "New threads use it. At most one: making this the default clears the others. "
            "With no default, the model from the AGENTWEB_LLM_* environment variables is the default."
        ),
    )
    groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="model_configurations",
        help_text=_(
            "Who may pick and run it. None selected: everyone. The default model is everyone's (docs/teams.md, Groups)."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PinnedSecretsQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("model configuration")
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=Q(is_default=True), name="one_default_model")
        ]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<ModelConfiguration {self.pk}: {self.name!r} ({self.api} {self.model!r})>"

    def clean(self) -> None:
        if self.api != self.Api.DEMO and not self.model:
            raise ValidationError({"model": "Name the model to send to the server (e.g. qwen3, gpt-4o-mini)."})
        if self.max_output_tokens and self.context_window and self.max_output_tokens >= self.context_window:
            raise ValidationError({"max_output_tokens": "Must be smaller than the context window."})

    def validate_constraints(self, exclude: Any = None) -> None:
        # Making this row the default is allowed: save() takes the mark off the other one.
        super().validate_constraints(exclude={*(exclude or ()), "is_default"})

    def save(self, *args: Any, **kwargs: Any) -> None:
        with transaction.atomic():
            if self.is_default:
                ModelConfiguration.objects.filter(is_default=True).exclude(pk=self.pk).update(is_default=False)
            super().save(*args, **kwargs)

    def group_names(self) -> frozenset[str]:
        """The names of the groups it allows (none: everyone); prefetch `groups` when reading many."""
        return frozenset(group.name for group in self.groups.all())

    def may_use(self, groups: frozenset[str]) -> bool:
        """Whether a person in `groups` may pick and run it (the rule: tools/groups.py)."""
        return may_use(self.group_names(), groups)

    @property
    def is_demo(self) -> bool:
        return self.api == self.Api.DEMO

    def points_at(self) -> Any:
        return self.origin_of(self.api, self.base_url)

    @staticmethod
    def origin_of(api: str, base_url: Any) -> Any:
        """Where a configuration of ``api`` with ``base_url`` sends its key: the origin of the URL (of the API's
        public address when blank); a URL that cannot be decrypted is known by its token only."""
        if isinstance(base_url, UnreadableSecret):
            return ("unreadable", base_url.token)
        return origin(base_url or DEFAULT_BASE_URLS.get(api, ""))

    @property
    def label(self) -> str:
        """The name, and for the demo model always the word Demo."""
        if self.is_demo and "demo" not in self.name.lower():
            return f"{self.name} — {DEMO_LABEL}"
        return self.name

    @property
    def key_is_unreadable(self) -> bool:
        """A key is stored but none of AGENTWEB_SECRET_KEYS decrypts it."""
        return isinstance(self.api_key, UnreadableSecret)

    @property
    def base_url_is_unreadable(self) -> bool:
        """The base URL carries a password and is stored encrypted with a key that is not configured."""
        return isinstance(self.base_url, UnreadableSecret)

    def key_problem(self) -> str:
        return UnreadableSecret.problem(f"The API key of model configuration {self.name!r}")

    def to_config(self) -> ModelConfig:
        """The configuration a provider is built from. With a key that cannot be decrypted it is still made (the
        picker and the thread page only need the name), but reading its ``api_key`` (building a provider for any
        API but the demo) raises UnreadableKey, a ModelError: the run fails with that message."""
        transport = {key: settings.AGENTWEB_LLM.get(key) for key in TRANSPORT_SETTINGS}
        base = ModelConfig.from_mapping({key: value for key, value in transport.items() if value is not None})
        kind, key, base_url = ModelConfig, self.api_key, self.base_url
        if self.key_is_unreadable:
            kind, key = _UnreadableKeyConfig, _NamedUnreadable(self.api_key.token, self.key_problem())
        if self.base_url_is_unreadable:
            problem = UnreadableSecret.problem(f"The base URL (with its password) of model configuration {self.name!r}")
            kind, key, base_url = _UnreadableKeyConfig, _NamedUnreadable(self.base_url.token, problem), ""
        return kind(
            api=self.api,
            base_url=base_url,
            model=self.model,
            api_key=key,
            tool_protocol=self.tool_protocol,
            max_attempts=base.max_attempts,
            timeout=base.timeout,
            connect_timeout=base.connect_timeout,
            read_timeout=base.read_timeout,
            max_tokens=self.max_output_tokens,
            temperature=self.temperature,
            context_window=self.context_window,
            price_input=self.price_input,
            price_output=self.price_output,
        )

    def public_info(self) -> dict[str, Any]:
        """What a browser may know: never the key (nor the server's address)."""
        return {
            "id": str(self.pk),
            "name": self.name,
            "label": self.label,
            "is_demo": self.is_demo,
            "help": CONNECT_HELP if self.is_demo else "",
            "context_window": self.context_window,
            "supports_images": self.supports_images,
        }


class UnreadableKey(ModelError):
    """The configuration's API key cannot be decrypted with AGENTWEB_SECRET_KEYS. Shown to the person as it is:
    it names the configuration and the variable, never a key or a token."""


class _UnreadableKeyConfig(ModelConfig):
    """A ModelConfig whose api_key is an UnreadableSecret: reading it raises UnreadableKey with the message of the
    configuration it came from (the name travels in the secret's place, so the dataclass stays as it is)."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if name == "api_key" and isinstance(value, _NamedUnreadable):
            log.warning("%s", value.message)
            raise UnreadableKey(value.message)
        return value


class _NamedUnreadable(UnreadableSecret):
    __slots__ = ("message",)

    def __init__(self, token: str, message: str):
        super().__init__(token)
        self.message = message
