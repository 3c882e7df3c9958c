"""The audit log exported as CSV and JSON from the audit page, with its filters, streamed in batches; staff with the
view permission only; the export itself recorded; no secret in what goes out."""

import csv
import io
import json

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission
from django.test import AsyncClient
from django.urls import reverse

import audit
from api.models import ApiKey
from audit import export
from audit.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

CSV = "/admin/audit/event/export.csv"
JSON = "/admin/audit/event/export.json"


async def body(response) -> str:
    assert response.streaming
    return b"".join([part async for part in response.streaming_content]).decode()


async def signed_in(user) -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(user)
    return client


@pytest.fixture
def history(owner, stranger, client):
    """What people did through the pages: a sign-in, a failed one with a formula for a name, a key made."""
    from django.test import Client

    Client().post(reverse("login"), {"username": "owner", "password": "owner-password-1"})
    Client().post(reverse("login"), {"username": "=HYPERLINK(1)", "password": "p4ss-w0rd-secret"})
    http = Client()
    http.force_login(owner)
    page = http.post("/settings/api-keys/", {"name": "script"}).content.decode()
    return page.split('id="api-key-value" type="text" readonly value="')[1].split('"')[0]


async def test_csv_holds_every_event_and_no_secret(superuser, history, monkeypatch):
    monkeypatch.setattr(export, "BATCH", 2)  # several batches, read one after another
    client = await signed_in(superuser)
    response = await client.get(CSV)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="audit-')
    text = await body(response)
    rows = list(csv.DictReader(io.StringIO(text)))
    recorded = await sync_to_async(lambda: list(Event.objects.order_by("-id")))()
    assert [int(r["id"]) for r in rows] == [e.pk for e in recorded]  # newest first, none twice, none missing
    assert rows[0]["action"] == "audit.exported"  # the export itself, written before it streams
    assert {r["action"] for r in rows} >= {"signin", "signin.failed", "api_key.created"}
    failed = next(r for r in rows if r["action"] == "signin.failed")
    assert failed["target"] == "'=HYPERLINK(1)"  # a spreadsheet reads it as text, not a formula
    hashed = await sync_to_async(lambda: ApiKey.objects.get().hashed)()
    for secret in (history, hashed, "p4ss-w0rd-secret", "owner-password-1"):
        assert secret not in text


async def test_json_follows_the_lists_filters(superuser, history):
    client = await signed_in(superuser)
    response = await client.get(JSON, {"action__exact": "api_key.created"})
    assert response["Content-Type"] == "application/json"
    [made] = json.loads(await body(response))
    assert (made["action"], made["actor"], made["target_type"]) == ("api_key.created", "owner", "api.apikey")
    assert made["detail"]["via"] == "settings"
    assert history not in json.dumps(made)


async def test_an_empty_export_is_valid_json(superuser):
    client = await signed_in(superuser)
    assert json.loads(await body(await client.get(JSON, {"action__exact": "mcp.connected"}))) == []


async def test_the_export_is_recorded_with_its_filters(superuser):
    client = await signed_in(superuser)
    await body(await client.get(CSV, {"action__exact": "signin"}))
    exported = await Event.objects.aget(action="audit.exported")
    assert (exported.actor_id, exported.detail) == (superuser.pk, {"format": "csv", "filters": "action__exact=signin"})


async def test_only_staff_with_the_view_permission_export(owner, staff):
    await sync_to_async(audit.record)(audit.Action.SIGNIN, actor=owner)
    response = await (await signed_in(owner)).get(CSV)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    client = await signed_in(staff)
    assert (await client.get(CSV)).status_code == 403
    view = await Permission.objects.aget(codename="view_event", content_type__app_label="audit")
    await staff.user_permissions.aadd(view)
    assert "signin" in await body(await client.get(CSV))
    assert (await client.get("/admin/audit/event/export.xml")).status_code == 404
    assert (await client.get(CSV, {"no_such_field": "x"})).status_code == 400
