"""The triggers' addresses (agentweb/urls.py includes them under hooks/): the person's triggers page, making one
(its secret shown once) and removing one; and `POST /hooks/<id>`, a delivery (hooks/deliveries.py)."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from chat.runs.detached import detached

from . import signing, template
from .deliveries import Posted, take
from .forms import TriggerForm
from .services import NoSuchTrigger, TriggerRefused, make_trigger, trigger_of, triggers_of


def _page(request: HttpRequest, form: TriggerForm, status: int = 200) -> HttpResponse:
    rows = triggers_of(request.user)
    return render(request, "hooks/triggers.html", {"triggers": rows, "form": form}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def triggers(request: HttpRequest) -> HttpResponse:
    """GET: the list and the form. POST: a new trigger, its secret on the answer only (rendered, never redirected to
    or put in a message, not cached), with a signed example to copy."""
    if request.method == "GET":
        return _page(request, TriggerForm(user=request.user))
    form = TriggerForm(request.POST, user=request.user)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        asked = form.cleaned_data
        row, secret = make_trigger(request.user, agent=asked["agent"], prompt=asked["prompt"], name=asked["name"])
    except TriggerRefused as error:
        form.add_error(None, str(error))
        return _page(request, form, status=400)
    url = request.build_absolute_uri(reverse("hooks:deliver", args=[row.pk]))
    context = {"row": row, "secret": secret, "url": url, "signing": signing, "example": example_payload(row)}
    response = render(request, "hooks/trigger_created.html", context, status=201)
    add_never_cache_headers(response)
    response["Referrer-Policy"] = "no-referrer"
    return response


def example_payload(row) -> str:
    """A JSON body with every field the prompt uses ("…" for each), for the example."""
    payload: dict = {}
    for name in template.fields(row.prompt):
        node = payload
        *path, last = name.split(".")
        for key in path:
            child = node.get(key)
            node = node.setdefault(key, {}) if child is None or isinstance(child, dict) else {}
        node[last] = "example"
    return json.dumps(payload or {"text": "hello"}, ensure_ascii=False, separators=(",", ":"))


@login_required
@require_POST
def remove(request: HttpRequest, trigger_id: str) -> HttpResponse:
    try:
        row = trigger_of(request.user, trigger_id)
    except NoSuchTrigger:
        raise Http404("No such trigger.") from None
    row.delete()
    messages.success(
        request, _("The trigger “%(name)s” is removed: its address no longer takes deliveries.") % {"name": row}
    )
    return redirect("hooks:list")


@csrf_exempt
async def deliver(request: HttpRequest, trigger_id: str) -> HttpResponse:
    """A delivery: no session, no CSRF token; the signature is the credential. The body is at most
    AGENTWEB_HOOK_MAX_BODY_BYTES, refused (413) before it is read (agentweb/request_limits.py)."""
    if request.method != "POST":
        return JsonResponse({"error": {"message": "Use POST.", "code": "method_not_allowed"}}, status=405)
    if len(request.body) > settings.AGENTWEB_HOOK_MAX_BODY_BYTES:  # a server not ours, that did not hold the limit
        return JsonResponse({"error": {"message": "The body is too big.", "code": "too_large"}}, status=413)
    posted = Posted(
        trigger_id=trigger_id,
        body=request.body,
        timestamp=request.headers.get(signing.TIMESTAMP_HEADER),
        signature=request.headers.get(signing.SIGNATURE_HEADER),
        delivery_id=request.headers.get(signing.DELIVERY_HEADER),
    )
    answer = await detached(take(posted))
    response = JsonResponse(answer.body, status=answer.status)
    for name, value in (answer.headers or {}).items():
        response[name] = value
    return response
