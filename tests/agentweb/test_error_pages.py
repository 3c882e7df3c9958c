"""With debug off (the default), errors get pages in the app's look that give nothing away."""

import uuid

import pytest
from django.test import Client
from django.views import defaults

pytestmark = pytest.mark.django_db

STYLESHEET = "/static/chat/app.css"


def test_a_revoked_or_unknown_share_link_gets_the_app_s_404_page():
    response = Client().get("/s/no-such-token/")

    assert response.status_code == 404
    page = response.content.decode()
    assert STYLESHEET in page and "Page not found" in page
    assert "URLconf" not in page and "admin/" not in page


def test_a_deleted_chat_s_address_gets_the_404_page_with_a_way_back(client, owner):
    client.force_login(owner)

    response = client.get(f"/t/{uuid.uuid4()}/")

    assert response.status_code == 404
    page = response.content.decode()
    assert "Page not found" in page
    assert 'href="/"' in page and owner.username in page  # the header as on every page, and a way home


@pytest.mark.urls("tests.agentweb.error_urls")
def test_a_failing_view_gets_the_app_s_500_page_without_details():
    response = Client(raise_request_exception=False).get("/fails/")

    assert response.status_code == 500
    page = response.content.decode()
    assert STYLESHEET in page and "Something went wrong" in page
    assert "a bug in a view" not in page and "Traceback" not in page


@pytest.mark.parametrize(
    ("view", "status", "heading"),
    [(defaults.bad_request, 400, "Bad request"), (defaults.permission_denied, 403, "Not allowed")],
)
def test_bad_requests_and_refusals_get_the_app_s_pages_too(rf, view, status, heading):
    response = view(rf.get("/somewhere/"), exception=Exception("details for no one"))

    assert response.status_code == status
    page = response.content.decode()
    assert STYLESHEET in page and heading in page
    assert "details for no one" not in page
