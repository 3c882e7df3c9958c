"""The upload, read and remove views: limits, type by content, quota, CSRF, owner-only, broken PDFs, cleanup."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from attachments.models import Attachment
from tests.attachments.files import BROKEN_PDF, pdf, png

pytestmark = pytest.mark.django_db


def client_for(user, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def upload(client: Client, name: str, data: bytes, content_type: str = "application/octet-stream"):
    return client.post("/attachments/", {"file": SimpleUploadedFile(name, data, content_type=content_type)})


def test_an_image_is_stored_with_its_type_from_its_content(owner):
    response = upload(client_for(owner), "photo.png", png(), "text/html")  # the browser's word is not taken
    assert response.status_code == 201
    body = response.json()
    assert body["kind"] == "image" and body["content_type"] == "image/png" and body["size"] == len(png())
    row = Attachment.objects.get(pk=body["id"])
    assert row.owner == owner and row.thread is None and row.message is None and row.text is None
    assert default_storage.exists(row.path)
    assert body["url"] == f"/attachments/{row.pk}/"


def test_a_text_file_keeps_its_text_and_says_the_cap(owner, settings):
    settings.AGENTWEB_ATTACHMENT_TEXT_CHARS = 10
    body = upload(client_for(owner), "notes.md", b"# Notes\nsome long text here").json()
    assert body["kind"] == "text" and body["content_type"] == "text/markdown"
    assert body["chars"] == 27 and body["capped_at"] == 10
    assert Attachment.objects.get(pk=body["id"]).text == "# Notes\nsome long text here"


def test_a_pdfs_text_is_extracted(owner):
    body = upload(client_for(owner), "report.pdf", pdf("Quarterly numbers")).json()
    assert body["kind"] == "pdf"
    assert Attachment.objects.get(pk=body["id"]).text == "Quarterly numbers"


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("broken.pdf", BROKEN_PDF, "could not be read as a PDF"),
        ("page.html", b"<html><script>alert(1)</script></html>", "not accepted"),
        ("logo.svg", b'<svg xmlns="http://www.w3.org/2000/svg"></svg>', "not accepted"),
        ("fake.png", b"MZ\x90\x00 not an image", "not accepted"),
        ("binary.txt", b"\xff\xfe\x00\x01\x02", "not UTF-8 text"),
        ("program.exe", b"MZ\x90\x00\x03", "not accepted"),
        ("empty.txt", b"", "empty"),
    ],
)
def test_refused_files_are_not_stored(owner, name, data, says):
    response = upload(client_for(owner), name, data)
    assert response.status_code == 400
    assert says in response.json()["error"]
    assert not Attachment.objects.exists()
    assert (
        not default_storage.exists(f"attachments/{owner.pk}")
        or not default_storage.listdir(f"attachments/{owner.pk}")[1]
    )


def test_a_file_over_the_limit_is_refused(owner, settings):
    settings.AGENTWEB_ATTACHMENT_MAX_BYTES = 1000
    response = upload(client_for(owner), "big.txt", b"a" * 1001)
    assert response.status_code == 413
    assert "at most 1000 B" in response.json()["error"]
    assert not Attachment.objects.exists()


def test_the_quota_counts_what_the_person_has(owner, stranger, settings):
    settings.AGENTWEB_ATTACHMENT_QUOTA_BYTES = 150
    assert upload(client_for(owner), "a.txt", b"a" * 100).status_code == 201
    refused = upload(client_for(owner), "b.txt", b"b" * 100)
    assert refused.status_code == 400 and "quota" in refused.json()["error"]
    assert upload(client_for(stranger), "c.txt", b"c" * 100).status_code == 201  # another person's own quota
    assert Attachment.objects.count() == 2


def test_upload_needs_csrf_and_a_login(owner):
    assert upload(client_for(owner, csrf=True), "a.txt", b"hello").status_code == 403
    response = upload(Client(), "a.txt", b"hello")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Attachment.objects.exists()


def test_a_file_is_its_owners_only(owner, stranger):
    body = upload(client_for(owner), "notes.txt", b"secret notes").json()
    assert client_for(stranger).get(body["url"]).status_code == 404
    assert client_for(stranger).post(f"{body['url']}remove").status_code == 404
    response = client_for(owner).get(body["url"])
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"secret notes"
    assert response["Content-Disposition"].startswith('attachment; filename="notes.txt"')
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]


def test_an_image_is_shown_inline_and_a_file_name_is_cleaned(owner):
    body = upload(client_for(owner), '../../etc/"evil"\x07.png', png()).json()
    assert body["name"] == "_evil_.png"
    response = client_for(owner).get(body["url"])
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"].startswith("inline")


def test_removing_an_unsent_upload_removes_its_file(owner, django_capture_on_commit_callbacks):
    body = upload(client_for(owner), "a.txt", b"hello").json()
    path = Attachment.objects.get(pk=body["id"]).path
    with django_capture_on_commit_callbacks(execute=True):  # the file goes once the delete commits
        response = client_for(owner).post(f"{body['url']}remove")
    assert response.status_code == 200
    assert not Attachment.objects.exists()
    assert not default_storage.exists(path)


def test_stale_unsent_uploads_go_on_the_next_upload_and_with_the_command(
    owner, stranger, settings, django_capture_on_commit_callbacks
):
    settings.AGENTWEB_ATTACHMENT_UNSENT_HOURS = 24
    old = upload(client_for(owner), "old.txt", b"old").json()
    others = upload(client_for(stranger), "theirs.txt", b"theirs").json()
    Attachment.objects.update(created_at=Attachment.objects.first().created_at - timedelta(hours=25))
    old_path = Attachment.objects.get(pk=old["id"]).path
    with django_capture_on_commit_callbacks(execute=True):
        upload(client_for(owner), "new.txt", b"new")
    assert not Attachment.objects.filter(pk=old["id"]).exists() and not default_storage.exists(old_path)
    assert Attachment.objects.filter(pk=others["id"]).exists()  # the next upload cleans its own person's only
    call_command("attachments", "cleanup")
    assert not Attachment.objects.filter(pk=others["id"]).exists()
    assert Attachment.objects.filter(name="new.txt").exists()
