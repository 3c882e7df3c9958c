"""The provider's endpoints come from its discovery document (mozilla-django-oidc takes them as settings): read
from the real provider, checked to be the configured issuer's, and bounded."""

import contextlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command

from sso.discovery import DiscoveryError, parse_metadata, provider_metadata, read_json

DOCUMENT = {
    "issuer": "https://idp.example/realms/acme",
    "authorization_endpoint": "https://idp.example/realms/acme/auth",
    "token_endpoint": "https://idp.example/realms/acme/token",
    "jwks_uri": "https://idp.example/realms/acme/certs",
}


def test_the_real_providers_document_gives_every_endpoint(oidc):
    metadata = provider_metadata()

    assert metadata.issuer == oidc.issuer
    assert metadata.authorization_endpoint == f"{oidc.issuer}/auth"
    assert metadata.token_endpoint == f"{oidc.issuer}/token"
    assert metadata.userinfo_endpoint == f"{oidc.issuer}/me"
    assert metadata.end_session_endpoint == f"{oidc.issuer}/session/end"
    assert "S256" in metadata.code_challenge_methods


def test_a_document_of_another_issuer_is_refused():
    with pytest.raises(DiscoveryError, match=re.escape("not 'https://idp.example/realms/other'")):
        parse_metadata("https://idp.example/realms/other", DOCUMENT)


def test_a_trailing_slash_of_the_configured_issuer_does_not_matter():
    assert parse_metadata("https://idp.example/realms/acme/", DOCUMENT).issuer == DOCUMENT["issuer"]


def test_a_document_without_a_token_endpoint_is_refused():
    with pytest.raises(DiscoveryError, match="token_endpoint"):
        parse_metadata(DOCUMENT["issuer"], {**DOCUMENT, "token_endpoint": None})


class Endless(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        with contextlib.suppress(OSError):  # the reader stops early, as it should
            self.wfile.write(b'{"issuer": "' + b"x" * (2 * 1024 * 1024) + b'"}')

    def log_message(self, *args):
        pass


def test_a_document_too_long_is_refused_before_it_is_parsed():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(DiscoveryError, match="more than"):
            read_json(f"http://127.0.0.1:{server.server_port}/.well-known/openid-configuration")
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreachable_provider_is_a_refusal_with_a_reason_not_a_crash(settings, client, db):
    settings.AGENTWEB_OIDC_ISSUER = "http://127.0.0.1:9"
    settings.AGENTWEB_OIDC_CLIENT_ID = "agentweb"

    response = client.get("/sso/begin/")

    assert response.status_code == 503
    assert "could not be reached" in response.content.decode()


def test_manage_oidc_check_prints_what_discovery_found(oidc, capsys):
    call_command("oidc", "check")

    out = capsys.readouterr().out
    assert f"token endpoint: {oidc.issuer}/token" in out
    assert "redirect URI: http://" in out
