"""The authentication backend of an OpenID Connect sign-in: mozilla-django-oidc's code flow, with the endpoints read
from discovery, every token checked for this client and this issuer, and the account found by the provider's
`sub`, its groups and roles set from the claims (docs/teams.md, "Sign-in")."""

from __future__ import annotations

import base64
import json
import logging
import re
import secrets
from urllib.parse import quote

import httpx
import jwt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from sso.discovery import (
    MAX_BODY_BYTES,
    TIMEOUT_SECONDS,
    DiscoveryError,
    ProviderMetadata,
    provider_metadata,
    signing_keys,
)
from sso.groups import ClaimError, apply_roles, claimed_groups, sync_groups
from sso.models import Identity

logger = logging.getLogger("agentweb.sso")

# Seconds of clock difference between the provider and this server that a token's times may show.
LEEWAY_SECONDS = 60
USERNAME_LENGTH = 150


class SignInRefused(Exception):
    """A sign-in through the provider that must not succeed, with a reason a person may read (never a token)."""

    def __init__(self, reason: str, username: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.username = username


class OIDCBackend(OIDCAuthenticationBackend):
    """Signs a person in from the provider's answer to a code, and (as Django's ModelBackend, which it extends)
    answers for the permissions of every session it made."""

    def __init__(self, *args, **kwargs):
        # Django makes a backend for every request's session: the endpoints are read (from discovery, cached) only
        # when a sign-in needs them, never here. The library's own __init__ reads them all from settings.
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.AGENTWEB_OIDC_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.AGENTWEB_OIDC_CLIENT_SECRET

    @property
    def metadata(self) -> ProviderMetadata:
        return provider_metadata()

    def authenticate(self, request, **kwargs):
        # Only the callback view passes a nonce: a password form's POST whose address happens to carry ?code=&state=
        # is not a provider's answer.
        if request is None or "nonce" not in kwargs:
            return None
        try:
            return super().authenticate(request, **kwargs)
        except DiscoveryError as error:
            raise SignInRefused(f"the sign-in provider could not be reached ({error})") from None

    # --- the provider's answers, each read within a timeout and a size ---
    def _read(self, response: httpx.Response, what: str) -> dict:
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise SignInRefused(f"the provider's {what} answer was too long")
        try:
            document = json.loads(bytes(body))
        except ValueError:
            raise SignInRefused(f"the provider's {what} answer was not JSON") from None
        if not isinstance(document, dict):
            raise SignInRefused(f"the provider's {what} answer was not a JSON object")
        return document

    def get_token(self, payload):
        """The code exchanged at the token endpoint; with a client secret, sent as HTTP Basic (RFC 6749 §2.3.1,
        each part form-encoded) unless the provider says it takes only client_secret_post."""
        payload = dict(payload)
        secret = payload.pop("client_secret", "")
        headers = {"Accept": "application/json"}
        if secret:
            if "client_secret_basic" in self.metadata.token_auth_methods:
                credentials = f"{quote(payload['client_id'], safe='')}:{quote(secret, safe='')}"
                headers["Authorization"] = "Basic " + _b64(credentials)
            else:
                payload["client_secret"] = secret
        try:
            with httpx.stream(
                "POST", self.metadata.token_endpoint, data=payload, headers=headers, timeout=TIMEOUT_SECONDS
            ) as response:
                document = self._read(response, "token")
        except httpx.HTTPError as error:
            raise SignInRefused(
                f"the provider's token endpoint could not be reached ({type(error).__name__})"
            ) from None
        if response.status_code != 200:
            code = str(document.get("error", "error"))[:80]
            raise SignInRefused(f"the provider refused the sign-in's code ({code})")
        if not isinstance(document.get("id_token"), str):
            raise SignInRefused("the provider's token answer holds no ID token")
        return document

    def verify_token(self, token, **kwargs):
        """The ID token's claims, once its signature (the provider's key, or the client secret for HS*), issuer,
        audience (this client; with several audiences, `azp` this client too), times and nonce are checked."""
        metadata = self.metadata
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise SignInRefused("the ID token could not be read") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm == "none" or algorithm not in metadata.signing_algorithms:
            raise SignInRefused("the ID token is signed with an algorithm the provider does not offer")
        if algorithm.startswith("HS"):
            if not self.OIDC_RP_CLIENT_SECRET:
                raise SignInRefused("the ID token is signed with a client secret, and this client has none")
            key = self.OIDC_RP_CLIENT_SECRET
        else:
            key = self._public_key(metadata, header)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.OIDC_RP_CLIENT_ID,
                issuer=metadata.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["iss", "aud", "sub", "exp", "iat"]},
            )
        except jwt.InvalidAudienceError:
            raise SignInRefused("the ID token was issued to another client") from None
        except jwt.InvalidIssuerError:
            raise SignInRefused("the ID token was issued by another provider") from None
        except jwt.ExpiredSignatureError:
            raise SignInRefused("the ID token has expired") from None
        except jwt.PyJWTError as error:
            raise SignInRefused(f"the ID token was refused ({type(error).__name__})") from None
        audience = claims["aud"]
        if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != self.OIDC_RP_CLIENT_ID:
            raise SignInRefused("the ID token was issued to another client")
        if kwargs.get("nonce") != claims.get("nonce"):
            raise SignInRefused("the ID token's nonce is not this sign-in's")
        return claims

    def _public_key(self, metadata: ProviderMetadata, header: dict):
        """The provider's key the token names (its `kid`), reading the keys again once if it is new (a rotation)."""
        for fresh in (False, True):
            try:
                keys = signing_keys(metadata, fresh=fresh)
            except DiscoveryError as error:
                raise SignInRefused(f"the provider's keys could not be read ({error})") from None
            candidates = [
                item
                for item in keys
                if (header.get("kid") is None or item.get("kid") == header.get("kid"))
                and item.get("use", "sig") == "sig"
                and item.get("alg", header["alg"]) == header["alg"]
            ]
            if candidates:
                try:
                    return jwt.PyJWK(candidates[0], algorithm=header["alg"]).key
                except jwt.PyJWTError:
                    raise SignInRefused("the provider's signing key could not be used") from None
        raise SignInRefused("the ID token is signed with a key the provider does not publish")

    def get_userinfo(self, access_token, id_token, payload):
        """The ID token's claims with the userinfo endpoint's added (groups often arrive only there), when the
        provider has one; userinfo about another `sub` refuses the sign-in."""
        claims = dict(payload)
        endpoint = self.metadata.userinfo_endpoint
        if not endpoint or not access_token:
            return claims
        try:
            with httpx.stream(
                "GET",
                endpoint,
                headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"},
                timeout=TIMEOUT_SECONDS,
            ) as response:
                if response.status_code != 200:
                    raise SignInRefused(f"the provider's userinfo endpoint answered HTTP {response.status_code}")
                if not response.headers.get("content-type", "").lower().startswith("application/json"):
                    return claims  # a signed userinfo (application/jwt): the ID token's claims are enough
                userinfo = self._read(response, "userinfo")
        except httpx.HTTPError as error:
            raise SignInRefused(
                f"the provider's userinfo endpoint could not be reached ({type(error).__name__})"
            ) from None
        if userinfo.get("sub") != payload.get("sub"):
            raise SignInRefused("the provider's userinfo is about another person")
        claims.update(userinfo)
        return claims

    # --- the account ---
    def get_or_create_user(self, access_token, id_token, payload):
        claims = self.get_userinfo(access_token, id_token, payload)
        subject = claims.get("sub")
        username_hint = _username_hint(claims)
        if not isinstance(subject, str) or not subject or len(subject) > 255:
            raise SignInRefused("the provider's `sub` claim is not an identifier", username_hint)
        try:
            groups = claimed_groups(claims, settings.AGENTWEB_OIDC_GROUPS_CLAIM)
        except ClaimError as error:
            raise SignInRefused(str(error), username_hint) from None
        with transaction.atomic():
            identity = Identity.objects.select_related("user").filter(issuer=claims["iss"], subject=subject).first()
            if identity is None:
                identity = Identity(issuer=claims["iss"], subject=subject, user=self._account_for(claims))
            user = identity.user
            if not user.is_active:
                raise SignInRefused("this account is deactivated", user.get_username())
            self._update_profile(user, claims)
            apply_roles(user, groups)
            user.save()
            identity.user = user
            identity.last_sign_in = timezone.now()
            identity.save()
            sync_groups(user, groups)
        logger.info("signed in through the provider: user %s, %d groups from the claim", user.pk, len(groups))
        return user

    def _account_for(self, claims: dict):
        """The account a first sign-in is tied to: an existing one with the same email only when the provider says
        it verified that email (else anyone who can set an address at the provider could take over an account),
        and no other identity of this provider holds it; otherwise a new account."""
        email = claims.get("email") if isinstance(claims.get("email"), str) else ""
        if email and claims.get("email_verified") is True:
            matches = list(self.UserModel.objects.filter(email__iexact=email)[:2])
            if len(matches) == 1 and not Identity.objects.filter(user=matches[0], issuer=claims["iss"]).exists():
                return matches[0]
        user = self.UserModel(username=self._free_username(_username_hint(claims) or "user"), email=email[:254])
        user.set_unusable_password()
        user.save()
        return user

    def _free_username(self, hint: str) -> str:
        base = re.sub(r"[^\w.@+-]", "_", hint)[: USERNAME_LENGTH - 8] or "user"
        candidate = base
        for number in range(2, 100):
            if not self.UserModel.objects.filter(username__iexact=candidate).exists():
                return candidate
            candidate = f"{base}-{number}"
        return f"{base}-{secrets.token_hex(3)}"

    def _update_profile(self, user, claims: dict) -> None:
        for field, claim, length in (
            ("email", "email", 254),
            ("first_name", "given_name", 150),
            ("last_name", "family_name", 150),
        ):
            value = claims.get(claim)
            if isinstance(value, str) and value:
                setattr(user, field, value[:length])


def _username_hint(claims: dict) -> str:
    for claim in ("preferred_username", "email", "sub"):
        value = claims.get(claim)
        if isinstance(value, str) and value:
            return value[:USERNAME_LENGTH]
    return ""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
