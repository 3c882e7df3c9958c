"""``manage.py mcp import FILE``: copy the servers of an mcpServers JSON file into the admin (re-import updates)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from mcpservers.services import import_file
from tools.mcp.config import McpConfigError


class Command(BaseCommand):
    help = "MCP servers: `mcp import FILE` copies an mcpServers JSON file into the admin."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True)
        importing = commands.add_parser("import", help="Create or update an MCP server row per server of FILE.")
        importing.add_argument("file", help='A JSON file: {"mcpServers": {"NAME": {...}}}')

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            report = import_file(options["file"])
        except McpConfigError as exc:  # every mistake of the file, one a line (no traceback: CommandError)
            count = len(exc.problems)
            heading = "a mistake" if count == 1 else f"{count} mistakes"
            lines = "".join(f"\n  - {problem}" for problem in exc.problems)
            raise CommandError(f"The file has {heading}; nothing was imported:{lines}") from None
        for name in report.created:
            self.stdout.write(f"created {name}")
        for name in report.updated:
            self.stdout.write(f"updated {name}")
        self.stdout.write(f"{len(report.created)} created, {len(report.updated)} updated.")
