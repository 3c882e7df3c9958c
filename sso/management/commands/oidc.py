"""`manage.py oidc redirect-uri`: the address to register at the provider; `manage.py oidc check`: read its
discovery document and say what this app will use (docs/teams.md, "Sign-in")."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from sso.discovery import DiscoveryError, provider_metadata


class Command(BaseCommand):
    help = "OpenID Connect sign-in: print the redirect URI to register at the provider, or check the provider."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["redirect-uri", "check"])

    def handle(self, *args, action, **options):
        if action == "redirect-uri":
            self.stdout.write(settings.AGENTWEB_PUBLIC_URL + reverse("sso:callback"))
            return
        if not settings.AGENTWEB_OIDC_ISSUER:
            raise CommandError("AGENTWEB_OIDC_ISSUER is not set")
        try:
            metadata = provider_metadata()
        except DiscoveryError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"issuer: {metadata.issuer}")
        self.stdout.write(f"authorization endpoint: {metadata.authorization_endpoint}")
        self.stdout.write(f"token endpoint: {metadata.token_endpoint}")
        self.stdout.write(f"userinfo endpoint: {metadata.userinfo_endpoint or '(none: the ID token only)'}")
        self.stdout.write(f"end session endpoint: {metadata.end_session_endpoint or '(none: sign-out is ours only)'}")
        self.stdout.write(f"redirect URI: {settings.AGENTWEB_PUBLIC_URL + reverse('sso:callback')}")
