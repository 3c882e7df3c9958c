"""Which models a person may pick, and which configuration a thread's choice means. Synchronous ORM code:
async callers go through database_sync_to_async.

Ids are a configuration's primary key as a string, or "default": the default configuration, that is the
enabled row marked default, else the model the AGENTWEB_LLM_* environment variables describe.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from providers.config import ModelConfig
from tools.settings_cache import SETTINGS_CACHE

from .models import ModelConfiguration

DEFAULT_ID = "default"
#: The keys of a picker entry: what a browser is told about each model.
ENTRY_KEYS = ("id", "name", "label", "is_demo", "context_window")


class UnknownModel(Exception):
    """A model id that is not an enabled configuration (nor "default")."""


def env_config() -> ModelConfig:
    return ModelConfig.from_mapping(settings.AGENTWEB_LLM)


def env_info(config: ModelConfig | None = None) -> dict[str, Any]:
    info = (config or env_config()).public_info()
    return {
        "id": DEFAULT_ID,
        "name": info["label"],
        **info,
        "supports_images": bool(getattr(settings, "AGENTWEB_LLM_SUPPORTS_IMAGES", False)),
    }


def _enabled():
    return ModelConfiguration.objects.filter(enabled=True)


def _row(model_id: str | None) -> ModelConfiguration | None:
    if not model_id or not model_id.isdigit():
        return None
    return _enabled().filter(pk=int(model_id)).first()


def default_row() -> ModelConfiguration | None:
    return _enabled().filter(is_default=True).first()


def available_models(*, stamp: str | None = None) -> list[dict[str, Any]]:
    """The picker's entries: the enabled configurations, and the environment's model while no row is the default.

    `stamp`: the settings stamp the caller read (every write to the configurations changes it): the entries
    are then kept in this process while it stays the same, and a page view reads no configuration. None: read now."""
    return [dict(entry) for entry in SETTINGS_CACHE.get(stamp, "model_list", "entries", _available_models)]


def _available_models() -> list[dict[str, Any]]:
    rows = list(_enabled())
    entries = [row.public_info() for row in rows]
    if not any(row.is_default for row in rows):
        entries.insert(0, env_info())
    return [{key: entry[key] for key in ENTRY_KEYS} for entry in entries]


def config_for(model_id: str | None, *, stamp: str | None = None) -> tuple[ModelConfig, dict[str, Any]]:
    """The configuration `model_id` names when it is enabled, else the default one; and what a browser may see of it.

    `stamp`: the settings stamp the caller read (every write to the configurations changes it, see
    tools/settings_cache.py): the answer is then kept in this process while the stamp stays the same. None: read
    now."""
    config, info = SETTINGS_CACHE.get(stamp, "models", model_id, lambda: _config_for(model_id))
    return config, dict(info)


def _config_for(model_id: str | None) -> tuple[ModelConfig, dict[str, Any]]:
    row = (_row(model_id) if model_id != DEFAULT_ID else None) or default_row()
    if row is not None:
        return row.to_config(), row.public_info()
    config = env_config()
    return config, env_info(config)


def check_choice(model_id: str) -> dict[str, Any]:
    """What a browser may see of the model a person picked; UnknownModel when it cannot be picked."""
    if model_id != DEFAULT_ID and _row(model_id) is None:
        raise UnknownModel(model_id)
    return config_for(model_id)[1]
