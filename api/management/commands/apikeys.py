"""`manage.py apikeys create|revoke`: API keys from the command line (docs/api.md). `create` prints the key and
nothing else on standard output, so that `KEY=$(manage.py apikeys create …)` keeps it; what it says goes to
standard error. A wrong user or number of days is an error (exit status 1) and nothing is written."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from api import keys
from api.keys import MAX_DAYS, MIN_DAYS, NAME_LENGTH, days_problem, owner_problem
from api.models import KEY_PREFIX, LOOKUP_LENGTH, ApiKey


class Command(BaseCommand):
    help = (
        "API keys. 'apikeys create USERNAME --name NAME [--expires DAYS]' makes a key for the user and prints it, "
        "once, alone on standard output (only a hash is stored: it cannot be shown again). "
        "'apikeys revoke KEY' revokes one key, named by what lists show (aw-AbCdEfGh…, with or without the dots), "
        "by its 8 characters after 'aw-', or by the whole key; 'apikeys revoke USERNAME --name NAME' revokes every "
        "key of that user with that name that is not revoked yet."
    )

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="make a key for USERNAME and print it (only it) on standard output")
        create.add_argument("username")
        create.add_argument("--name", required=True, help=f"what the key is for (up to {NAME_LENGTH} characters)")
        create.add_argument(
            "--expires",
            type=int,
            metavar="DAYS",
            help=f"the key stops working after DAYS days ({MIN_DAYS}–{MAX_DAYS}); without it, it does not expire",
        )
        revoke = actions.add_parser(
            "revoke",
            help="revoke a key: 'revoke aw-AbCdEfGh' (its shown prefix, its 8 characters, or the whole key) "
            "or 'revoke USERNAME --name NAME' (that user's keys of that name)",
        )
        revoke.add_argument("target", help="the key's shown prefix (aw-AbCdEfGh), or a username with --name")
        revoke.add_argument("--name", help="with a USERNAME as target: revoke that user's keys of this name")

    def handle(self, *args, action: str, **options):
        if action == "create":
            self.create(options["username"], options["name"], options["expires"])
        else:
            self.revoke(options["target"], options["name"])

    def user(self, username: str):
        user = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: username}).first()
        if user is None:
            raise CommandError(f"No user is called {username!r}.")
        return user

    def create(self, username: str, name: str, days: int | None) -> None:
        name = name.strip()
        if not name or len(name) > NAME_LENGTH:
            raise CommandError(f"--name: give the key a name of 1 to {NAME_LENGTH} characters.")
        problem = days_problem(days)
        if problem is not None:
            raise CommandError(f"--expires: {problem}")
        user = self.user(username)
        problem = owner_problem(user)
        if problem is not None:
            raise CommandError(problem)
        row, key = keys.issue(user, name, expires_in_days=days, by=None, via="command")
        until = f"until {row.expires_at:%Y-%m-%d %H:%M} UTC" if row.expires_at else "with no expiry"
        self.stderr.write(f"Made the key {row.shown} “{row.name}” for {username}, {until}. It is shown only this once.")
        self.stdout.write(key)

    def revoke(self, target: str, name: str | None) -> None:
        with transaction.atomic():
            if name is not None:
                user = self.user(target)
                rows = list(ApiKey.objects.select_for_update().filter(user=user, name=name, revoked_at__isnull=True))
                if not rows:
                    raise CommandError(f"{target} has no key called {name!r} that is not revoked.")
            else:
                rows = [self.key_named(target)]
            keys.revoke(rows, by=None, via="command")
        for row in rows:
            self.stderr.write(f"Revoked {row.shown} “{row.name}” of {row.user.get_username()}.")

    def key_named(self, target: str) -> ApiKey:
        """The key `target` names: its shown prefix ("aw-AbCdEfGh…"), its 8 characters, or the whole key."""
        text = target.strip().rstrip("…").rstrip(".")
        if len(text) > len(KEY_PREFIX) + LOOKUP_LENGTH and text.startswith(KEY_PREFIX):
            row = ApiKey.matching(text)  # the whole key: it must be the key, not just begin like one
        else:
            lookup = text.removeprefix(KEY_PREFIX)
            row = ApiKey.objects.select_related("user").filter(lookup=lookup).first() if len(lookup) == 8 else None
        if row is None:
            raise CommandError(f"No key is {target!r}: give its shown prefix (aw- and 8 characters) or the whole key.")
        return row
