"""`manage.py agents export [FILE]` and `manage.py agents import FILE`: JSON, or YAML for a .yaml/.yml file
(docs/agents.md)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from agents.transfer import TransferError, dumps, export_entries, import_entries, is_yaml, loads, read_file


class Command(BaseCommand):
    help = "Export the agents to a file (JSON, or YAML for .yaml/.yml), or import them from one (all or nothing)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        export = sub.add_parser("export", help="Write every agent (to standard output without FILE).")
        export.add_argument("file", nargs="?")
        export.add_argument("--yaml", action="store_true", help="YAML on standard output.")
        imported = sub.add_parser(
            "import", help="Create or update (by slug) the file's agents; a bad file changes nothing."
        )
        imported.add_argument("file")

    def handle(self, *args, action: str, file: str | None = None, **options):
        try:
            if action == "export":
                text = dumps(export_entries(), yaml=options.get("yaml") or bool(file and is_yaml(file)))
                if file:
                    with open(file, "w", encoding="utf-8") as out:
                        out.write(text)
                    self.stdout.write(f"Agents written to {file}.")
                else:
                    sys.stdout.write(text)
                return
            report = import_entries(loads(read_file(file), yaml=is_yaml(file)))
        except TransferError as error:
            raise CommandError(f"{file or 'the file'} was not imported, nothing changed:\n" + str(error)) from None
        self.stdout.write(f"Agents imported: {len(report.created)} new, {len(report.updated)} updated.")
