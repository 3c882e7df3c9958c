"""The Django side of tools/: the registry rows, the admin and the per-user store.

The plain-Python part of the package (base, schema, executor, registry, builtin) imports nothing from here.
"""

import importlib

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ToolsConfig(AppConfig):
    name = "tools"
    label = "tools"
    verbose_name = "Tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tools.mcp.manager import McpManager
        from tools.services import allowed_hosts_provider

        # This process's MCP connections, one per server, on a loop of their own (tools/mcp/manager.py); they start
        # when a tool set first asks for the servers' tools (tools.services.mcp_connections, mcp_tools).
        self.mcp_connections = McpManager()
        configure_tool_threads()

        # The module, not the tool object of the same name that a package may re-export.
        fetch_url = importlib.import_module("tools.builtin.fetch_url")

        post_migrate.connect(sync_after_migrate, sender=self, dispatch_uid="tools.sync_tool_settings")
        post_migrate.connect(install_stamp_triggers, sender=self, dispatch_uid="tools.settings_stamp_triggers")
        # fetch_url reads the admin's allow-list (plus AGENTWEB_FETCH_ALLOWED_HOSTS), as HTTP tools do.
        if fetch_url.ALLOWED_HOSTS_PROVIDER is None:
            fetch_url.ALLOWED_HOSTS_PROVIDER = allowed_hosts_provider

    @staticmethod
    def mcp_servers() -> list:
        """The MCP servers this process connects to: none, unless the app that configures them gives its own as it
        starts (mcpservers/apps.py: the admin's rows and AGENTWEB_MCP_CONFIG). tools/ knows nothing of that app: it
        stands on tools/, not the other way round."""
        return []


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


def install_stamp_triggers(sender, using="default", **kwargs) -> None:
    """Every write to what the settings cache keeps answers of gives the settings stamp a new value, by a trigger
    on each of those tables (tools/settings_cache.py), created after every migrate (a migration that rebuilds a
    table on SQLite drops its triggers); and the stamp's row is there (a flush empties it: without it nothing is
    kept)."""
    from tools.settings_cache import install_triggers

    install_triggers(using=using, with_stamp=True)
