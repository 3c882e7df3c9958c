"""Create the first account when there is none, and print its password once."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "When no user exists, create an admin account with a generated password and print it once."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username, **options):
        User = get_user_model()
        if User.objects.exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            self.style.SUCCESS(
                "\nCreated the first account — write the password down, it is shown only this once:\n"
                f"    username: {username}\n    password: {password}\n"
            )
        )
