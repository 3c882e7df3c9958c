"""The sign-in tests' provider: node oidc-provider in its own process, one per test module, with two people and
two registered clients (this app, and another application of the same organisation)."""

import copy

import httpx
import pytest
from django.core.cache import cache

from tests.support.oidc_provider import OIDCProvider, installed, missing_tools, through_login_page

CLIENT_ID, CLIENT_SECRET = "agentweb", "agentweb-test-secret"
OTHER_ID, OTHER_SECRET = "other-app", "other-app-test-secret"
APP = "http://testserver"
OTHER_REDIRECT = "http://127.0.0.1:9/other/callback"
ACCOUNTS = {
    "alice": {
        "email": "alice@example.com",
        "given_name": "Alice",
        "family_name": "Liddell",
        "groups": ["engineering", "agentweb-admins"],
    },
    "bob": {"email": "bob@example.com", "groups": ["sales"]},
}


@pytest.fixture(scope="module")
def oidc_provider(tmp_path_factory):
    reason = missing_tools()
    if reason:
        pytest.skip(f"the sign-in tests run a real OpenID Connect provider on node: {reason}")
    clients = [
        {
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "redirect_uris": [f"{APP}/sso/callback/"],
            "post_logout_redirect_uris": [f"{APP}/accounts/login/"],
        },
        {"client_id": OTHER_ID, "client_secret": OTHER_SECRET, "redirect_uris": [OTHER_REDIRECT]},
    ]
    provider = OIDCProvider(installed(), tmp_path_factory.mktemp("oidc"), copy.deepcopy(ACCOUNTS), clients)
    yield provider
    provider.stop()


@pytest.fixture
def oidc(settings, oidc_provider, db):
    """This app configured for the provider, as the environment would (agentweb/settings.py), its accounts reset."""
    settings.AGENTWEB_OIDC_ISSUER = oidc_provider.issuer
    settings.AGENTWEB_OIDC_CLIENT_ID = CLIENT_ID
    settings.AGENTWEB_OIDC_CLIENT_SECRET = CLIENT_SECRET
    settings.AGENTWEB_OIDC_NAME = "Test IdP"
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.AGENTWEB_OIDC_GROUPS_CLAIM = "groups"
    settings.AGENTWEB_OIDC_STAFF_GROUPS = []
    settings.AGENTWEB_OIDC_SUPERUSER_GROUPS = []
    oidc_provider.set_accounts(copy.deepcopy(ACCOUNTS))
    cache.clear()  # the discovery document and keys of another module's provider
    yield oidc_provider
    cache.clear()


def to_provider_and_back(client, login: str) -> str:
    """Start a sign-in at the app (its session gets the state), sign in as `login` on the provider's login page;
    returns the app's callback path and query the provider sent the person back with (not yet followed)."""
    start = client.get("/sso/begin/")
    assert start.status_code == 302, start.content
    with httpx.Client() as browser:
        back = through_login_page(browser, start["Location"], login, APP)
    return back.removeprefix(APP)


def sign_in(client, login: str):
    """A whole sign-in; returns the app's answer to the callback."""
    return client.get(to_provider_and_back(client, login))
