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


# --- pin and archive -------------------------------------------------------------------


def test_pinning_puts_a_chat_first_and_keeps_its_place_in_time(owner):
    old, _new = thread_of(owner, "old"), thread_of(owner, "new")
    updated = Thread.objects.get(pk=old.pk).updated_at
    client = login(owner)
    response = post(client, f"/t/{old.pk}/pin", {"pinned": True})
    assert response.status_code == 200
    assert response.json()["thread"] | {"updated_at": None} == {
        "id": str(old.pk),
        "title": "old",
        "updated_at": None,
        "pinned": True,
        "archived": False,
        "source": "chat",
    }
    from chat.store import list_threads

    assert [t.title for t in list_threads(user=owner)] == ["old", "new"]
    assert Thread.objects.get(pk=old.pk).updated_at == updated  # pinning is not activity
    page = client.get("/").content.decode()
    assert 'data-pinned="true"' in page
    assert post(client, f"/t/{old.pk}/pin", {"pinned": False}).json()["thread"]["pinned"] is False
    assert [t.title for t in list_threads(user=owner)] == ["new", "old"]


def test_an_archived_chat_leaves_the_list_for_the_archived_group_and_comes_back(owner):
    from chat.store import list_archived_threads, list_threads

    thread, other = thread_of(owner, "to archive"), thread_of(owner, "stays")
    client = login(owner)
    post(client, f"/t/{thread.pk}/pin", {"pinned": True})
    body = post(client, f"/t/{thread.pk}/archive", {"archived": True}).json()["thread"]
    assert (body["archived"], body["pinned"]) == (True, False)  # archiving unpins
    assert [t.pk for t in list_threads(user=owner)] == [other.pk]
    assert [t.pk for t in list_archived_threads(user=owner)] == [thread.pk]
    page = client.get("/").content.decode()
    assert 'id="archived-list"' in page and "to archive" in page
    assert client.get(f"/t/{thread.pk}/").status_code == 200  # it still opens
    # Search still finds it, and says it is archived.
    found = client.get("/search?q=archive").json()["threads"]
    assert [(t["title"], t["archived"]) for t in found] == [("to archive", True)]
    assert post(client, f"/t/{thread.pk}/archive", {"archived": False}).json()["thread"]["archived"] is False
    assert {t.pk for t in list_threads(user=owner)} == {thread.pk, other.pk}


@pytest.mark.parametrize("action", ["pin", "archive"])
def test_pin_and_archive_are_the_owners_only_and_need_post_csrf_and_a_boolean(owner, stranger, action):
    thread = thread_of(owner, "mine")
    key = {"pin": "pinned", "archive": "archived"}[action]
    assert post(login(stranger), f"/t/{thread.pk}/{action}", {key: True}).status_code == 404
    assert post(login(owner), f"/t/{uuid.uuid4()}/{action}", {key: True}).status_code == 404
    assert post(login(owner), f"/t/{thread.pk}/{action}", {key: "yes"}).status_code == 400
    client = login(owner)
    assert client.get(f"/t/{thread.pk}/{action}").status_code == 405
    assert client.post(f"/t/{thread.pk}/{action}", "{}", content_type="application/json").status_code == 403
    thread.refresh_from_db()
    assert (thread.pinned_at, thread.archived_at) == (None, None)
