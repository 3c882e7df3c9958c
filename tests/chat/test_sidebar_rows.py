"""The sidebar's chats as the page's HTML has them (chat/templatetags/sidebar_rows.py): what static/chat/sidebar.js
reads of each row, the time in the words the script writes over it, titles escaped, the page's own chat marked."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone, translation

from agents.models import Agent
from chat.models import Thread
from chat.templatetags.sidebar_rows import relative_time

pytestmark = pytest.mark.django_db


def page(user, path="/", language=None) -> str:
    client = Client(headers={"accept-language": language} if language else {})
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def aged(thread: Thread, **ago) -> Thread:
    Thread.objects.filter(pk=thread.pk).update(updated_at=timezone.now() - timedelta(**ago))
    return thread


def test_each_chat_is_a_row_with_what_the_sidebar_script_reads(owner):
    agent = Agent.objects.create(slug="helper", name="Helper", owner=owner)
    typed = Thread.objects.create(owner=owner, title="<b>bold</b> & co", agent=agent)
    scheduled = Thread.objects.create(owner=owner, title="", source="schedule")
    Thread.objects.filter(pk=scheduled.pk).update(pinned_at=timezone.now())
    html = page(owner, f"/t/{typed.pk}/")

    row = html[html.index(f'data-thread-id="{typed.pk}"') :].split("</li>", 1)[0]
    assert 'data-agent="helper"' in row and 'data-pinned="false"' in row
    assert f'href="/t/{typed.pk}/" aria-current="page"' in row
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in row and "<b>bold</b>" not in html.split('id="thread-list"')[1]
    assert '<time class="thread-time" datetime="' in row and ">just now</time>" in row

    row = html[html.index(f'data-thread-id="{scheduled.pk}"') :].split("</li>", 1)[0]
    assert 'data-pinned="true" data-pinned-at="' in row and 'data-source="schedule"' in row
    assert "Untitled" in row and 'data-origin="schedule"' in row and "aria-current" not in row


def test_an_archived_chat_is_in_the_archived_list_marked_so(owner):
    thread = Thread.objects.create(owner=owner, title="old news")
    Thread.objects.filter(pk=thread.pk).update(archived_at=timezone.now())
    html = page(owner)
    archived = html.split('id="archived-list"', 1)[1].split("</ul>", 1)[0]
    assert f'data-thread-id="{thread.pk}"' in archived and 'data-archived="true"' in archived


def test_times_say_what_the_sidebar_script_says():
    now = timezone.now()
    assert relative_time(now - timedelta(seconds=20), now) == "just now"
    assert relative_time(now - timedelta(minutes=5, seconds=59), now) == "5 min ago"
    assert relative_time(now - timedelta(days=5, minutes=1), now) == "5 days ago"
    long_ago = now - timedelta(days=200)
    assert str(long_ago.year) in relative_time(long_ago, now)


def test_times_are_in_the_persons_language(owner):
    aged(Thread.objects.create(owner=owner, title="a while back"), minutes=7)
    assert ">vor 7 min</time>" in page(owner, language="de")
    with translation.override("fr"):
        assert relative_time(timezone.now() - timedelta(minutes=7), timezone.now()) == "il y a 7 min"


def test_older_chats_each_say_their_own_date(owner):
    # The page formats each older day once (RelativeTimes): two chats of one day share it, another day has its own.
    first = aged(Thread.objects.create(owner=owner, title="first"), days=40)
    same_day = aged(Thread.objects.create(owner=owner, title="same day"), days=40, minutes=1)
    other = aged(Thread.objects.create(owner=owner, title="other"), days=80)
    html = page(owner)

    def said(thread):
        row = html[html.index(f'data-thread-id="{thread.pk}"') :].split("</li>", 1)[0]
        return row.split('<time class="thread-time"', 1)[1].split(">", 1)[1].split("</time>", 1)[0]

    expected = {
        t: relative_time(Thread.objects.get(pk=t.pk).updated_at, timezone.now()) for t in (first, same_day, other)
    }
    assert said(first) == expected[first] and said(same_day) == expected[same_day]
    assert said(other) == expected[other] != expected[first]
