"""A long thread a page at a time (issue 42, chat/store/pages.py): the paged snapshot holds the newest messages and a
cursor; GET /t/<id>/messages?before= reads each earlier page, whole turns, the branch shown only, the person's own
thread only. Run on SQLite by default and on PostgreSQL with DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentweb
(there, every statement must be able to use an index)."""

import uuid

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from chat import store
from chat.models import Message, Run, Thread, ToolCall
from chat.store import versions
from chat.store.pages import MAX_PAGE_MESSAGES, PAGE_MESSAGES
from chat.store.snapshot import earlier_page

pytestmark = pytest.mark.django_db


def add_turns(thread, turns: int, *, start: int = 1, after: Message | None = None, steps: int = 1) -> list[Message]:
    """`turns` turns from order `start` on: a question, then `steps` answers (the first calls the calculator every third
    turn, its result a tool message); parents set as the app sets them. The shown messages, in order."""
    shown, order, last = [], start, after
    for n in range(turns):
        question = Message.objects.create(
            thread=thread, order=order, role="user", content=f"question {order}", parent=last
        )
        shown.append(question)
        order += 1
        for step in range(steps):
            answer = Message.objects.create(
                thread=thread,
                order=order,
                role="assistant",
                content=f"answer {order}",
                parent=question if step == 0 else None,
                usage={"input_tokens": 10, "output_tokens": 2, "estimated": False, "cost": None},
            )
            shown.append(answer)
            order += 1
            if step == 0 and n % 3 == 0:
                ToolCall.objects.create(
                    message=answer, index=0, call_id=f"c{order}", name="calculator", status="success"
                )
                Message.objects.create(
                    thread=thread, order=order, role="tool", content="4", tool_call_id=f"c{order}", artifact={"a": 1}
                )
                order += 1
            last = answer
    return shown


def fetch(user, thread, **params):
    client = Client()
    client.force_login(user)
    return client.get(f"/t/{thread.pk}/messages", params)


def snapshot(thread, page=PAGE_MESSAGES):
    return store.build_snapshot(thread=thread, seq=0, model={}, page=page)


def every_page(user, thread, **params) -> list[list[dict]]:
    """The paged snapshot's messages, then each earlier page's, newest first, until the thread's first."""
    first = snapshot(thread)
    pages, cursor = [first["messages"]], first["earlier"]
    while cursor is not None:
        answer = fetch(user, thread, before=cursor, **params)
        assert answer.status_code == 200, answer.content
        body = answer.json()
        pages.append(body["messages"])
        cursor = body["earlier"]
        assert len(pages) < 100
    return pages


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner, title="long")


def test_the_paged_snapshot_holds_the_newest_whole_turns_and_the_cursor(owner, thread):
    shown = add_turns(thread, 100)
    first = snapshot(thread)
    ids = [m["id"] for m in first["messages"]]
    assert ids == [m.pk for m in shown[-len(ids) :]]
    assert PAGE_MESSAGES - 1 <= len(ids) <= PAGE_MESSAGES
    assert first["messages"][0]["role"] == "user"
    assert first["earlier"] == ids[0]
    assert snapshot(thread, page=None).get("earlier", "absent") == "absent"  # as before: every message, no cursor
    assert len(snapshot(thread, page=None)["messages"]) == len(shown)


def test_a_short_thread_comes_whole_with_no_cursor(owner, thread):
    shown = add_turns(thread, 5)
    first = snapshot(thread)
    assert [m["id"] for m in first["messages"]] == [m.pk for m in shown]
    assert first["earlier"] is None


def test_scrolling_back_page_by_page_gives_every_message_once_in_order(owner, thread):
    shown = add_turns(thread, 160)
    pages = every_page(owner, thread, limit=30)
    assert [m["id"] for page in reversed(pages) for m in page] == [m.pk for m in shown]
    assert all(page[0]["role"] == "user" for page in pages)  # a page never splits an answer
    assert all(len(page) <= 30 for page in pages[1:])


def test_older_pages_carry_tool_calls_their_results_and_artifacts(owner, thread):
    add_turns(thread, 120)
    pages = every_page(owner, thread)
    oldest = pages[-1]
    call = oldest[1]["tool_calls"][0]  # the first turn's answer calls the calculator
    assert (call["name"], call["status"], call["has_artifact"]) == ("calculator", "success", True)
    assert oldest[1]["usage"]["input_tokens"] == 10


def test_a_turn_longer_than_a_page_comes_whole(owner, thread):
    add_turns(thread, 3)
    long_turn = add_turns(thread, 1, start=20, steps=30)
    last = add_turns(thread, 1, start=60)
    first = snapshot(thread, page=10)
    assert [m["id"] for m in first["messages"]] == [m.pk for m in last]
    page = fetch(owner, thread, before=first["earlier"], limit=10).json()
    assert [m["id"] for m in page["messages"]] == [m.pk for m in long_turn]  # 31 messages, one answer


def test_pages_show_the_branch_shown_with_its_versions(owner, thread):
    shown = add_turns(thread, 10)
    edited = shown[2]  # the second turn's question
    versions.edit(
        user=owner, thread_id=thread.pk, message_id=edited.pk, content="asked again", client_msg_id=uuid.uuid4()
    )
    Run.objects.filter(thread=thread).update(status=Run.Status.COMPLETED)
    version = Message.objects.get(thread=thread, content="asked again")
    later = add_turns(thread, 80, start=version.order + 1, after=version)
    thread.refresh_from_db()
    pages = every_page(owner, thread)
    got = [m for page in reversed(pages) for m in page]
    assert [m["id"] for m in got] == [m.pk for m in [*shown[:2], version, *later]]
    assert not any(m["content"] == f"question {edited.order}" for m in got)  # the hidden branch is not read
    point = next(m for m in got if m["id"] == version.pk)
    assert point["versions"] == {"index": 2, "count": 2, "ids": [edited.pk, version.pk]}
    assert len(pages) > 1 and point in pages[-1]


def test_the_summary_note_points_at_its_message_in_an_earlier_page(owner, thread):
    shown = add_turns(thread, 100)
    Thread.objects.filter(pk=thread.pk).update(summary="the start", summary_through=shown[9].order)
    thread.refresh_from_db()
    first = snapshot(thread)
    assert first["summary"] == {"text": "the start", "before": shown[10].pk}
    assert shown[10].pk not in {m["id"] for m in first["messages"]}


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"before": "abc"}, "before: a message id (a number)."),
        ({"before": "²"}, "before: a message id (a number)."),
        ({"before": "9" * 30}, "before: a message id (a number)."),
        ({}, "before: a message id (a number)."),
        ({"before": "1", "limit": "0"}, f"limit: a number from 1 to {MAX_PAGE_MESSAGES}."),
        ({"before": "1", "limit": str(MAX_PAGE_MESSAGES + 1)}, f"limit: a number from 1 to {MAX_PAGE_MESSAGES}."),
        ({"before": "1", "limit": "-5"}, f"limit: a number from 1 to {MAX_PAGE_MESSAGES}."),
    ],
)
def test_a_bad_cursor_or_limit_is_refused_clearly(owner, thread, params, error):
    add_turns(thread, 3)
    answer = fetch(owner, thread, **params)
    assert answer.status_code == 400
    assert answer.json() == {"error": error}


def test_a_cursor_must_be_a_message_this_thread_shows(owner, stranger, thread):
    shown = add_turns(thread, 3)
    other = Thread.objects.create(owner=owner, title="other")
    elsewhere = add_turns(other, 1)[0]
    hidden = Message.objects.create(thread=thread, order=99, role="user", content="hidden", active=False)
    tool = Message.objects.get(thread=thread, role="tool")
    for before in (elsewhere.pk, hidden.pk, tool.pk, 10**12):
        answer = fetch(owner, thread, before=before)
        assert answer.status_code == 400
        assert answer.json()["error"].startswith("before: no message with that id is shown in this chat")
    assert fetch(owner, thread, before=shown[-1].pk).json()["messages"][-1]["id"] == shown[-2].pk


def test_another_persons_thread_is_not_found(owner, stranger, thread):
    shown = add_turns(thread, 3)
    answer = fetch(stranger, thread, before=shown[-1].pk)
    assert answer.status_code == 404
    assert b"question" not in answer.content
    anonymous = Client().get(f"/t/{thread.pk}/messages", {"before": shown[-1].pk})
    assert anonymous.status_code == 302  # to the sign-in page


def test_a_page_costs_the_same_statements_whatever_the_threads_length(owner, thread):
    add_turns(thread, 30)
    client = Client()
    client.force_login(owner)
    url = f"/t/{thread.pk}/messages"
    with CaptureQueriesContext(connection) as short:
        small = snapshot(thread)
    client.get(url, {"before": small["earlier"]})  # the session's first page keeps its language
    with CaptureQueriesContext(connection) as short_page:
        assert client.get(url, {"before": small["earlier"]}).status_code == 200
    add_turns(thread, 600, start=200)
    with CaptureQueriesContext(connection) as long:
        large = snapshot(thread)
    assert len(long.captured_queries) == len(short.captured_queries)
    with CaptureQueriesContext(connection) as long_page:
        assert client.get(url, {"before": large["earlier"]}).status_code == 200
    assert len(long_page.captured_queries) == len(short_page.captured_queries)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plans (DATABASE_URL=postgres://…)")
def test_on_postgresql_every_statement_of_a_page_can_use_an_index(owner, thread):
    """With sequential scans priced out, a statement still scanning chat_message whole has no index it can use."""
    shown = add_turns(thread, 300)
    versions.edit(user=owner, thread_id=thread.pk, message_id=shown[-2].pk, content="again", client_msg_id=uuid.uuid4())
    thread.refresh_from_db()
    with CaptureQueriesContext(connection) as read:
        cursor = snapshot(thread)["earlier"]
        earlier_page(thread, before=cursor, limit=PAGE_MESSAGES)
    with connection.cursor() as db:
        db.execute("SET enable_seqscan = off")
        for query in read.captured_queries:
            if "chat_message" not in query["sql"]:
                continue
            db.execute("EXPLAIN " + query["sql"])
            plan = "\n".join(row[0] for row in db.fetchall())
            assert "Seq Scan on chat_message" not in plan, (query["sql"], plan)
        db.execute("RESET enable_seqscan")


# --- through the socket ---------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_paged_subscribe_gets_the_newest_page_and_an_old_client_every_message(connect, owner):
    thread = await Thread.objects.acreate(owner=owner, title="long")
    shown = await database_sync_to_async(add_turns)(thread, 60)
    paged, old = await connect(owner), await connect(owner)
    await paged.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None, paged=True)
    await old.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None)
    newest, whole = await paged.receive(), await old.receive()

    assert newest["type"] == whole["type"] == "thread.snapshot"
    assert [m["id"] for m in whole["messages"]] == [m.pk for m in shown] and "earlier" not in whole
    assert [m["id"] for m in newest["messages"]] == [m.pk for m in shown[-len(newest["messages"]) :]]
    assert newest["earlier"] == newest["messages"][0]["id"] and len(newest["messages"]) <= PAGE_MESSAGES


@pytest.mark.django_db(transaction=True)
async def test_a_paged_tab_that_reconnects_gets_the_same_tail_and_a_fresh_snapshot_is_the_newest_page(
    connect, owner, settings
):
    settings.AGENTWEB_DEMO_DELAY = 0
    first = await connect(owner)
    await first.ask("what is 23*19?")
    events = await first.run_to_end()
    thread = await Thread.objects.aget(pk=events[0]["thread"])
    added = await database_sync_to_async(add_turns)(thread, 40, start=100)
    middle = events[len(events) // 2]["seq"]
    tab = await connect(owner)
    await tab.send(type="thread.subscribe", thread=str(thread.pk), after_seq=middle, paged=True)
    tail = await tab.until(events[-1]["type"])
    assert tail == [e for e in events if e.get("seq", -1) > middle]  # the events after its number, as before

    await tab.send(type="thread.subscribe", thread=str(thread.pk), after_seq=None, paged=True)
    fresh = await tab.receive()
    assert fresh["type"] == "thread.snapshot" and fresh["earlier"] is not None
    assert fresh["messages"][-1]["id"] == added[-1].pk
