"""Sign-in through a real OpenID Connect provider (node oidc-provider): the account made on first sign-in, groups
and roles from the claim on every sign-in, and each answer that must not sign anyone in refused."""

import base64
import hashlib
import html
import re
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model, user_logged_in, user_login_failed
from django.contrib.auth.models import Group
from django.test import Client

from sso.backend import OIDCBackend, SignInRefused
from sso.models import Identity, ManagedGroup
from tests.sso.conftest import OTHER_ID, OTHER_REDIRECT, OTHER_SECRET, sign_in, to_provider_and_back
from tests.support.oidc_provider import through_login_page

User = get_user_model()


def signed_in_user(client):
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id) if user_id else None


def group_names(user) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


@pytest.fixture
def signals():
    """The sign-ins and failures Django's signals tell (what the audit log listens to)."""
    seen = {"in": [], "failed": []}

    def logged_in(sender, user, **kwargs):
        seen["in"].append(user.get_username())

    def failed(sender, credentials, **kwargs):
        seen["failed"].append(credentials)

    user_logged_in.connect(logged_in)
    user_login_failed.connect(failed)
    yield seen
    user_logged_in.disconnect(logged_in)
    user_login_failed.disconnect(failed)


def test_the_login_page_offers_the_provider_by_name_and_the_flow_uses_pkce(oidc, client):
    page = client.get("/accounts/login/")
    assert "Sign in with Test IdP" in page.content.decode()

    start = client.get("/sso/begin/")
    query = parse_qs(urlsplit(start["Location"]).query)
    assert start["Location"].startswith(f"{oidc.issuer}/auth?")
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    assert query["scope"] == ["openid email profile groups"] and query["state"] and query["nonce"]


def test_first_sign_in_makes_the_account_with_the_groups_of_the_claim(oidc, client, signals):
    response = sign_in(client, "alice")

    assert response.status_code == 302 and response["Location"] == "/"
    alice = signed_in_user(client)
    assert alice.username == "alice" and alice.email == "alice@example.com"
    assert (alice.first_name, alice.last_name) == ("Alice", "Liddell")
    assert not alice.has_usable_password()
    assert group_names(alice) == {"engineering", "agentweb-admins"}
    assert set(ManagedGroup.objects.values_list("group__name", flat=True)) == {"engineering", "agentweb-admins"}
    assert Identity.objects.get(user=alice).subject == "alice"
    assert signals["in"] == ["alice"] and signals["failed"] == []
    assert client.get("/").status_code == 200


def test_the_next_sign_in_finds_the_same_account_by_subject_even_with_a_new_email(oidc):
    sign_in(Client(), "alice")
    oidc.set_accounts({**oidc.accounts, "alice": {**oidc.accounts["alice"], "email": "alice@new.example"}})

    again = Client()
    sign_in(again, "alice")

    assert User.objects.count() == 1
    assert signed_in_user(again).email == "alice@new.example"


def test_a_group_removed_at_the_provider_is_gone_at_the_next_sign_in_and_the_admins_own_groups_stay(oidc):
    sign_in(Client(), "alice")
    alice = User.objects.get(username="alice")
    alice.groups.add(Group.objects.create(name="given-by-the-admin"))
    oidc.set_groups("alice", ["engineering", "research"])

    sign_in(Client(), "alice")

    assert group_names(alice) == {"engineering", "research", "given-by-the-admin"}
    assert Group.objects.filter(name="agentweb-admins").exists()  # other members may still have it


def test_an_admins_group_of_the_same_name_is_joined_only_once_handed_to_the_provider(oidc):
    sales = Group.objects.create(name="sales")

    sign_in(Client(), "bob")
    bob = User.objects.get(username="bob")
    assert group_names(bob) == set()

    ManagedGroup.objects.create(group=sales)
    sign_in(Client(), "bob")
    assert group_names(bob) == {"sales"}


def test_staff_and_superuser_follow_the_configured_groups_on_every_sign_in(oidc, settings):
    settings.AGENTWEB_OIDC_STAFF_GROUPS = ["engineering"]
    settings.AGENTWEB_OIDC_SUPERUSER_GROUPS = ["agentweb-admins"]

    sign_in(Client(), "alice")
    alice = User.objects.get(username="alice")
    assert alice.is_staff and alice.is_superuser

    oidc.set_groups("alice", ["engineering"])
    sign_in(Client(), "alice")
    alice.refresh_from_db()
    assert alice.is_staff and not alice.is_superuser

    oidc.set_groups("alice", [])
    sign_in(Client(), "alice")
    alice.refresh_from_db()
    assert not alice.is_staff and not alice.is_superuser


def test_with_no_role_groups_configured_the_admin_decides_staff(oidc):
    sign_in(Client(), "alice")
    User.objects.filter(username="alice").update(is_staff=True)

    sign_in(Client(), "alice")

    assert User.objects.get(username="alice").is_staff


def test_a_wrong_state_is_refused_and_the_genuine_answer_still_signs_in(oidc, client, signals):
    back = to_provider_and_back(client, "alice")
    query = parse_qs(urlsplit(back).query)
    forged = "/sso/callback/?" + urlencode({"code": query["code"][0], "state": "not-" + query["state"][0]})

    refused = client.get(forged)

    assert refused.status_code == 403
    assert "does not belong to a sign-in started here" in refused.content.decode()
    assert signed_in_user(client) is None and not User.objects.exists()
    assert signals["failed"][0]["method"] == "oidc" and "code" not in str(signals["failed"])
    assert client.get(back).status_code == 302 and signed_in_user(client).username == "alice"


def test_an_answer_naming_another_issuer_is_refused(oidc, client):
    back = to_provider_and_back(client, "alice")
    query = {key: values[0] for key, values in parse_qs(urlsplit(back).query).items()}
    assert query["iss"] == oidc.issuer  # the provider names itself (RFC 9207)

    response = client.get("/sso/callback/?" + urlencode({**query, "iss": "https://attacker.example"}))

    assert response.status_code == 403 and "another sign-in provider" in response.content.decode()
    assert signed_in_user(client) is None


def test_a_replayed_code_is_refused_in_the_same_session_and_in_another(oidc, client):
    back = to_provider_and_back(client, "alice")
    assert client.get(back).status_code == 302

    # The same answer again (a back button, or a copied URL) in the same browser: its state was used.
    assert Client().get(back).status_code == 403
    again = client.get(back)
    assert again.status_code == 403

    # The captured code with a state of the attacker's own (a sign-in they started): the provider refuses it.
    attacker = Client()
    own_state = parse_qs(urlsplit(to_provider_and_back(attacker, "bob")).query)["state"][0]
    code = parse_qs(urlsplit(back).query)["code"][0]
    replayed = attacker.get("/sso/callback/?" + urlencode({"code": code, "state": own_state}))
    assert replayed.status_code == 403
    assert "refused the sign-in's code (invalid_grant)" in html.unescape(replayed.content.decode())
    assert signed_in_user(attacker) is None


def tokens_for_the_other_client(provider, login: str, nonce: str) -> dict:
    """A real sign-in of `login` at another application of the same provider: its tokens (ID token included)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    params = {
        "client_id": OTHER_ID,
        "response_type": "code",
        "scope": "openid email groups",
        "redirect_uri": OTHER_REDIRECT,
        "state": "other-state",
        "nonce": nonce,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    with httpx.Client() as browser:
        back = through_login_page(browser, f"{provider.issuer}/auth?{urlencode(params)}", login, OTHER_REDIRECT)
        code = parse_qs(urlsplit(back).query)["code"][0]
        answer = browser.post(
            f"{provider.issuer}/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": OTHER_REDIRECT,
                "code_verifier": verifier,
            },
            auth=(OTHER_ID, OTHER_SECRET),
        )
    assert answer.status_code == 200, answer.text
    return {"code": code, **answer.json()}


def test_an_id_token_for_another_client_is_refused(oidc, rf):
    tokens = tokens_for_the_other_client(oidc, "alice", nonce="n-1")

    # Checked as this app checks the ID token the token endpoint gives it: signed by the provider, but not for us.
    with pytest.raises(SignInRefused, match="issued to another client"):
        OIDCBackend().verify_token(tokens["id_token"], nonce="n-1")
    assert not User.objects.exists()


def test_a_code_issued_to_another_client_is_refused(oidc, client):
    own_state = parse_qs(urlsplit(to_provider_and_back(client, "alice")).query)["state"][0]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    params = {
        "client_id": OTHER_ID,
        "response_type": "code",
        "scope": "openid",
        "redirect_uri": OTHER_REDIRECT,
        "state": "s",
        "nonce": "n",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    with httpx.Client() as browser:
        back = through_login_page(browser, f"{oidc.issuer}/auth?{urlencode(params)}", "alice", OTHER_REDIRECT)
    code = parse_qs(urlsplit(back).query)["code"][0]

    response = client.get("/sso/callback/?" + urlencode({"code": code, "state": own_state}))

    assert response.status_code == 403 and signed_in_user(client) is None


def test_a_deactivated_account_is_refused(oidc, client):
    sign_in(Client(), "alice")
    User.objects.filter(username="alice").update(is_active=False)

    response = sign_in(client, "alice")

    assert response.status_code == 403 and "deactivated" in response.content.decode()
    assert signed_in_user(client) is None


def test_a_provider_error_is_shown_and_signs_nobody_in(oidc, client):
    start = client.get("/sso/begin/")
    state = parse_qs(urlsplit(start["Location"]).query)["state"][0]

    response = client.get("/sso/callback/?" + urlencode({"error": "access_denied", "state": state}))

    assert response.status_code == 403 and "(access_denied)" in response.content.decode()
    assert signed_in_user(client) is None


def test_sign_out_ends_the_providers_session_too(oidc, client):
    sign_in(client, "alice")
    id_token = client.session["oidc_id_token"]

    response = client.post("/accounts/logout/")

    # A page of ours that goes on to the provider (the CSP's form-action stops a redirect of the form's POST).
    assert response.status_code == 200 and signed_in_user(client) is None
    page = response.content.decode()
    link = html.unescape(re.search(r'id="provider-sign-out" href="([^"]+)"', page)[1])
    assert f'http-equiv="refresh" content="0; url={html.escape(link)}"' in page
    target = urlsplit(link)
    query = parse_qs(target.query)
    assert f"{target.scheme}://{target.netloc}{target.path}" == f"{oidc.issuer}/session/end"
    assert query["id_token_hint"] == [id_token]
    assert query["post_logout_redirect_uri"] == ["http://testserver/accounts/login/"]
    # The provider accepts it: its sign-out page, not an error.
    with httpx.Client() as browser:
        answer = browser.get(link)
    assert answer.status_code == 200 and 'name="logout"' in answer.text, answer.text[:500]


def test_a_password_sign_out_stays_here(oidc, owner, client):
    client.force_login(owner, backend="django.contrib.auth.backends.ModelBackend")

    response = client.post("/accounts/logout/")

    assert response["Location"] == "/accounts/login/" and signed_in_user(client) is None
