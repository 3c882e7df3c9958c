import logging
import socket

import pytest
from django.db import DEFAULT_DB_ALIAS, connections

from tests.support.production import REDIS_URL, reachable


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens on it once closed


@pytest.mark.django_db
def test_anyone_gets_ok_without_a_session(client):
    response = client.get("/healthz")

    assert (response.status_code, response.content) == (200, b"ok\n")
    assert not response.cookies
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_it_answers_over_plain_http_where_pages_are_redirected_to_https(client, settings):
    settings.SECURE_SSL_REDIRECT = True

    assert client.get("/").status_code == 301
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
def test_only_reading_is_allowed(client):
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_redis_that_does_not_answer_makes_it_unavailable_without_saying_where(client, settings, caplog):
    port = closed_port()
    settings.REDIS_URL = f"redis://:hunter2-secret@127.0.0.1:{port}/0"

    with caplog.at_level(logging.WARNING, logger="agentweb.health"):
        response = client.get("/healthz")

    assert (response.status_code, response.content) == (503, b"redis unavailable\n")
    assert "Redis did not answer" in caplog.text
    for secret in ("hunter2", str(port)):
        assert secret not in caplog.text


@pytest.mark.django_db
def test_redis_that_answers_keeps_it_ok(client, settings):
    if not reachable(REDIS_URL, 6379):
        pytest.skip("Redis not reachable (AGENTWEB_TEST_REDIS_URL)")
    settings.REDIS_URL = REDIS_URL

    assert client.get("/healthz").status_code == 200


@pytest.fixture
def database_gone(monkeypatch):
    """The health check's database connection is one to a database that cannot be opened: a real failure of the
    real backend. (The test database itself stays as it is: closing an in-memory SQLite database loses it.)"""
    import agentweb.health

    real = connections[DEFAULT_DB_ALIAS]
    gone = type(real)({**real.settings_dict, "NAME": "/nonexistent/agentweb-health-check/db.sqlite3"}, alias="gone")
    monkeypatch.setattr(agentweb.health, "connection", gone)
    yield
    gone.close()


@pytest.mark.django_db
def test_a_database_that_does_not_answer_makes_it_unavailable(client, database_gone, caplog):
    with caplog.at_level(logging.WARNING, logger="agentweb.health"):
        response = client.get("/healthz")

    assert (response.status_code, response.content) == (503, b"database unavailable\n")
    assert "OperationalError" in caplog.text
    assert "/nonexistent" not in caplog.text
