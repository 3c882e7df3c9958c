"""`manage.py audit prune [--days N]`: remove the audit log's events older than the retention
(AGENTWEB_AUDIT_RETENTION_DAYS, or --days). For cron, when no process runs the pruner (docs/teams.md)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from audit import admin_log
from audit.retention import cutoff, prune


class Command(BaseCommand):
    help = (
        "The audit log. 'audit prune' removes events older than AGENTWEB_AUDIT_RETENTION_DAYS "
        "(0: kept forever, nothing removed); '--days N' prunes with N in its place for this run."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        prune_parser = actions.add_parser("prune", help="remove events older than the retention")
        prune_parser.add_argument("--days", type=int, help="keep this many days (default: the setting)")

    def handle(self, *args, action: str, **options):
        days = options.get("days")
        if days is not None and days < 1:
            raise CommandError("--days: give 1 or more (to keep the log forever, set AGENTWEB_AUDIT_RETENTION_DAYS=0).")
        days = settings.AGENTWEB_AUDIT_RETENTION_DAYS if days is None else days
        if days <= 0:
            self.stdout.write("AGENTWEB_AUDIT_RETENTION_DAYS is 0: the audit log is kept forever; nothing removed.")
            return
        admin_log.read_in(since=cutoff(days=days))
        removed = prune(days=days)
        self.stdout.write(f"Removed {removed} audit event(s) older than {days} day(s).")
