"""Full-text search over a person's own messages (chat/store/search.py): the sidebar's and the search_threads tool's.
Runs on SQLite (FTS5) by default and on PostgreSQL (its tsvector index) with
DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentweb: the same answers from both."""

import json
import uuid

import pytest
from django.db import connection
from django.test import Client

from chat.models import Message, Thread
from chat.store import search, versions
from chat.store.turns import search_messages as tool_search

pytestmark = pytest.mark.django_db


def thread_of(user, title, *contents, role=Message.Role.USER):
    thread = Thread.objects.create(owner=user, title=title)
    for order, content in enumerate(contents, start=1):
        Message.objects.create(thread=thread, order=order, role=role, content=content)
    return thread


def found(user, query, limit=20):
    return [hit.content for hit in search.search_messages(user_id=user.pk, query=query, limit=limit)]


def sidebar(user, query):
    client = Client()
    client.force_login(user)
    response = client.get("/search", {"q": query})
    assert response.status_code == 200
    return response.json()["threads"]


def test_words_match_in_any_order_and_case_and_the_last_as_a_prefix(owner):
    thread_of(owner, "t", "The invoice number is 4411", "Lisbon trip in May", "nothing")
    assert found(owner, "NUMBER invoice") == ["The invoice number is 4411"]
    assert found(owner, "lisb") == ["Lisbon trip in May"]  # as the person types
    assert found(owner, "lisb trip") == []  # only the last word is a prefix
    assert found(owner, "4411") == ["The invoice number is 4411"]


def test_newest_first_and_bounded(owner):
    thread_of(owner, "t", *(f"note {n}" for n in range(60)))
    assert found(owner, "note", limit=500) == [f"note {n}" for n in reversed(range(10, 60))]
    assert found(owner, "note", limit=3) == ["note 59", "note 58", "note 57"]


def test_tool_messages_are_not_searched_and_text_changed_later_is(owner):
    thread = thread_of(owner, "t", "secret tool output", role=Message.Role.TOOL)
    assert found(owner, "secret") == []
    answer = Message.objects.create(thread=thread, order=2, role=Message.Role.ASSISTANT, content="")
    Message.objects.filter(pk=answer.pk).update(content="streamed words arrive")  # as a streamed answer is saved
    assert found(owner, "streamed") == ["streamed words arrive"]
    assert found(owner, "") == []
    answer.delete()
    assert found(owner, "streamed") == []


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "'",
        "a\"b'c",
        "NEAR(a b)",
        "apple OR pear",
        "apple AND NOT",
        "col:apple",
        "*",
        "apple*",
        "-apple",
        "^apple",
        "(apple",
        "apple & | ! <-> :*",
        "\\",
        "%_",
        "\x00",
        "   ",
        "",
        "🍎",
        "apple " * 5000,
        "x" * 100_000,
    ],
)
def test_odd_input_is_words_never_syntax_and_never_an_error(owner, query):
    thread_of(owner, "t", "apple pie", "pear tart")
    hits = found(owner, query)
    assert set(hits) <= {"apple pie"}


def test_operators_are_plain_words(owner):
    thread_of(owner, "t", "apple pie", "or and not near", "pear tart")
    assert found(owner, "apple OR pear") == []  # both words needed, "or" among them
    assert found(owner, "near not") == ["or and not near"]
    assert found(owner, 'apple" OR "pear') == []
    assert found(owner, "(apple*") == ["apple pie"]


def test_a_match_in_a_version_not_shown_is_found_and_says_which(owner):
    thread = thread_of(owner, "Trips")
    asked = Message.objects.create(thread=thread, order=1, role=Message.Role.USER, content="plan a trip to Porto")
    Message.objects.create(thread=thread, order=2, role=Message.Role.ASSISTANT, parent=asked, content="Porto bridges")
    versions.edit(
        user=owner, thread_id=thread.pk, message_id=asked.pk, content="plan Lisbon", client_msg_id=uuid.uuid4()
    )
    assert list(thread.messages.values_list("content", flat=True)) == ["plan Lisbon"]

    old = search.search_messages(user_id=owner.pk, query="porto")
    assert [(h.content, h.shown, h.version) for h in old] == [
        ("Porto bridges", False, search.Version(1, 2)),  # on the branch of version 1 of the user message
        ("plan a trip to Porto", False, search.Version(1, 2)),
    ]
    new = search.search_messages(user_id=owner.pk, query="plan lisbon")
    assert [(h.content, h.shown, h.version) for h in new] == [("plan Lisbon", True, search.Version(2, 2))]

    [listed] = sidebar(owner, "porto")
    assert listed["id"] == str(thread.pk)
    assert listed["match"] | {"message": 0} == {
        "message": 0,
        "role": "assistant",
        "snippet": "Porto bridges",
        "shown": False,
        "version": {"index": 1, "count": 2},
    }
    [told] = tool_search(user=owner, query="porto", limit=1)
    assert (told["shown"], told["version"]) == (False, {"index": 1, "count": 2})


def test_another_persons_threads_are_never_found(owner, stranger):
    thread_of(stranger, "Lisbon secrets", "lisbon lisbon", "the stranger's invoice")
    thread_of(owner, "mine", "my invoice")
    assert found(owner, "lisbon") == []
    assert found(owner, "invoice") == ["my invoice"]
    assert [t["title"] for t in sidebar(owner, "lisbon")] == []
    assert [t["title"] for t in sidebar(owner, "invoice")] == ["mine"]
    assert [h["content"] for h in tool_search(user=owner, query="stranger", limit=20)] == []


def test_the_sidebar_lists_a_thread_once_however_many_messages_match(owner):
    many = thread_of(owner, "many", *(f"budget line {n}" for n in range(60)))
    one = thread_of(owner, "one", "the budget")
    listed = sidebar(owner, "budget")
    assert [t["id"] for t in listed] == [str(one.pk), str(many.pk)]
    assert listed[0]["match"]["snippet"] == "the budget"
    assert "match" not in sidebar(owner, "one")[0]  # found by its title


def test_the_index_is_the_vendors_own():
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE name = 'chat_message_fts' AND type = 'table'")
        else:
            cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'chat_message_fts%'")
            # One full-text index, keyed by person (chat/migrations/0025): 0021's unkeyed one is gone.
            assert cursor.fetchall() == [("chat_message_fts_owner",)]
            return
        assert cursor.fetchall() == [("chat_message_fts",)]


def test_search_triggers_lost_to_a_table_rebuild_come_back_after_migrate(owner):
    """Django remakes a SQLite table to alter it, which drops its triggers: after migrate they are made again, and
    what was written meanwhile is indexed."""
    from chat.search_index import TRIGGERS, restore_search_triggers

    if connection.vendor != "sqlite":
        assert restore_search_triggers() is False  # PostgreSQL's index is on the table: nothing to restore
        return
    with connection.cursor() as cursor:
        for name in TRIGGERS:
            cursor.execute(f"DROP TRIGGER {name}")
    thread_of(owner, "t", "written while the triggers were gone")
    assert found(owner, "gone") == []
    assert restore_search_triggers() is True
    assert found(owner, "gone") == ["written while the triggers were gone"]
    assert restore_search_triggers() is False  # once there, nothing to do


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's plan (DATABASE_URL=postgres://…)")
def test_postgresql_reads_the_matches_from_the_full_text_index_not_every_message_newest_first(owner, stranger):
    # At 1M messages a LIMIT tempted the planner to walk the primary key from the newest message, computing each
    # one's document, until enough matched: 24-28 s for a rare word (bench/data). The matches must come from the index.
    for n in range(20):
        thread_of(owner if n % 2 else stranger, f"t{n}", f"note {n} about lisbon", "nothing else")
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as done:
        assert found(owner, "lisbon", limit=3)
    sql = next(q["sql"] for q in done.captured_queries if "::tsquery" in q["sql"])
    with connection.cursor() as db:
        # A few rows never tempt the planner; a sort priced out does, as a million rows and a LIMIT did: the
        # statement must leave it no walk of the messages in their order to take.
        db.execute("SET enable_sort = off")
        db.execute("EXPLAIN " + sql)
        steps = "\n".join(row[0] for row in db.fetchall())
        db.execute("RESET enable_sort")
    assert "Index Scan Backward using chat_message_pkey" not in steps, steps


def test_a_chat_given_to_someone_else_is_found_by_its_new_owner_only(owner, stranger):
    # The admin can change a chat's owner: on PostgreSQL its messages' owner (in the search index) follows.
    thread = thread_of(owner, "handed over", "the lisbon budget")
    assert found(owner, "lisbon") == ["the lisbon budget"]
    thread.owner = stranger
    thread.save()
    assert found(owner, "lisbon") == []
    assert found(stranger, "lisbon") == ["the lisbon budget"]
    assert [t["title"] for t in sidebar(stranger, "lisb")] == ["handed over"]


def test_a_message_moved_to_another_persons_chat_is_theirs_to_find(owner, stranger):
    mine = thread_of(owner, "mine", "the porto invoice")
    theirs = thread_of(stranger, "theirs", "hello")
    moved = mine.messages.get()
    moved.thread = theirs
    moved.order = 2
    moved.save()
    assert found(owner, "porto") == []
    assert found(stranger, "porto") == ["the porto invoice"]


def test_messages_written_before_their_chat_in_one_transaction_are_found(owner):
    from django.db import transaction

    thread_id = uuid.uuid4()
    with transaction.atomic():  # the foreign key is checked at the commit
        Message.objects.bulk_create([Message(thread_id=thread_id, order=1, role=Message.Role.USER, content="porto")])
        Thread.objects.create(id=thread_id, owner=owner, title="late")
    assert found(owner, "porto") == ["porto"]


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's plan (DATABASE_URL=postgres://…)")
@pytest.mark.parametrize("query", ["lisbon", "lis", "l"])
def test_postgresql_reads_only_the_persons_matches_of_a_word_everyone_uses(owner, stranger, query):
    """A word common to everyone but rare for the person (at 1M messages: 130,000 matches, 6,952 the person's) is
    looked up among the person's matches in the index: no one else's match is read, nor rechecked row by row."""
    from django.test.utils import CaptureQueriesContext

    for n in range(30):
        thread_of(stranger, f"s{n}", *(f"lisbon trip {n} day {d}" for d in range(5)))
    for n in range(20):  # the person's other messages: reading them all to find the two would not do either
        thread_of(owner, f"o{n}", *(f"porto note {n} day {d}" for d in range(10)))
    thread_of(owner, "mine", "lisbon once", "something else", "and lisbon twice")
    with CaptureQueriesContext(connection) as done:
        assert len(found(owner, query)) == 2
    sql = next(q["sql"] for q in done.captured_queries if "::tsquery" in q["sql"])
    with connection.cursor() as db:
        db.execute("ANALYZE chat_thread")  # as autovacuum would have: the planner's figures of who owns what
        db.execute("ANALYZE chat_message")
        db.execute("SET enable_seqscan = off")  # a few hundred rows: else a scan of the table is cheaper
        db.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = db.fetchone()[0]
        db.execute("RESET enable_seqscan")
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes, stack = [], [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.get("Plans", []))
    index_reads = [n for n in nodes if "chat_message_fts" in n.get("Index Name", "")]
    messages = [n for n in nodes if n.get("Relation Name") == "chat_message" or n in index_reads]
    assert index_reads, nodes
    assert all(n["Actual Rows"] == 2 for n in index_reads), index_reads  # the person's two, not the stranger's 150
    assert not any(n.get("Rows Removed by Index Recheck") or n.get("Rows Removed by Filter") for n in messages)
