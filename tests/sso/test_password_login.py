"""AGENTWEB_PASSWORD_LOGIN: the login page shows the provider's button, and with password sign-in off neither the
login form nor a password POST signs anyone in; the redirect URI command."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import user_login_failed
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def password_off(settings):
    settings.AGENTWEB_OIDC_ISSUER = "https://idp.example/realms/acme"
    settings.AGENTWEB_OIDC_CLIENT_ID = "agentweb"
    settings.AGENTWEB_OIDC_NAME = "Acme"
    settings.AGENTWEB_PASSWORD_LOGIN = False
    # As agentweb/settings.py sets them with the variable off: Django's model backend is not installed.
    settings.AUTHENTICATION_BACKENDS = ["sso.backend.OIDCBackend"]


def test_the_login_page_has_the_button_and_the_password_form_by_default(settings, client, db):
    settings.AGENTWEB_OIDC_ISSUER = "https://idp.example/realms/acme"
    settings.AGENTWEB_OIDC_NAME = "Acme"

    page = client.get("/accounts/login/").content.decode()

    assert "Sign in with Acme" in page and 'id="login-form"' in page


def test_without_a_provider_the_login_page_has_no_button(client, db):
    page = client.get("/accounts/login/").content.decode()

    assert "Sign in with" not in page and 'id="login-form"' in page


def test_with_password_sign_in_off_the_page_has_no_form(password_off, client, db):
    page = client.get("/accounts/login/").content.decode()

    assert "Sign in with Acme" in page
    assert 'id="login-form"' not in page and 'name="password"' not in page


def test_with_password_sign_in_off_a_right_password_is_refused(password_off, owner, client):
    failures = []

    def failed(sender, credentials, **kwargs):
        failures.append(credentials)

    user_login_failed.connect(failed)
    try:
        page = client.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
        response = client.post(
            "/accounts/login/",
            {
                "username": "owner",
                "password": "owner-password-1",
                **({"csrfmiddlewaretoken": token[1]} if token else {}),
            },
        )
    finally:
        user_login_failed.disconnect(failed)

    assert response.status_code == 403 and "Password sign-in is turned off" in response.content.decode()
    assert "_auth_user_id" not in client.session
    # Told to the audit log's listener, without the password.
    assert [(f["username"], f["method"]) for f in failures] == [("owner", "password")]
    assert "owner-password-1" not in str(failures)


def test_with_password_sign_in_off_the_admins_login_refuses_a_password_too(password_off, client, django_user_model):
    django_user_model.objects.create_superuser("root", password="root-password-1")

    client.post("/admin/login/?next=/admin/", {"username": "root", "password": "root-password-1"})

    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302


def test_password_sign_in_works_while_it_is_on(settings, owner, client):
    settings.AGENTWEB_OIDC_ISSUER = "https://idp.example/realms/acme"

    response = client.post("/accounts/login/", {"username": "owner", "password": "owner-password-1"})

    assert response.status_code == 302 and client.session["_auth_user_id"] == str(owner.pk)


def settings_in_a_fresh_process(**env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import agentweb.settings as s; "
            "print(s.AUTHENTICATION_BACKENDS, s.OIDC_RP_SCOPES, s.AGENTWEB_OIDC_GROUPS_CLAIM)",
        ],
        cwd=ROOT,
        env={**clean, "DJANGO_SECRET_KEY": "x" * 50, **env},
        capture_output=True,
        text=True,
    )


def test_password_sign_in_off_without_a_provider_is_refused_at_start():
    result = settings_in_a_fresh_process(AGENTWEB_PASSWORD_LOGIN="false")

    assert result.returncode != 0 and "AGENTWEB_PASSWORD_LOGIN=false needs AGENTWEB_OIDC_ISSUER" in result.stderr


def test_the_settings_are_read_from_the_environment_as_documented():
    result = settings_in_a_fresh_process(
        AGENTWEB_OIDC_ISSUER="https://idp.example",
        AGENTWEB_OIDC_CLIENT_ID="agentweb",
        AGENTWEB_OIDC_SCOPES="email, groups",
        AGENTWEB_PASSWORD_LOGIN="off",
    )

    assert result.stdout.strip() == "['sso.backend.OIDCBackend'] openid email groups groups", result.stderr


def test_manage_oidc_redirect_uri_prints_the_callback_at_the_public_address(settings, capsys):
    settings.AGENTWEB_PUBLIC_URL = "https://chat.example.com"

    call_command("oidc", "redirect-uri")

    assert capsys.readouterr().out.strip() == "https://chat.example.com/sso/callback/"
