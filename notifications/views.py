"""The settings page's notifications (templates/notifications/settings_section.html): the person's channels, their
browsers' push subscriptions, and the service worker that shows a push. Each view works on the signed-in person's
own rows only: no id in an address names another person's."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from .forms import PreferenceForm
from .models import Preference, PushSubscription

#: The most a subscription's JSON may be (a browser's is a few hundred bytes).
MAX_SUBSCRIPTION_BYTES = 4096
#: The most browsers one person may subscribe.
MAX_SUBSCRIPTIONS = 20
SERVICE_WORKER = Path("notifications") / "service-worker.js"


def _section() -> str:
    return reverse("chat:settings") + "#notifications"


def preference_of(user) -> Preference:
    return Preference.objects.filter(user=user).first() or Preference(user=user)


@login_required
@require_POST
def save(request: HttpRequest) -> HttpResponse:
    form = PreferenceForm(request.POST, preference=preference_of(request.user))
    if not form.is_valid():
        return render(request, "notifications/settings_invalid.html", {"form": form}, status=400)
    form.save(request.user)
    messages.success(request, _("Your notifications are saved."))
    return redirect(_section())


def _json_body(request: HttpRequest):
    if len(request.body) > MAX_SUBSCRIPTION_BYTES:  # Django refuses bodies past DATA_UPLOAD_MAX_MEMORY_SIZE before
        return None
    try:
        return json.loads(request.body)
    except ValueError:
        return None


@login_required
@require_POST
def subscribe(request: HttpRequest) -> HttpResponse:
    """A browser's PushSubscription.toJSON(); an endpoint already kept moves to this person (a shared browser)."""
    data = _json_body(request)
    keys = data.get("keys") if isinstance(data, dict) else None
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    schemes = ("https://", "http://") if settings.DEBUG else ("https://",)
    if not isinstance(endpoint, str) or not endpoint.startswith(schemes):
        return JsonResponse({"error": _("A push endpoint is an https:// URL.")}, status=400)
    if not isinstance(keys, dict) or not all(isinstance(keys.get(k), str) for k in ("p256dh", "auth")):
        return JsonResponse({"error": _("A subscription carries keys.p256dh and keys.auth.")}, status=400)
    if len(endpoint) > 1000 or len(keys["p256dh"]) > 200 or len(keys["auth"]) > 100:
        return JsonResponse({"error": _("The subscription is too long.")}, status=400)
    if PushSubscription.objects.filter(user=request.user).exclude(endpoint=endpoint).count() >= MAX_SUBSCRIPTIONS:
        return JsonResponse(
            {"error": _("At most %(n)s browsers; remove one first.") % {"n": MAX_SUBSCRIPTIONS}}, status=400
        )
    PushSubscription.objects.update_or_create(
        endpoint=endpoint, defaults={"user": request.user, "p256dh": keys["p256dh"], "auth": keys["auth"]}
    )
    preference = preference_of(request.user)
    preference.push = True
    preference.save()
    return JsonResponse({"subscribed": True}, status=201)


@login_required
@require_POST
def unsubscribe(request: HttpRequest) -> HttpResponse:
    data = _json_body(request)
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    deleted, _ = PushSubscription.objects.filter(user=request.user, endpoint=str(endpoint)).delete()
    return JsonResponse({"removed": bool(deleted)})


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    """Served from the site's root, so that its scope covers every page of the app."""
    script = Path(settings.BASE_DIR) / "static" / SERVICE_WORKER
    response = HttpResponse(script.read_bytes(), content_type="text/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    response["Cache-Control"] = "no-cache"
    return response
