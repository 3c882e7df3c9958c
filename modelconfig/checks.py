"""System checks of the secrets at rest (agentweb/secretbox.py): every secret of the app, not only this app's."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

from agentweb.secretbox import ENV_VARIABLE, InvalidSecretKeys, parse_keys


@register(Tags.security)
def secret_keys_are_fernet_keys(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """A bad AGENTWEB_SECRET_KEYS stops migrate and runserver before a page fails on it."""
    try:
        parse_keys(getattr(settings, ENV_VARIABLE, None) or [])
    except InvalidSecretKeys as exc:
        return [Error(str(exc), id="agentweb.E001")]
    return []


@register(Tags.security, deploy=True)
def secret_keys_are_set(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    if settings.DEBUG or getattr(settings, ENV_VARIABLE, None):
        return []
    return [
        Warning(
            f"{ENV_VARIABLE} is not set: model API keys and HTTP-tool headers are encrypted at rest with a key "
            "derived from DJANGO_SECRET_KEY, so changing DJANGO_SECRET_KEY makes them unreadable, and whoever has "
            "DJANGO_SECRET_KEY and the database can read them.",
            hint=f'Set {ENV_VARIABLE} to a key from: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())" (docs/deploy.md, "Secrets at rest").',
            id="agentweb.W001",
        )
    ]
