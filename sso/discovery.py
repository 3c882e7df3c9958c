"""The provider's endpoints and keys, read from its discovery document (OpenID Connect Discovery 1.0).

mozilla-django-oidc takes each endpoint as a setting of its own; an operator here names only the issuer, and the
rest is read from `<issuer>/.well-known/openid-configuration` and kept in Django's cache for an hour (a provider
rotates its keys rarely, and a key id not yet seen makes the keys be read again at once). Every read is bounded:
a timeout, and a body over MAX_BODY_BYTES refused before it is parsed."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
from django.conf import settings
from django.core.cache import cache

MAX_BODY_BYTES = 512 * 1024
TIMEOUT_SECONDS = 10.0
CACHE_SECONDS = 3600
REQUIRED = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri")


class DiscoveryError(Exception):
    """The provider's discovery document or keys could not be read, or say something the sign-in cannot use."""


@dataclass(frozen=True)
class ProviderMetadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str = ""
    end_session_endpoint: str = ""
    code_challenge_methods: tuple[str, ...] = ()
    signing_algorithms: tuple[str, ...] = ("RS256",)
    # How the token endpoint takes the client's secret; absent from the document means client_secret_basic.
    token_auth_methods: tuple[str, ...] = ("client_secret_basic",)


def discovery_url(issuer: str) -> str:
    return issuer.rstrip("/") + "/.well-known/openid-configuration"


def read_json(url: str) -> dict:
    """GET `url` and parse its JSON object, refusing a body over MAX_BODY_BYTES before it is parsed."""
    try:
        with httpx.stream("GET", url, timeout=TIMEOUT_SECONDS, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                raise DiscoveryError(f"{url} answered HTTP {response.status_code}")
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise DiscoveryError(f"{url} answered more than {MAX_BODY_BYTES} bytes")
    except httpx.HTTPError as error:
        raise DiscoveryError(f"{url} could not be read: {type(error).__name__}") from None
    try:
        document = json.loads(bytes(body))
    except ValueError:
        raise DiscoveryError(f"{url} did not answer JSON") from None
    if not isinstance(document, dict):
        raise DiscoveryError(f"{url} did not answer a JSON object")
    return document


def parse_metadata(issuer: str, document: dict) -> ProviderMetadata:
    """The endpoints of a discovery document, checked: it must be the configured issuer's own (OpenID Connect
    Discovery 1.0 §4.3; a trailing slash aside, as operators copy issuers either way) and name every endpoint the
    code flow needs."""
    missing = [name for name in REQUIRED if not isinstance(document.get(name), str) or not document[name]]
    if missing:
        raise DiscoveryError(f"the discovery document names no {', '.join(missing)}")
    if document["issuer"].rstrip("/") != issuer.rstrip("/"):
        raise DiscoveryError(f"the discovery document is issuer {document['issuer']!r}'s, not {issuer!r}'s")

    def strings(name: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = document.get(name)
        return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else default

    def text(name: str) -> str:
        return document[name] if isinstance(document.get(name), str) else ""

    return ProviderMetadata(
        issuer=document["issuer"],
        authorization_endpoint=document["authorization_endpoint"],
        token_endpoint=document["token_endpoint"],
        jwks_uri=document["jwks_uri"],
        userinfo_endpoint=text("userinfo_endpoint"),
        end_session_endpoint=text("end_session_endpoint"),
        code_challenge_methods=strings("code_challenge_methods_supported"),
        signing_algorithms=strings("id_token_signing_alg_values_supported", ("RS256",)),
        token_auth_methods=strings("token_endpoint_auth_methods_supported", ("client_secret_basic",)),
    )


def provider_metadata(issuer: str | None = None) -> ProviderMetadata:
    """The configured provider's endpoints, from the cache or read now."""
    issuer = issuer or settings.AGENTWEB_OIDC_ISSUER
    key = f"sso:discovery:{issuer}"
    document = cache.get(key)
    if document is None:
        document = read_json(discovery_url(issuer))
        metadata = parse_metadata(issuer, document)  # only a usable document is kept
        cache.set(key, document, CACHE_SECONDS)
        return metadata
    return parse_metadata(issuer, document)


def signing_keys(metadata: ProviderMetadata, *, fresh: bool = False) -> list[dict]:
    """The provider's public keys (its JWKS), from the cache unless `fresh`."""
    key = f"sso:jwks:{metadata.jwks_uri}"
    keys = None if fresh else cache.get(key)
    if keys is None:
        document = read_json(metadata.jwks_uri)
        keys = [item for item in document.get("keys", []) if isinstance(item, dict)]
        cache.set(key, keys, CACHE_SECONDS)
    return keys
