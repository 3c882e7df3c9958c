"""An MCP server's URL secrets (its password, ?token= and the like) are shown to no one: masked in the list and
the read-only page, write-only in a superuser's form. Its headers and URL secrets stay with the server they were
entered for: pointing the URL at another origin clears them."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from mcpservers.models import McpServer

pytestmark = pytest.mark.django_db

LIST = "/admin/mcpservers/mcpserver/"
URL = "https://alice:pa55-w0rd-77@mcp.example.com/mcp?token=tok-SECRET-123&region=eu&api_key=k3y-SECRET-456"
SECRETS = ("pa55-w0rd-77", "tok-SECRET-123", "k3y-SECRET-456", "hdr-SECRET-789")
SHOWN = "https://alice:••••@mcp.example.com/mcp?token=••••&amp;region=eu&amp;api_key=••••"


@pytest.fixture
def row(db):
    return McpServer.objects.create(
        name="web", transport="http", url=URL, headers={"Authorization": "Bearer hdr-SECRET-789"}, enabled=False
    )


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def viewer(db):
    user = get_user_model().objects.create_user("viewer", password="viewer-password-1", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="mcpservers", codename="view_mcpserver")
    )
    return client_for(user)


@pytest.fixture
def root(db):
    return client_for(get_user_model().objects.create_superuser("root", password="root-password-1"))


def change_form(row, url: str, headers: list[tuple[str, str, str]] = ()) -> dict:
    """The change form as a superuser posts it; ``headers`` rows are (name, original name, value)."""
    data = {
        "name": row.name,
        "transport": "http",
        "timeout": "30",
        "command": "",
        "args": "[]",
        "url": url,
        "offered_tools": "null",
        "require_approval": "on",
        "approval_exempt": "[]",
        "secret_env-count": "0",
        "secret_headers-count": str(len(headers)),
    }
    for i, (name, original, value) in enumerate(headers):
        data.update({f"secret_headers-{i}-name": name, f"secret_headers-{i}-original": original})
        data[f"secret_headers-{i}-value"] = value
    return data


def shown_url(page: str) -> str:
    return re.search(r'name="url" value="([^"]*)"', page).group(1)


def test_staff_who_may_view_see_the_url_without_its_password_or_tokens(row, viewer):
    listing = viewer.get(LIST).content.decode()
    detail = viewer.get(f"{LIST}{row.pk}/change/").content.decode()
    for page in (listing, detail):
        assert SHOWN in page
        for secret in SECRETS:
            assert secret not in page


def test_a_search_does_not_tell_the_urls_secrets(row, viewer):
    link = f"{LIST}{row.pk}/change/"
    assert link in viewer.get(LIST, {"q": "we"}).content.decode()  # found by its name
    for start in ("tok-", "tok-SECRET", "pa55"):  # not by what its URL hides
        assert link not in viewer.get(LIST, {"q": start}).content.decode()


def test_a_superuser_sees_the_url_secrets_masked_in_the_list_and_the_form(row, root):
    listing = root.get(LIST).content.decode()
    form = root.get(f"{LIST}{row.pk}/change/").content.decode()
    assert SHOWN in listing and shown_url(form) == SHOWN
    for secret in SECRETS:
        assert secret not in listing and secret not in form


def test_a_save_that_leaves_the_hidden_values_keeps_them_and_a_typed_one_replaces_one(row, root):
    shown = shown_url(root.get(f"{LIST}{row.pk}/change/").content.decode()).replace("&amp;", "&")
    kept = [("Authorization", "Authorization", "")]
    response = root.post(f"{LIST}{row.pk}/change/", change_form(row, shown.replace("region=eu", "region=us"), kept))
    assert response.status_code == 302, response.content.decode()[:3000]
    row.refresh_from_db()
    assert row.url == URL.replace("region=eu", "region=us")
    assert row.headers == {"Authorization": "Bearer hdr-SECRET-789"}

    root.post(f"{LIST}{row.pk}/change/", change_form(row, shown.replace("token=••••", "token=new-token"), kept))
    row.refresh_from_db()
    assert "token=new-token" in row.url and "pa55-w0rd-77" in row.url and "k3y-SECRET-456" in row.url


def test_pointing_the_url_at_another_server_clears_its_headers_and_url_secrets(row, root):
    moved = "https://alice:••••@mcp.attacker.example/mcp?token=••••&region=eu&api_key=••••"
    response = root.post(
        f"{LIST}{row.pk}/change/", change_form(row, moved, [("Authorization", "Authorization", "")]), follow=True
    )
    page = response.content.decode()
    assert "now points at another server" in page
    assert "its stored URL password, URL token, URL api_key and header Authorization." in page
    row.refresh_from_db()
    assert row.url == "https://mcp.attacker.example/mcp?region=eu"
    config = row.to_config()  # what the connection uses: nothing of the old server's
    assert (config.url, dict(config.headers)) == ("https://mcp.attacker.example/mcp?region=eu", {})


def test_headers_typed_again_with_the_new_url_are_kept(row, root):
    moved = "https://mcp.other.example/mcp"
    root.post(f"{LIST}{row.pk}/change/", change_form(row, moved, [("Authorization", "Authorization", "Bearer again")]))
    row.refresh_from_db()
    assert (row.url, row.headers) == (moved, {"Authorization": "Bearer again"})


def test_a_queryset_update_of_the_url_clears_the_headers(row):
    McpServer.objects.filter(pk=row.pk).update(url="http://127.0.0.1:9/mcp")
    assert McpServer.objects.get(pk=row.pk).headers == {}
