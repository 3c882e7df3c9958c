from django.core.management.base import BaseCommand

from attachments.services import remove_unsent


class Command(BaseCommand):
    help = (
        "attachments cleanup [--hours N]: delete everyone's unsent uploads older than N hours "
        "(AGENTWEB_ATTACHMENT_UNSENT_HOURS by default), rows and files."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["cleanup"])
        parser.add_argument("--hours", type=int, default=None)

    def handle(self, *args, action: str, hours: int | None, **options):
        count = remove_unsent(older_than_hours=hours)
        self.stdout.write(f"Removed {count} unsent upload(s).")
