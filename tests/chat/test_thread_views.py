"""Sidebar endpoints: rename, delete and search, each only ever on the user's own threads."""

import json
import uuid

import pytest
from django.test import Client

from chat.models import Message, Thread

pytestmark = pytest.mark.django_db


def login(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/")  # the page sets the CSRF cookie the sidebar sends back
    return client


def post(client: Client, url: str, data: dict | None = None):
    return client.post(
        url,
        json.dumps(data or {}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


def thread_of(user, title, *contents):
    thread = Thread.objects.create(owner=user, title=title)
    for order, content in enumerate(contents, start=1):
        Message.objects.create(thread=thread, order=order, role=Message.Role.USER, content=content)
    return thread


def test_the_owner_renames_a_thread(owner):
    thread = thread_of(owner, "old")
    response = post(login(owner), f"/t/{thread.pk}/rename", {"title": "  new   title "})
    assert response.status_code == 200
    assert response.json()["thread"]["title"] == "new title"
    thread.refresh_from_db()
    assert thread.title == "new title"


@pytest.mark.parametrize("title", ["", "   ", "x" * 201, None, 5])
def test_a_title_must_have_1_to_200_characters(owner, title):
    thread = thread_of(owner, "old")
    response = post(login(owner), f"/t/{thread.pk}/rename", {"title": title})
    assert response.status_code == 400
    thread.refresh_from_db()
    assert thread.title == "old"


def test_a_title_with_a_lone_surrogate_is_refused_and_the_title_kept(owner):
    thread = thread_of(owner, "old")
    response = post(login(owner), f"/t/{thread.pk}/rename", {"title": "x\ud800y"})
    assert response.status_code == 400
    assert "Unicode" in response.json()["error"]
    thread.refresh_from_db()
    assert thread.title == "old"


def test_rename_without_the_csrf_token_is_refused(owner):
    thread = thread_of(owner, "old")
    client = login(owner)
    response = client.post(f"/t/{thread.pk}/rename", {"title": "new"})
    assert response.status_code == 403
    thread.refresh_from_db()
    assert thread.title == "old"


def test_a_stranger_and_a_random_id_get_the_same_404_and_nothing_changes(owner, stranger):
    thread = thread_of(owner, "mine", "hello")
    client = login(stranger)
    for target in (thread.pk, uuid.uuid4()):
        renamed = post(client, f"/t/{target}/rename", {"title": "taken"})
        deleted = post(client, f"/t/{target}/delete")
        assert renamed.status_code == deleted.status_code == 404
    thread.refresh_from_db()
    assert thread.title == "mine"
    assert thread.messages.count() == 1


def test_the_owner_deletes_a_thread_with_its_messages(owner):
    thread = thread_of(owner, "gone", "hello")
    keep = thread_of(owner, "kept", "hi")
    response = post(login(owner), f"/t/{thread.pk}/delete")
    assert response.status_code == 200
    assert not Thread.objects.filter(pk=thread.pk).exists()
    assert not Message.objects.filter(thread_id=thread.pk).exists()
    assert Thread.objects.filter(pk=keep.pk).exists()


def test_delete_and_rename_need_post_and_a_login(owner):
    thread = thread_of(owner, "mine")
    assert login(owner).get(f"/t/{thread.pk}/delete").status_code == 405
    assert Client().post(f"/t/{thread.pk}/delete").status_code in (302, 403)
    assert Thread.objects.filter(pk=thread.pk).exists()


def test_search_finds_titles_and_content_newest_first_and_only_the_users_own(owner, stranger):
    by_title = thread_of(owner, "Trip to Lisbon", "plans")
    by_content = thread_of(owner, "untitled", "what is the weather in lisbon?")
    thread_of(owner, "other", "nothing here")
    thread_of(stranger, "Lisbon secrets", "lisbon lisbon")
    client = login(owner)
    found = client.get("/search", {"q": "LISBON"}).json()["threads"]
    assert [t["id"] for t in found] == [str(by_content.pk), str(by_title.pk)]
    assert [t["title"] for t in found] == ["untitled", "Trip to Lisbon"]


def test_an_empty_search_lists_the_users_threads_and_a_stranger_finds_nothing(owner, stranger):
    thread_of(owner, "a", "one")
    thread_of(owner, "b", "two")
    assert len(login(owner).get("/search", {"q": ""}).json()["threads"]) == 2
    assert login(stranger).get("/search", {"q": "one"}).json()["threads"] == []


def test_search_is_limited_to_50(owner):
    for n in range(55):
        thread_of(owner, f"topic {n}")
    assert len(login(owner).get("/search", {"q": "topic"}).json()["threads"]) == 50
