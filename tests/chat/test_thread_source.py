"""The sidebar and the thread's header mark a chat not typed in a tab with where it was started (Thread.source: "API",
"Scheduled", "Triggered"), in words: on the page, in search results (which filter by origin), and in the person's
other tabs as the chat appears (thread.listed's `source`)."""

import uuid

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from api.auth import caller_of
from api.models import ApiKey
from chat.models import Thread
from chat.runs.start import begin_turn, launch_run

pytestmark = pytest.mark.django_db(transaction=True)


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def sidebar_item(page: str, thread: Thread) -> str:
    return page.split(f'data-thread-id="{thread.pk}"')[1].split("</li>")[0]


def test_the_page_marks_the_apis_chats_and_no_others(owner):
    from_api = Thread.objects.create(owner=owner, title="from a script", source="api")
    typed = Thread.objects.create(owner=owner, title="typed in a tab")
    page = login(owner).get("/").content.decode()
    marked = sidebar_item(page, from_api)
    assert 'data-source="api"' in marked
    assert 'class="badge thread-source"' in marked
    assert '<span class="visually-hidden">started from the </span>API</span>' in marked  # read out, not just seen
    assert "thread-source" not in sidebar_item(page, typed) and "data-source" not in sidebar_item(page, typed)


def test_search_results_say_where_a_chat_was_started(owner):
    Thread.objects.create(owner=owner, title="script chat", source="api")
    Thread.objects.create(owner=owner, title="tab chat")
    found = login(owner).get("/search", {"q": "chat"}).json()["threads"]
    assert {t["title"]: t["source"] for t in found} == {"script chat": "api", "tab chat": "chat"}


async def test_a_chat_started_with_a_key_is_listed_in_the_persons_tabs_as_the_apis(connect, owner):
    tab = await connect(owner)
    key, _ = await sync_to_async(ApiKey.issue)(owner, "script")
    turn, setup = await begin_turn(
        user=owner,
        session_key=None,
        thread_id=None,
        content="hello from a script",
        client_msg_id=uuid.uuid4(),
        caller=caller_of(key),
    )
    active = await launch_run(turn, setup=setup)
    await active.task
    listed = await tab.until("thread.listed")
    assert listed[-1] == {
        "type": "thread.listed",
        "thread": str(turn.thread.pk),
        "title": turn.thread.title,
        "agent": None,
        "source": "api",
    }


@pytest.mark.parametrize(
    ("source", "word", "spoken"),
    [("schedule", "Scheduled", "started by a schedule: "), ("trigger", "Triggered", "started by a webhook: ")],
)
def test_every_origin_is_marked_in_words_in_the_sidebar_and_the_threads_header(owner, source, word, spoken):
    thread = Thread.objects.create(owner=owner, title=f"from a {source}", source=source)
    page = login(owner).get(f"/t/{thread.pk}/").content.decode()
    marked = sidebar_item(page, thread)
    assert f'data-source="{source}"' in marked
    assert f'<span class="visually-hidden">{spoken}</span>{word}</span>' in marked
    header = page.split('id="thread-origin"')[1].split("</span></span>")[0]
    assert f"{spoken}</span>{word}" in header


def test_a_typed_chats_header_carries_no_origin(owner):
    typed = Thread.objects.create(owner=owner, title="typed in a tab")
    assert 'id="thread-origin"' not in login(owner).get(f"/t/{typed.pk}/").content.decode()


def test_search_filters_by_origin_and_refuses_an_unknown_one(owner):
    for source in ("chat", "api", "schedule", "trigger"):
        Thread.objects.create(owner=owner, title=f"{source} one", source=source)
    client = login(owner)
    found = client.get("/search", {"q": "", "source": "trigger"}).json()["threads"]
    assert [t["title"] for t in found] == ["trigger one"]
    assert [t["title"] for t in client.get("/search", {"q": "one", "source": "chat"}).json()["threads"]] == ["chat one"]
    assert client.get("/search", {"source": "cron"}).status_code == 400
