"""Sign-in pages: the login page (a password form and/or the provider's button), the start and the end of a
provider sign-in, and sign-out that also ends the provider's session (docs/teams.md, "Sign-in")."""

from __future__ import annotations

import logging
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import user_login_failed
from django.contrib.auth.views import LoginView
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView, OIDCLogoutView

from sso.backend import SignInRefused
from sso.discovery import DiscoveryError, provider_metadata

logger = logging.getLogger("agentweb.sso")


def refused(request: HttpRequest, reason: str, *, username: str = "", method: str = "oidc", status: int = 403):
    """A sign-in that did not happen: told to the person, and to whoever listens to Django's user_login_failed
    (the audit log) with what was tried, never a code or a token."""
    user_login_failed.send(
        sender=__name__, credentials={"username": username[:150], "method": method, "reason": reason}, request=request
    )
    logger.info("sign-in refused (%s): %s", method, reason)
    return render(request, "sso/refused.html", {"reason": reason}, status=status)


class SignInView(LoginView):
    """Django's login page, which refuses a password when password sign-in is off (AGENTWEB_PASSWORD_LOGIN)."""

    template_name = "registration/login.html"

    def post(self, request, *args, **kwargs):
        if not settings.AGENTWEB_PASSWORD_LOGIN:
            return refused(
                request,
                "Password sign-in is turned off here: sign in with your organisation's account.",
                username=str(request.POST.get("username", "")),
                method="password",
            )
        return super().post(request, *args, **kwargs)


class BeginSignIn(OIDCAuthenticationRequestView):
    """Sends the person to the provider's authorization endpoint with a state, a nonce and a PKCE challenge (the
    library's, kept in the session)."""

    def __init__(self, **kwargs):
        # The library reads the endpoint from a setting here; it comes from discovery instead, when asked for.
        super(OIDCAuthenticationRequestView, self).__init__(**kwargs)
        self.OIDC_RP_CLIENT_ID = settings.AGENTWEB_OIDC_CLIENT_ID

    @property
    def OIDC_OP_AUTH_ENDPOINT(self) -> str:
        return provider_metadata().authorization_endpoint

    def get(self, request):
        if not settings.AGENTWEB_OIDC_ISSUER:
            raise Http404("sign-in with a provider is not configured")
        try:
            return super().get(request)
        except DiscoveryError as error:
            return refused(request, f"The sign-in provider could not be reached ({error}).", status=503)


class FinishSignIn(OIDCAuthenticationCallbackView):
    """The provider's answer: the library matches its state to the session's (once: a used state is gone) and
    has the backend exchange the code (with the PKCE verifier) and check the ID token; any refusal is shown."""

    def get(self, request):
        if not settings.AGENTWEB_OIDC_ISSUER:
            raise Http404("sign-in with a provider is not configured")
        try:
            # RFC 9207: a provider that names itself in its answer (`iss`) must be ours (a mix-up with another).
            if "iss" in request.GET and request.GET["iss"] != provider_metadata().issuer:
                raise SignInRefused("This answer comes from another sign-in provider.")
            return super().get(request)
        except DiscoveryError as error:
            return refused(request, f"The sign-in provider could not be reached ({error}).", status=503)
        except SuspiciousOperation:
            # The library's word for a state this session did not start (or already used).
            return refused(
                request, "This sign-in answer does not belong to a sign-in started here (or was used already)."
            )
        except SignInRefused as error:
            return refused(request, error.reason, username=error.username)

    def login_failure(self):
        error = self.request.GET.get("error", "")
        if error:
            reason = f"The provider did not sign you in ({error[:80]})."
        else:  # no sign-in started in this session (the library's other failures are the backend's refusals)
            reason = "This sign-in answer does not belong to a sign-in started here (or was used already)."
        return refused(self.request, reason)


def provider_logout_url(request: HttpRequest) -> str:
    """Where sign-out sends the person (OIDC_OP_LOGOUT_URL_METHOD): the provider's end_session_endpoint (RP-initiated
    logout) when the session was a provider sign-in and the provider offers one, else the login page."""
    after = resolve_url(settings.LOGOUT_REDIRECT_URL)
    id_token = request.session.get("oidc_id_token")
    if not id_token or not settings.AGENTWEB_OIDC_ISSUER:
        return after
    try:
        endpoint = provider_metadata().end_session_endpoint
    except DiscoveryError:
        return after
    if not endpoint:
        return after
    query = urlencode(
        {
            "id_token_hint": id_token,
            "client_id": settings.AGENTWEB_OIDC_CLIENT_ID,
            "post_logout_redirect_uri": request.build_absolute_uri(after),
        }
    )
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"


class SignOut(OIDCLogoutView):
    """Sign-out (POST /accounts/logout/): the library's, which ends the app's session and asks
    provider_logout_url where to go. The provider's end-session page is reached from a page of ours rather than
    by redirecting the form's POST: the app's Content-Security-Policy (form-action 'self') stops a form whose
    answer redirects to another origin, and the page's refresh is a plain navigation."""

    def post(self, request):
        response = super().post(request)
        target = response["Location"]
        if target.startswith(("http://", "https://")) and not target.startswith(request.build_absolute_uri("/")):
            return render(request, "sso/signing_out.html", {"target": target})
        return response


def password_sign_in_off(request: HttpRequest) -> HttpResponse:
    """The admin's own login form, when password sign-in is off: the site's login page instead."""
    from django.shortcuts import redirect

    target = resolve_url(settings.LOGIN_URL)
    next_url = request.GET.get("next")
    return redirect(f"{target}?{urlencode({'next': next_url})}" if next_url else target)
