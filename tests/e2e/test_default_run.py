"""The app as `make run` starts it on a fresh clone, with nothing configured: debug off, and still usable."""

import httpx
import pytest

from tests.support.processes import app_environment, create_user, daphne, log_in, manage


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    env = app_environment(tmp_path_factory.mktemp("default-run"))  # no DJANGO_* variable at all
    manage(env, "migrate", "--noinput")
    create_user(env, "ada", "lovelace-1815")
    with daphne(env) as base_url:
        yield base_url


def test_static_files_are_served(app):
    response = httpx.get(f"{app}/static/chat/app.css")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/css")


def test_an_unknown_share_link_gets_the_app_s_404_page_not_django_s_debug_page(app):
    response = httpx.get(f"{app}/s/revoked-token/")

    assert response.status_code == 404
    assert "Page not found" in response.text and "/static/chat/app.css" in response.text
    assert "URLconf" not in response.text and "admin/" not in response.text


def test_a_person_logs_in_over_plain_http_and_gets_the_chat(app):
    cookie = log_in(app, "ada", "lovelace-1815")

    response = httpx.get(f"{app}/", headers={"Cookie": cookie})

    assert response.status_code == 200
    assert 'id="composer-input"' in response.text
