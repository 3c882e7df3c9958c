"""The settings page: theme (a cookie every page reads), password change, the person's shared links, the admin for
staff only."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chat.models import Thread
from sharing.models import ShareLink

pytestmark = pytest.mark.django_db


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_theme_is_saved_and_every_page_is_drawn_in_it(owner):
    client = login(owner)
    page = client.get("/settings/").content.decode()
    assert 'value="system" checked' in page
    assert '<html lang="en">' in client.get("/").content.decode()
    response = client.post("/settings/", {"theme": "dark"})
    assert response.status_code == 302
    assert response.cookies["agentweb_theme"].value == "dark"
    assert response.cookies["agentweb_theme"]["httponly"]
    assert '<html lang="en" data-theme="dark">' in client.get("/").content.decode()
    assert 'value="dark" checked' in client.get("/settings/?saved=1").content.decode()
    client.post("/settings/", {"theme": "system"})
    assert "data-theme" not in client.get("/").content.decode()


def test_an_unknown_theme_changes_nothing(owner):
    client = login(owner)
    response = client.post("/settings/", {"theme": "<script>"})
    assert response.status_code == 200
    assert "agentweb_theme" not in response.cookies


def test_it_lists_the_persons_own_live_shared_links_and_links_the_password_page(owner, stranger):
    client = login(owner)
    mine = Thread.objects.create(owner=owner, title="My shared chat")
    theirs = Thread.objects.create(owner=stranger, title="Their shared chat")
    for thread in (mine, theirs):
        ShareLink.objects.create(thread=thread, token_hash=f"hash-{thread.pk}", snapshot={})
    page = client.get("/settings/").content.decode()
    assert "My shared chat" in page and "Their shared chat" not in page
    assert 'href="/accounts/password_change/"' in page
    assert 'href="/shares/"' in page


def test_staff_get_a_link_to_the_admin_and_others_do_not(owner):
    assert 'id="settings-admin"' not in login(owner).get("/settings/").content.decode()
    assert 'id="admin-link"' not in login(owner).get("/").content.decode()
    staff = get_user_model().objects.create_user("staff", password="staff-password-1", is_staff=True)
    assert 'id="settings-admin"' in login(staff).get("/settings/").content.decode()
    assert 'id="admin-link"' in login(staff).get("/").content.decode()


def test_it_needs_a_login():
    assert Client().get("/settings/").status_code == 302
