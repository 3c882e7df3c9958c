"""Sign-in in Chromium through a real OpenID Connect provider's own login page, against the app as `make run`
serves it, configured from the environment with password sign-in off: the button, the provider's page, the chat;
groups from the claim; a group removed at the provider gone after signing out (at the provider too) and in again."""

import copy
import json

import httpx
import pytest

from tests.support.browser import connected, launch, require_chromium
from tests.support.oidc_provider import OIDCProvider, installed, missing_tools
from tests.support.processes import Daphne, app_environment, free_port, manage

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=20_000)

CLIENT_ID, CLIENT_SECRET = "agentweb", "browser-test-secret"
ACCOUNTS = {"carol": {"email": "carol@example.com", "groups": ["engineering", "chat-admins"]}}


@pytest.fixture(scope="module")
def provider_and_app(tmp_path_factory):
    reason = missing_tools()
    if reason:
        pytest.skip(f"the sign-in tests run a real OpenID Connect provider on node: {reason}")
    tmp_path = tmp_path_factory.mktemp("browser-oidc")
    port = free_port()
    app_url = f"http://127.0.0.1:{port}"
    clients = [
        {
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "redirect_uris": [f"{app_url}/sso/callback/"],
            "post_logout_redirect_uris": [f"{app_url}/accounts/login/"],
        }
    ]
    provider = OIDCProvider(installed(), tmp_path, copy.deepcopy(ACCOUNTS), clients)
    env = app_environment(
        tmp_path,
        AGENTWEB_LLM_API="demo",
        AGENTWEB_DEMO_DELAY="0",
        AGENTWEB_PUBLIC_URL=app_url,
        AGENTWEB_OIDC_ISSUER=provider.issuer,
        AGENTWEB_OIDC_CLIENT_ID=CLIENT_ID,
        AGENTWEB_OIDC_CLIENT_SECRET=CLIENT_SECRET,
        AGENTWEB_OIDC_NAME="Acme Login",
        AGENTWEB_OIDC_SCOPES="openid email profile groups",
        AGENTWEB_OIDC_SUPERUSER_GROUPS="chat-admins",
        AGENTWEB_PASSWORD_LOGIN="false",
    )
    try:
        manage(env, "migrate", "--noinput")
        assert manage(env, "oidc", "redirect-uri").strip() == f"{app_url}/sso/callback/"
        server = Daphne(env, port=port).start()
        try:
            yield provider, app_url, env
        finally:
            server.stop()
    finally:
        provider.stop()


def account(env, username: str) -> dict:
    """The account as the app's database has it."""
    out = manage(
        env,
        "shell",
        "-c",
        "import json; from django.contrib.auth.models import User; "
        f"u = User.objects.get(username={username!r}); "
        "print(json.dumps({'groups': sorted(u.groups.values_list('name', flat=True)), "
        "'superuser': u.is_superuser, 'staff': u.is_staff}))",
    )
    return json.loads(out.strip().splitlines()[-1])


def sign_in_at_provider(page, app_url: str, login: str) -> None:
    page.goto(f"{app_url}/")
    page.click("text=Sign in with Acme Login")
    # The provider's own login page (oidc-provider's development interaction).
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "whatever the development page takes")
    page.click("button[type=submit]")
    page.wait_for_selector("#composer-input")
    connected(page)  # the chat's socket takes the provider's session too


def test_sign_in_in_chromium_through_the_providers_login_page(provider_and_app):
    provider, app_url, env = provider_and_app
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page()
            page.goto(f"{app_url}/accounts/login/")
            expect(page.locator("#oidc-sign-in")).to_have_text("Sign in with Acme Login")
            assert page.locator("#login-form").count() == 0  # password sign-in is off

            sign_in_at_provider(page, app_url, "carol")
            assert page.url.startswith(app_url)
            expect(page.locator(".account-signed-in")).to_contain_text("carol")
            assert account(env, "carol") == {
                "groups": ["chat-admins", "engineering"],
                "superuser": True,
                "staff": True,
            }

            # Removed at the provider; signing out ends the provider's session too, so the next sign-in asks again.
            provider.set_groups("carol", ["engineering"])
            page.click("#account-toggle")
            page.click("#logout-form [type=submit]")
            # (The provider's pages load web fonts this closed network never serves: no "load" event to wait for.)
            page.wait_for_url(f"{provider.issuer}/session/end**", wait_until="commit")
            page.click("button[name=logout][value=yes]")  # the provider's "Yes, sign me out"
            page.wait_for_url(f"{app_url}/accounts/login/**", wait_until="commit")

            sign_in_at_provider(page, app_url, "carol")
            assert account(env, "carol") == {"groups": ["engineering"], "superuser": False, "staff": False}
        finally:
            browser.close()


def test_password_sign_in_is_refused_when_turned_off(provider_and_app):
    _, app_url, env = provider_and_app
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; User.objects.create_user('dave', password='dave-password-1')",
    )
    with httpx.Client(base_url=app_url) as client:
        page = client.get("/accounts/login/")
        assert 'name="password"' not in page.text
        token = client.cookies.get("csrftoken") or ""
        response = client.post(
            "/accounts/login/",
            data={"username": "dave", "password": "dave-password-1", "csrfmiddlewaretoken": token},
            headers={"X-CSRFToken": token, "Referer": f"{app_url}/accounts/login/"},
        )
        assert response.status_code == 403
        assert "sessionid" not in client.cookies
