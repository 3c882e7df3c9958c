"""MCP servers in the admin and from AGENTWEB_MCP_CONFIG; the connections themselves are tools/mcp/."""

import sys

from django.apps import AppConfig, apps


class McpServersConfig(AppConfig):
    name = "mcpservers"
    label = "mcpservers"
    verbose_name = "MCP servers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tools.mcp.config import McpConfigError

        from .services import ConfigFile, server_configs

        # AGENTWEB_MCP_CONFIG's servers, kept for the process's life.
        self.config_file = ConfigFile()
        try:
            self.config_file.servers()  # read at start: a file that cannot be used stops the start, saying why
        except McpConfigError as exc:
            stop_the_start(exc)
        # The servers the tools app connects to, and whose tools a run's tool set gets, are this app's.
        apps.get_app_config("tools").mcp_servers = server_configs
        # A change of a server gives the tool sets a new stamp, as a change of any tool does: the table is one the
        # settings cache watches (tools/settings_cache.py).


def stop_the_start(error) -> None:
    """A bad AGENTWEB_MCP_CONFIG ends the process with each of its mistakes on a line of their own, and no
    traceback: the file is the person's to fix, not the code."""
    count = len(error.problems)
    heading = "a mistake" if count == 1 else f"{count} mistakes"
    lines = "".join(f"  - {problem}\n" for problem in error.problems)
    sys.stderr.write(f"AGENTWEB_MCP_CONFIG has {heading}; the app does not start:\n{lines}")
    raise SystemExit(2)
