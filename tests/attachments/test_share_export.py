"""Attachments in exports (named, with sizes) and in share links only when the share says so."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from attachments.services import store_upload, summary
from chat.models import Message, Thread
from sharing.services import create_link
from tests.attachments.files import png

pytestmark = pytest.mark.django_db


@pytest.fixture
def thread_with_files(owner, settings):
    settings.AGENTWEB_ATTACHMENT_TEXT_CHARS = 5
    thread = Thread.objects.create(owner=owner, title="Files")
    message = Message.objects.create(thread=thread, order=1, role=Message.Role.USER, content="Look")
    rows = [
        store_upload(owner=owner, name="red.png", data=png()),
        store_upload(owner=owner, name="a.txt", data=b"123456"),
    ]
    for row in rows:
        row.thread, row.message = thread, message
        row.save()
    message.attachments = [summary(row) for row in rows]
    message.save()
    return thread, rows


def owner_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_exports_name_the_files_with_their_sizes(owner, thread_with_files):
    thread, rows = thread_with_files
    data = json.loads(owner_client(owner).get(f"/t/{thread.pk}/export.json").getvalue())  # streamed
    user = next(m for m in data["messages"] if m["role"] == "user")
    assert user["attachments"] == [
        {"name": "red.png", "content_type": "image/png", "size": rows[0].size, "capped_at": None},
        {"name": "a.txt", "content_type": "text/plain", "size": 6, "capped_at": 5},
    ]
    markdown = owner_client(owner).get(f"/t/{thread.pk}/export.md").content.decode()
    assert f"- 📎 red.png (image/png, {rows[0].size} B)" in markdown
    assert "- 📎 a.txt (text/plain, 6 B), the model read its first 5 characters" in markdown


def test_a_share_shows_attachments_only_when_it_says_so(owner, thread_with_files):
    thread, rows = thread_with_files
    plain = create_link(thread=thread)
    page = Client().get(f"/s/{plain.token}/").content.decode()
    assert "red.png" not in page
    assert Client().get(f"/s/{plain.token}/a/{rows[0].pk}/").status_code == 404

    shared = create_link(thread=thread, share_attachments=True)
    page = Client().get(f"/s/{shared.token}/").content.decode()
    assert f'src="a/{rows[0].pk}/"' in page and "a.txt" in page
    image = Client().get(f"/s/{shared.token}/a/{rows[0].pk}/")
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    text = Client().get(f"/s/{shared.token}/a/{rows[1].pk}/")
    assert text["Content-Disposition"].startswith("attachment")

    # Another thread's file is not served through this link, nor after it is revoked.
    other = store_upload(owner=owner, name="other.png", data=png())
    assert Client().get(f"/s/{shared.token}/a/{other.pk}/").status_code == 404
    shared.link.revoke()
    assert Client().get(f"/s/{shared.token}/a/{rows[0].pk}/").status_code == 404


def test_a_shared_file_link_draws_its_icon_itself_rather_than_with_an_emoji_font(owner, thread_with_files):
    thread, rows = thread_with_files
    shared = create_link(thread=thread, share_attachments=True)
    page = Client().get(f"/s/{shared.token}/").content.decode()
    start = page.index(f'href="a/{rows[1].pk}/"')
    link = page[start : page.index("</a>", start)]
    assert "<svg" in link and 'aria-hidden="true"' in link and "a.txt" in link
    assert "\U0001f4c4" not in page  # 📄, a box where no emoji font is installed
