"""A claim's firings are opened together (schedules/firing.py open_firings, chat/runs/new_turns.py): each still opens
its own chat with its own run, as its owner, and its run reads what it would have read alone; the claim's trip to the
database does not grow with the number of firings; firings the batch cannot open (an agent lost, an owner
deactivated, a chat that grows, a turn opened before) go as they went alone."""

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import Agent
from chat.models import Message, Run, Thread
from chat.runs.execute import prepare_run
from languages.models import LanguageChoice
from schedules.firing import claim_due, fire, open_firings
from schedules.models import ScheduleRun
from schedules.ticker import tick

from .conftest import T0, make_schedule, runs_finished

pytestmark = pytest.mark.django_db(transaction=True)
db = sync_to_async


def people(count: int) -> list:
    return [get_user_model().objects.create_user(f"person{n}") for n in range(count)]


async def test_each_firing_of_a_claim_opens_its_own_chat_and_run_as_its_owner(owner, agent):
    others = await db(people)(3)
    for person in [owner, *others]:
        await db(make_schedule)(person)
        await db(make_schedule)(person, prompt="Weather at {time}")
    fired = await tick(T0)
    await runs_finished()
    assert len(fired) == 8
    jobs = [job async for job in ScheduleRun.objects.select_related("schedule", "thread", "run")]
    assert {job.status for job in jobs} == {"started"}
    assert len({job.thread_id for job in jobs}) == 8 and len({job.run_id for job in jobs}) == 8
    for job in jobs:
        assert job.thread.owner_id == job.schedule.owner_id and job.thread.agent_id == agent.pk
        assert job.run.thread_id == job.thread_id and job.run.status == Run.Status.COMPLETED
        asked, answer = [m async for m in Message.objects.filter(thread=job.thread).order_by("order")][:2]
        assert (asked.role, asked.client_msg_id) == ("user", job.client_msg_id)
        assert asked.content[:4] == job.schedule.prompt[:4]
        assert (answer.role, answer.parent_id, answer.status) == ("assistant", asked.pk, "complete")


def open_claim(inbox: str) -> tuple[int, list]:
    jobs = claim_due(T0)  # row by row on SQLite, which has no row locks to skip
    with CaptureQueriesContext(connection) as queries:
        opened = open_firings(jobs, inbox)
    return len(queries), opened


async def test_a_claim_costs_the_same_statements_for_three_firings_as_for_twelve(owner, agent):
    await db(make_schedule)(owner, next_run_at=T0 - timedelta(minutes=1))
    await db(make_schedule)(owner, next_run_at=T0 - timedelta(minutes=1))
    await db(make_schedule)(owner, next_run_at=T0 - timedelta(minutes=1))
    few, opened = await db(open_claim)("inbox-a")
    assert len(opened) == 3
    for person in await db(people)(4):
        for _ in range(3):
            await db(make_schedule)(person)
    many, opened = await db(open_claim)("inbox-b")
    assert len(opened) == 12 and {o.status for _, o in opened} == {"started"}
    assert many <= few  # one by one it was about 15 statements a firing
    # Each run is taken by the process that opened it, as run_claims.take takes one.
    assert await Run.objects.filter(owner="inbox-b", heartbeat_at__isnull=False).acount() == 12


def setups_against_prepare_run() -> list[tuple]:
    pairs = []
    for _, opened in open_firings(claim_due(T0), "inbox"):
        thread = Thread.objects.select_related("owner").get(pk=opened.turn.thread.pk)
        read = prepare_run(thread, run=None)
        pairs.append((opened.setup, read))
    return pairs


async def test_a_run_opened_together_is_given_what_it_would_have_read_alone(owner):
    await Agent.objects.acreate(
        name="Daily",
        slug="daily",
        system_prompt="You are {agent}, for {user}.",
        context_strategy={"kind": "trim"},
        temperature=0.3,
    )
    staff = await Group.objects.acreate(name="staff")
    await db(owner.groups.add)(staff)
    await db(LanguageChoice.choose)(owner, "de")
    await db(make_schedule)(owner)
    await db(make_schedule)(owner, prompt="Second")
    for built, read in await db(setups_against_prepare_run)():
        assert built.history == read.history and built.orders == read.orders
        assert built.last_order == read.last_order == 2 and built.message_id is not None
        assert built.granted == read.granted and built.turned_off == read.turned_off
        assert built.agent == read.agent and built.model == read.model and built.config == read.config
        assert built.options == read.options and built.follows_a_failure == read.follows_a_failure
        assert built.language == read.language == "de"  # the demo model's script speaks its owner's choice
        assert sorted(built.toolset.registry.names()) == sorted(read.toolset.registry.names())
        assert built.toolset.approval == read.toolset.approval


async def test_firings_the_batch_cannot_open_go_as_they_went_alone(owner, agent):
    lost, gone, grows = await db(people)(3)
    await db(make_schedule)(owner)
    await db(make_schedule)(lost, agent="not-an-agent")
    await db(make_schedule)(gone)
    await db(make_schedule)(grows, target="one")
    gone.is_active = False
    await gone.asave()
    fired = await tick(T0)
    await runs_finished()
    jobs = {job.schedule.owner_id: job async for job in ScheduleRun.objects.select_related("schedule")}
    assert len(fired) == 4
    assert (jobs[owner.pk].status, jobs[grows.pk].status) == ("started", "started")
    assert jobs[lost.pk].status == "paused" and "no longer one its owner can use" in jobs[lost.pk].error
    assert jobs[gone.pk].status == "paused" and jobs[gone.pk].schedule.paused
    assert (await ScheduleRun.objects.select_related("schedule").aget(pk=jobs[grows.pk].pk)).schedule.thread_id
    assert await Thread.objects.acount() == 2


async def test_a_claim_fired_again_after_its_turns_were_written_opens_no_second_turn(owner, agent):
    await db(make_schedule)(owner)
    await db(make_schedule)(owner, prompt="Second")
    jobs = await db(claim_due)(T0)
    await db(open_firings)(jobs, "")
    # Its process died after the turns were written but before the ScheduleRuns said so: fired again, by another.
    await ScheduleRun.objects.aupdate(status="claimed", thread=None, run=None)
    for job in jobs:
        assert await fire(job) == "started"
    assert await Thread.objects.acount() == 2 and await Run.objects.acount() == 2
    assert await ScheduleRun.objects.filter(thread__isnull=False).acount() == 2


async def test_a_claim_opens_nothing_with_an_agent_the_owners_groups_no_longer_allow(owner, agent):
    # The batch reads agents without the pickers' rules: the person's groups are asked here as a run's start asks them.
    research = await Group.objects.acreate(name="research")
    await db(agent.groups.add)(research)  # only research may use it now, and the owner is not in it
    member = (await db(people)(1))[0]
    await db(member.groups.add)(research)
    refused = await db(make_schedule)(owner)
    allowed = await db(make_schedule)(member)
    await tick(T0)
    await runs_finished()
    await refused.arefresh_from_db()
    assert refused.paused and "no longer one its owner can use" in refused.pause_reason
    assert not await Thread.objects.filter(owner=owner).aexists()
    job = await ScheduleRun.objects.aget(schedule=allowed)
    assert job.status == "started" and await Thread.objects.filter(owner=member).acount() == 1
