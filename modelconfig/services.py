"""Which models a person may pick, and which configuration a thread's choice means. Synchronous ORM code:
async callers go through database_sync_to_async.

Ids are a configuration's primary key as a string, or "default": the default configuration, that is the
enabled row marked default, else the model the AGENTWEB_LLM_* environment variables describe.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext_noop

from languages.phrases import Phrase
from providers.config import ModelConfig
from tools.groups import NotPermitted, may_use
from tools.settings_cache import SETTINGS_CACHE

from .models import ModelConfiguration

DEFAULT_ID = "default"
#: The keys of a picker entry: what a browser is told about each model.
ENTRY_KEYS = ("id", "name", "label", "is_demo", "context_window")


class UnknownModel(Exception):
    """A model id that is not an enabled configuration (nor "default"), or one the person's groups do not allow: to
    them it does not exist."""


class ModelNotAllowed(NotPermitted):
    """The model a thread uses (picked before, or its agent's) is one the person's groups do not allow (now)."""

    def __init__(self, label: str):
        super().__init__(
            Phrase(
                gettext_noop("The model %(name)s is not available to you; pick another model for this chat."),
                name=repr(label),
            )
        )


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
    return _enabled().filter(pk=int(model_id)).prefetch_related("groups").first()


def default_row() -> ModelConfiguration | None:
    return _enabled().filter(is_default=True).prefetch_related("groups").first()


def available_models(*, groups: frozenset[str], stamp: str | None = None) -> list[dict[str, Any]]:
    """The picker's entries for a person in `groups`: the enabled configurations their groups allow, and the
    environment's model while no row is the default.

    `stamp`: the settings stamp the caller read (every write to the configurations or to anyone's groups changes
    it): the entries are then kept in this process while it stays the same, and a page view reads no configuration.
    None: read now."""
    entries = SETTINGS_CACHE.get(stamp, "model_list", "entries", _available_models)
    return [{key: entry[key] for key in ENTRY_KEYS} for entry in entries if may_use(entry["groups"], groups)]


def _available_models() -> list[dict[str, Any]]:
    rows = list(_enabled().prefetch_related("groups"))
    entries = [{**row.public_info(), "groups": row.group_names()} for row in rows]
    if not any(row.is_default for row in rows):
        entries.insert(0, {**env_info(), "groups": frozenset()})
    return [{key: entry[key] for key in (*ENTRY_KEYS, "groups")} for entry in entries]


def config_for(
    model_id: str | None, *, stamp: str | None = None, groups: frozenset[str] | None = None
) -> tuple[ModelConfig, dict[str, Any]]:
    """The configuration `model_id` names when it is enabled, else the default one; and what a browser may see of it.

    `stamp`: the settings stamp the caller read (every write to the configurations changes it, see
    tools/settings_cache.py): the answer is then kept in this process while the stamp stays the same. None: read
    now. `groups`: the group names of the person who would run it: ModelNotAllowed when theirs do not allow it (a
    run's start, whatever path it came by); None: what a page shows of a thread's model, no run."""
    config, info, allowed = SETTINGS_CACHE.get(stamp, "models", model_id, lambda: _config_for(model_id))
    if groups is not None and not may_use(allowed, groups):
        raise ModelNotAllowed(info["name"])
    return config, dict(info)


def _config_for(model_id: str | None) -> tuple[ModelConfig, dict[str, Any], frozenset[str]]:
    row = (_row(model_id) if model_id != DEFAULT_ID else None) or default_row()
    if row is not None:
        return row.to_config(), row.public_info(), row.group_names()
    config = env_config()
    return config, env_info(config), frozenset()


def check_choice(model_id: str, *, groups: frozenset[str]) -> dict[str, Any]:
    """What a browser may see of the model a person in `groups` picked; UnknownModel when it cannot be picked (not
    an enabled configuration, or one their groups do not allow: the same answer, so a crafted id learns nothing)."""
    if model_id != DEFAULT_ID:
        row = _row(model_id)
        if row is None or not row.may_use(groups):
            raise UnknownModel(model_id)
    return config_for(model_id, groups=groups)[1]
