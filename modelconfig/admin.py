"""Model configurations in the admin. The API key is write-only: the form never renders it (not even after an
error), shows "•••• (set)" when one is stored, and a key field left blank keeps the stored key. The key is encrypted
at rest; one that AGENTWEB_SECRET_KEYS cannot decrypt is reported as such, kept as it is by a save that leaves
the field blank, and replaced by typing it again.

A password in the base URL (http://user:password@host/v1, for a server behind basic auth) is as write-only:
the form shows it as "••••", a save that leaves "••••" in its place keeps the stored one, and the list and the
read-only page show the URL without user name and password. Such a URL is encrypted at rest (PasswordURLField).

Both are pinned to where the configuration points (agentweb/pinned_secrets.py): a save that changes the base URL's
origin (scheme, host, port; or the API, when the base URL is blank) clears the stored key unless a key is typed in
the same form, and a password left as "••••" is not carried to the new host; the admin says what was cleared."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import cut, cut_text, mark, money
from providers.secrets import public_url

from .models import ModelConfiguration

MASKED = "•••• (set)"
UNREADABLE = "•••• (set, but it cannot be decrypted with AGENTWEB_SECRET_KEYS)"
UNREADABLE_URL = "(a URL with a password, which cannot be decrypted with AGENTWEB_SECRET_KEYS)"
#: What the form shows in place of the password of a base URL.
HIDDEN_PASSWORD = "••••"
MOVE_HELP = (
    "Pointing it at another server (another scheme, host or port) clears the stored API key and password: type "
    "them again in the same form to keep them."
)


class ModelConfigurationForm(forms.ModelForm):
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password", "size": 60}),
    )
    clear_api_key = forms.BooleanField(label="Remove the stored key", required=False)

    class Meta:
        model = ModelConfiguration
        fields = [
            "name",
            "api",
            "base_url",
            "model",
            "api_key",
            "clear_api_key",
            "tool_protocol",
            "context_window",
            "max_output_tokens",
            "temperature",
            "price_input",
            "price_output",
            "supports_images",
            "enabled",
            "is_default",
            "groups",
        ]
        widgets = {"base_url": forms.TextInput(attrs={"size": 60})}

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.cleared_by_move: list[str] = []  # secrets this form did not carry to a new address (for the message)
        self.initial.pop("api_key", None)  # never handed to the widget
        if self.instance.base_url_is_unreadable:
            self.initial["base_url"] = ""
            url_field = self.fields["base_url"]
            url_field.help_text = (
                f"{UNREADABLE_URL}: configure the key that encrypted it again, or type the URL again. Leave blank "
                "to keep it as it is."
            )
        elif self.initial.get("base_url"):
            self.initial["base_url"] = _with_password(self.initial["base_url"], HIDDEN_PASSWORD)
            if self._stored_password():
                url_field = self.fields["base_url"]
                url_field.help_text = (
                    f"{url_field.help_text} The password in it is shown as {HIDDEN_PASSWORD}:"
                    " leave that to keep it, type another to replace it."
                )
        if self.instance.pk is not None and "base_url" in self.fields:
            self.fields["base_url"].help_text += " " + MOVE_HELP
        field = self.fields["api_key"]
        if self.instance.key_is_unreadable:
            field.widget.attrs["placeholder"] = "type the key again to replace it"
            field.help_text = (
                f"{UNREADABLE}: configure the key that encrypted it again (docs/deploy.md, "
                '"Secrets at rest"), or type the API key again. Leave blank to keep it as it is.'
            )
        elif self.instance.api_key:
            field.widget.attrs["placeholder"] = f"{MASKED} — type a new key to replace it"
            field.help_text = f"{MASKED}. Stored on the server and never shown again; leave blank to keep it."
        else:
            field.help_text = "Stored on the server and never shown again. Not needed for a local server."

    def clean_base_url(self) -> Any:
        typed = self.cleaned_data.get("base_url") or ""
        if not typed and self.instance.base_url_is_unreadable:
            return self.instance.base_url
        if _password(typed) == HIDDEN_PASSWORD:
            if self._moves(typed):  # the stored password stays with the server it was typed for
                self.cleared_by_move.append("base URL password")
                return _without_userinfo(typed)
            return _with_password(typed, self._stored_password() or "")
        return typed

    def _moves(self, base_url: Any) -> bool:
        """Whether the configuration would point elsewhere than it does (a new one points nowhere yet)."""
        if self.instance.pk is None:
            return False
        api = self.cleaned_data.get("api", self.instance.api)
        was = ModelConfiguration.origin_of(self.instance.api, self.instance.base_url)
        return ModelConfiguration.origin_of(api, base_url) != was

    def _stored_password(self) -> str | None:
        stored = self.instance.base_url
        return None if self.instance.base_url_is_unreadable else _password(stored or "")

    def clean_api_key(self) -> str:
        typed = self.cleaned_data.get("api_key") or ""
        if typed:
            return typed
        if self.data.get(self.add_prefix("clear_api_key")):
            return ""
        return self.instance.api_key or ""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("is_default") and cleaned.get("groups"):
            # Every person needs a model a new chat can start with: the default is everyone's (docs/teams.md).
            self.add_error(
                "groups", "The default model is everyone's: leave its groups empty, or make another default."
            )
        if not self.data.get(self.add_prefix("api_key")) and not self.data.get(self.add_prefix("clear_api_key")):
            # Left blank: the stored key is kept by not touching it, so that it does not count as typed again (a
            # change of address then clears it: agentweb/pinned_secrets.py).
            cleaned.pop("api_key", None)
        return cleaned


@admin.register(ModelConfiguration)
class ModelConfigurationAdmin(admin.ModelAdmin):
    form = ModelConfigurationForm
    list_display = (
        "name_cut",
        "api",
        "model_cut",
        "server",
        "tool_protocol",
        "context_window",
        "prices",
        "key",
        "enabled",
        "default",
        "allowed_groups",
    )
    list_display_links = ("name_cut",)
    name_cut = cut("name", description=_("name"), ordering="name")
    model_cut = cut("model", description=_("model"), ordering="model")
    list_filter = ("api", "enabled", "groups")
    search_fields = ("name", "model", "base_url")
    readonly_fields = ("key", "server")
    filter_horizontal = ("groups",)

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("groups")

    @admin.display(description="groups")
    def allowed_groups(self, obj: ModelConfiguration) -> str:
        return cut_text(", ".join(sorted(obj.group_names())) or "everyone")

    @admin.display(description=_("prices (per million tokens in / out)"))
    def prices(self, obj: ModelConfiguration) -> str:
        if obj.price_input is None and obj.price_output is None:
            return self.get_empty_value_display()
        return f"{money(obj.price_input or 0)} / {money(obj.price_output or 0)}"

    default = mark("is_default", description="default", shown="default")

    @admin.display(description="base URL")
    def server(self, obj: ModelConfiguration) -> str:
        if obj.base_url_is_unreadable:
            return cut_text(UNREADABLE_URL)
        return cut_text(public_url(obj.base_url)) if obj.base_url else "—"

    @admin.display(description="API key")
    def key(self, obj: ModelConfiguration) -> str:
        if obj.key_is_unreadable:
            return UNREADABLE
        return MASKED if obj.api_key else "—"

    def save_model(self, request, obj: ModelConfiguration, form: ModelConfigurationForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if message := obj.cleared_secrets_message(form.cleared_by_move):
            messages.warning(request, message)

    def get_fields(self, request, obj=None):
        fields = list(super().get_fields(request, obj))
        if obj is not None and not self.has_change_permission(request, obj):
            # A read-only page would print every field's value: the key only as set / not set, the URL bare.
            return ["server" if f == "base_url" else f for f in fields if f not in ("api_key", "clear_api_key")]
        hidden = {"key", "server"} | (set() if obj is not None and obj.api_key else {"clear_api_key"})
        return [f for f in fields if f not in hidden]


def _with_password(url: str, password: str) -> str:
    """`url` with the password of its userinfo replaced, as written (percent-encoded as it was)."""
    parts = _parts(url)
    if parts is None:
        return url
    scheme, user, _, rest = parts
    return f"{scheme}://{user}:{password}@{rest}"


def _without_userinfo(url: str) -> str:
    parts = _parts(url)
    return f"{parts[0]}://{parts[3]}" if parts else url


def _password(url: str) -> str | None:
    """The password of `url` as written (not decoded), None when it has none."""
    parts = _parts(url)
    return parts[2] if parts else None


def _parts(url: str) -> tuple[str, str, str, str] | None:
    """scheme, user, password and the rest (host and path) of a URL with user:password@, else None."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return None
    user, _, password = userinfo.partition(":")
    return scheme, user, password, f"{host}{slash}{path}"
