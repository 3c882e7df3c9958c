"""The Django side of tools/: the registry rows, the admin and the per-user store.

The plain-Python part of the package (base, schema, executor, registry, builtin) imports nothing from here.
"""

import importlib

from django.apps import AppConfig
from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save


class ToolsConfig(AppConfig):
    name = "tools"
    label = "tools"
    verbose_name = "Tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tools.services import allowed_hosts_provider

        configure_tool_threads()

        # The module, not the tool object of the same name that a package may re-export.
        fetch_url = importlib.import_module("tools.builtin.fetch_url")

        post_migrate.connect(sync_after_migrate, sender=self, dispatch_uid="tools.sync_tool_settings")
        connect_settings_stamp()
        # fetch_url reads the admin's allow-list (plus AGENTWEB_FETCH_ALLOWED_HOSTS), as HTTP tools do.
        if fetch_url.ALLOWED_HOSTS_PROVIDER is None:
            fetch_url.ALLOWED_HOSTS_PROVIDER = allowed_hosts_provider


def configure_tool_threads() -> None:
    """The sizes of the sync tools' pool (tools/pool.py) from AGENTWEB_TOOL_THREADS[_PER_TOOL]."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from tools.pool import DEFAULT_PER_TOOL, DEFAULT_THREADS, TOOL_THREADS

    try:
        TOOL_THREADS.configure(
            threads=getattr(settings, "AGENTWEB_TOOL_THREADS", DEFAULT_THREADS),
            per_tool=getattr(settings, "AGENTWEB_TOOL_THREADS_PER_TOOL", DEFAULT_PER_TOOL),
        )
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from None


def sync_after_migrate(sender, using="default", apps=None, **kwargs) -> None:
    """A row per code-defined tool exists as soon as the database does (``manage.py migrate``)."""
    from tools.services import sync_tool_settings

    try:
        if apps is not None:
            apps.get_model("tools", "ToolSetting")
    except LookupError:
        return  # a partial migrate that stopped before the tools tables exist

    sync_tool_settings(using=using)


def connect_settings_stamp() -> None:
    """Every save or delete of what a run's tools are built from gives SettingsStamp a new stamp, in the same
    transaction: the next run of every process builds its tools afresh (tools/services.py toolset_for_stamp)."""
    from django.contrib.auth.models import Group

    from tools.models import AllowedHost, ApprovalRule, HttpTool, ToolSetting, bump_settings_stamp

    def bump(sender, using="default", raw=False, **kwargs) -> None:
        if not raw and not kwargs.get("action", "post").startswith("pre"):  # not fixtures, not before a change
            bump_settings_stamp(using=using)

    from django.apps import apps

    # The model configurations too: a run reads its thread's configuration under the same stamp
    # (modelconfig.services.config_for).
    configurations = [apps.get_model("modelconfig", "ModelConfiguration")] if apps.is_installed("modelconfig") else []
    for model in (ToolSetting, HttpTool, ApprovalRule, AllowedHost, Group, *configurations):
        uid = f"tools.settings_stamp.{model._meta.label_lower}"
        post_save.connect(bump, sender=model, weak=False, dispatch_uid=uid + ".save")
        post_delete.connect(bump, sender=model, weak=False, dispatch_uid=uid + ".delete")
    # A person's groups too: a page keeps them under the stamp (tools/services.py groups_of).
    from django.contrib.auth import get_user_model

    for through in (ToolSetting.groups.through, HttpTool.groups.through, get_user_model().groups.through):
        m2m_changed.connect(bump, sender=through, weak=False, dispatch_uid=f"tools.settings_stamp.{through.__name__}")
