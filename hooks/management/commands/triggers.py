"""`manage.py triggers add USERNAME --agent SLUG --prompt TEMPLATE` prints `<id> <secret>` alone (the secret is not
shown again); `triggers list`; `triggers remove ID`."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from hooks.models import Trigger
from hooks.services import TriggerRefused, make_trigger


class Command(BaseCommand):
    help = "Webhook triggers: add one (prints its id and secret), list them, remove one."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser("add", help="A new trigger for USERNAME; prints '<id> <secret>'.")
        add.add_argument("username")
        add.add_argument("--agent", default="", help="The agent's slug (empty: the default agent).")
        add.add_argument("--prompt", required=True, help="The prompt template: {field}, {field.sub} from the JSON.")
        add.add_argument("--name", default="")
        listing = sub.add_parser("list", help="Every trigger: id, owner, agent, name, last delivery.")
        listing.add_argument("--user", default=None, help="Only this person's.")
        remove = sub.add_parser("remove", help="Remove trigger ID (its address takes no more deliveries).")
        remove.add_argument("id", help='An id from before ids avoided a leading "-": `triggers remove -- ID`.')

    def handle(self, *args, action, **options):
        getattr(self, f"do_{action}")(**options)

    def do_add(self, *, username, agent, prompt, name, **_):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        try:
            row, secret = make_trigger(user, agent=agent, prompt=prompt, name=name)
        except TriggerRefused as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{row.pk} {secret}")

    def do_list(self, *, user, **_):
        rows = Trigger.objects.select_related("owner").order_by("created_at")
        if user:
            rows = rows.filter(owner__username=user)
        for row in rows:
            last = row.last_delivery_at.isoformat() if row.last_delivery_at else "-"
            agent = row.agent_slug or "(default)"
            self.stdout.write(f"{row.pk}\t{row.owner.username}\t{agent}\t{row.name or '-'}\t{last}")

    def do_remove(self, *, id, **_):
        deleted, _ = Trigger.objects.filter(pk=id).delete()
        if not deleted:
            raise CommandError(f"No trigger {id!r}.")
        self.stdout.write(f"Removed {id}.")
