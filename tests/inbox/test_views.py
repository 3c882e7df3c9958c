"""/inbox, its items and its count over HTTP, and the count in every page's top bar."""

import pytest
from django.test import Client

from chat.models import Source
from tests.inbox.test_queries import open_request, waiting_call

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    http = Client()
    http.force_login(user)
    return http


def test_the_inbox_needs_a_signed_in_person():
    for path in ("/inbox", "/inbox/items", "/inbox/count"):
        response = Client().get(path)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_page_lists_the_owners_items_and_none_of_anothers(owner, stranger):
    call = waiting_call(owner, title="Send the report", source=Source.API)
    page = signed_in(owner).get("/inbox")
    assert page.status_code == 200
    text = page.content.decode()
    assert str(call.pk) in text and "Send the report" in text
    other = signed_in(stranger).get("/inbox").content.decode()
    assert str(call.pk) not in other and "Send the report" not in other
    assert "Nothing waits for you." in other


def test_items_and_count_as_json(owner, stranger):
    call = waiting_call(owner)
    request = open_request(owner)
    data = signed_in(owner).get("/inbox/items").json()
    assert data["count"] == 2
    assert {i["tool_call"] for i in data["items"]} == {str(call.pk), str(request.tool_call)}
    assert signed_in(owner).get("/inbox/count").json() == {"count": 2}
    assert signed_in(stranger).get("/inbox/items").json() == {"items": [], "count": 0}
    assert signed_in(owner).get("/inbox/count")["Cache-Control"] == "no-store"


def test_every_page_shows_the_count_in_its_top_bar(owner):
    http = signed_in(owner)
    settings_page = http.get("/settings/").content.decode()
    assert 'id="inbox-link"' in settings_page and 'data-count="0"' in settings_page
    waiting_call(owner)
    waiting_call(owner)
    for path in ("/settings/", "/", "/inbox"):
        page = http.get(path).content.decode()
        assert 'data-count="2"' in page, path
        assert '<span class="inbox-count-number">2</span>' in page, path


def test_no_link_for_someone_signed_out():
    page = Client().get("/accounts/login/").content.decode()
    assert 'id="inbox-link"' not in page
