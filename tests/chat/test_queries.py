"""Each statement chat/queries.py writes out in SQL gives what its ORM twin gives. Run on SQLite by default and on
PostgreSQL with DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentweb."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Case, CharField, Exists, F, Max, OuterRef, Q, Subquery, Sum, Value, When, Window
from django.db.models.functions import Length

from chat import queries
from chat.models import Message, Thread, ThreadToolGrant
from tools.models import SettingsStamp

pytestmark = pytest.mark.django_db


def orm_thread_for_turn(owner_id, thread_id, client_msg_id):
    return (
        Thread.objects.filter(id=thread_id, owner_id=owner_id)
        .annotate(
            replayed=Exists(Message.all_versions.filter(thread=OuterRef("pk"), client_msg_id=client_msg_id)),
            last_order=Subquery(
                Message.objects.filter(thread=OuterRef("pk")).values("thread").annotate(m=Max("order")).values("m")
            ),
            last_message=Subquery(Message.objects.filter(thread=OuterRef("pk")).order_by("-order").values("pk")[:1]),
            stamp=Subquery(SettingsStamp.objects.filter(pk=1).values("stamp")[:1]),
        )
        .first()
    )


def both(owner_id, thread_id, client_msg_id):
    def seen(thread):
        if thread is None:
            return None
        fields = (thread.pk, thread.owner_id, thread.title, thread.model_choice, thread.last_seq)
        return (*fields, thread.replayed, thread.last_order, thread.last_message, thread.stamp)

    return (
        seen(queries.thread_for_turn(owner_id, thread_id, client_msg_id)),
        seen(orm_thread_for_turn(owner_id, thread_id, client_msg_id)),
    )


@pytest.fixture
def thread(owner):
    return Thread.objects.create(owner=owner, title="t", model_choice="default", last_seq=7)


def test_a_thread_without_messages(owner, thread):
    sql, orm = both(owner.pk, thread.pk, uuid.uuid4())
    assert sql == orm and sql[-4:-1] == (False, None, None)


def test_a_thread_with_messages_and_the_replayed_one(owner, thread):
    sent = uuid.uuid4()
    for order in (1, 2, 5):
        Message.objects.create(thread=thread, order=order, role="user", client_msg_id=sent if order == 2 else None)
    sql, orm = both(owner.pk, thread.pk, sent)
    assert sql == orm and sql[-4:-2] == (True, 5)
    sql, orm = both(owner.pk, thread.pk, uuid.uuid4())
    assert sql == orm and sql[-4:-2] == (False, 5)


def test_a_thread_with_versions_counts_only_the_branch_shown(owner, thread):
    """The last order and message are those of the branch shown; a message of a hidden version is still replayed."""
    hidden = uuid.uuid4()
    shown = [Message.objects.create(thread=thread, order=order, role="user") for order in (1, 2)]
    Message.objects.create(thread=thread, order=3, role="user", client_msg_id=hidden, active=False)
    sql, orm = both(owner.pk, thread.pk, hidden)
    assert sql == orm and sql[-4:-1] == (True, 2, shown[-1].pk)


def test_the_settings_stamp_with_and_without_its_row(owner, thread):
    SettingsStamp.objects.all().delete()
    sql, orm = both(owner.pk, thread.pk, uuid.uuid4())
    assert sql == orm and sql[-1] is None
    SettingsStamp.objects.create(pk=1, stamp="abc")
    sql, orm = both(owner.pk, thread.pk, uuid.uuid4())
    assert sql == orm and sql[-1] == "abc"


def test_another_owners_thread_is_not_found(stranger, thread):
    assert both(stranger.pk, thread.pk, uuid.uuid4()) == (None, None)


def test_a_missing_thread_is_not_found(owner):
    assert both(owner.pk, uuid.uuid4(), uuid.uuid4()) == (None, None)


def orm_grants_groups_and_stamp(thread_id, user_id):
    kind = CharField()
    member = get_user_model().groups.field.related_query_name()
    grants = ThreadToolGrant.objects.filter(thread_id=thread_id).order_by().values_list("tool_name", Value("g", kind))
    groups = Group.objects.filter(**{member: user_id}).order_by().values_list("name", Value("u", kind))
    stamp = SettingsStamp.objects.filter(pk=1).order_by().values_list("stamp", Value("s", kind))
    rows = list(grants.union(groups, stamp, all=True))
    return (
        {value for value, which in rows if which == "g"},
        frozenset(value for value, which in rows if which == "u"),
        next((value for value, which in rows if which == "s"), None),
    )


def test_no_grants_no_groups_no_stamp(owner, thread):
    SettingsStamp.objects.all().delete()
    found = queries.grants_groups_and_stamp(thread.pk, owner.pk)
    assert found == orm_grants_groups_and_stamp(thread.pk, owner.pk) == (set(), frozenset(), None)


def test_grants_groups_and_stamp(owner, stranger, thread):
    for name in ("calculator", "http_get"):
        ThreadToolGrant.objects.create(thread=thread, tool_name=name)
    ThreadToolGrant.objects.create(thread=Thread.objects.create(owner=owner), tool_name="elsewhere")
    for name in ("staff", "beta"):
        owner.groups.add(Group.objects.create(name=name))
    stranger.groups.add(Group.objects.create(name="not theirs"))
    SettingsStamp.objects.update_or_create(pk=1, defaults={"stamp": "s1"})
    found = queries.grants_groups_and_stamp(thread.pk, owner.pk)
    assert found == orm_grants_groups_and_stamp(thread.pk, owner.pk)
    assert found == ({"calculator", "http_get"}, frozenset({"staff", "beta"}), "s1")


def orm_stamp_and_defaults(user_id):
    from django.db.models import Subquery

    from chat.models import ChatDefaults

    mine = ChatDefaults.objects.filter(user_id=user_id)
    row = (
        SettingsStamp.objects.filter(pk=1)
        .annotate(
            agent=Subquery(mine.values("agent")[:1]),
            model=Subquery(mine.values("model")[:1]),
            saved=Subquery(mine.values("pk")[:1]),
        )
        .values_list("stamp", "agent", "model", "saved")
        .first()
    )
    if row is None:
        return None, None
    stamp, agent, model, saved = row
    return stamp, (agent, model) if saved is not None else None


def test_the_stamp_and_no_defaults(owner):
    SettingsStamp.objects.update_or_create(pk=1, defaults={"stamp": "s1"})
    assert queries.stamp_and_defaults(owner.pk) == orm_stamp_and_defaults(owner.pk) == ("s1", None)


def test_the_stamp_and_the_persons_defaults_not_anothers(owner, stranger):
    from chat.models import ChatDefaults

    SettingsStamp.objects.update_or_create(pk=1, defaults={"stamp": "s2"})
    ChatDefaults.objects.create(user=owner, agent="maths", model="")
    ChatDefaults.objects.create(user=stranger, agent="", model="7")
    assert queries.stamp_and_defaults(owner.pk) == orm_stamp_and_defaults(owner.pk) == ("s2", ("maths", ""))
    assert queries.stamp_and_defaults(stranger.pk) == orm_stamp_and_defaults(stranger.pk) == ("s2", ("", "7"))


def test_no_stamp_row(owner):
    SettingsStamp.objects.all().delete()
    assert queries.stamp_and_defaults(owner.pk) == orm_stamp_and_defaults(owner.pk) == (None, None)


def orm_history_start(thread_id, chars):
    size = Case(When(~Q(status="complete"), role="assistant", then=Value(0)), default=Length("content"))
    rows = Message.objects.filter(thread_id=thread_id).annotate(tail=Window(Sum(size), order_by=F("order").desc()))
    return max(
        (order for order, role, tail in rows.values_list("order", "role", "tail") if role == "user" and tail > chars),
        default=0,
    )


def sql_history_start(thread_id, chars):
    return Thread.objects.filter(pk=thread_id).annotate(start=queries.history_start(thread_id, chars)).get().start


def test_history_start(owner, thread):
    texts = [("user", "a" * 10), ("assistant", "b" * 30), ("user", "c" * 5), ("assistant", "d" * 50)]
    for order, (role, content) in enumerate(texts, 1):
        Message.objects.create(thread=thread, order=order, role=role, content=content)
    # A failed answer counts nothing; a hidden version is not on the branch.
    Message.objects.create(thread=thread, order=5, role="user", content="e" * 5)
    Message.objects.create(thread=thread, order=6, role="assistant", content="f" * 500, status="error")
    Message.all_versions.create(thread=thread, order=5, role="user", content="g" * 900, active=False)
    for chars, start in ((0, 5), (4, 5), (5, 3), (59, 3), (60, 1), (99, 1), (100, 0), (10_000, 0)):
        assert sql_history_start(thread.pk, chars) == orm_history_start(thread.pk, chars) == start, chars
