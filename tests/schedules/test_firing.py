"""A due schedule fires once as its owner, with the prompt's {date} and {time} filled in its zone; a deployment down
for several slots fires once on return; a firing whose process died before its run started is started once by
another; an owner who lost the agent, one of its tools, their account or their budget finds the schedule paused,
saying why."""

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.utils import timezone

from chat.models import Message, Run, Source, Thread, Usage
from schedules import services
from schedules.firing import claim_due, fire, reclaim_stale
from schedules.models import Schedule, ScheduleRun
from schedules.ticker import tick
from tools.models import ToolSetting
from tools.services import sync_tool_settings

from .conftest import T0, make_schedule, runs_finished

pytestmark = pytest.mark.django_db(transaction=True)
db = sync_to_async


async def test_a_due_schedule_starts_a_run_as_its_owner_in_a_thread_marked_as_scheduled(owner, agent):
    schedule = await db(make_schedule)(owner, time_zone="Europe/Paris")
    fired = await tick(T0 + timedelta(seconds=1))
    await runs_finished()
    job = await ScheduleRun.objects.select_related("thread", "run").aget(pk=fired[0])
    assert (len(fired), job.status, job.slot) == (1, "started", T0)
    assert (job.thread.owner_id, job.thread.source, job.thread.agent_id) == (owner.pk, Source.SCHEDULE, agent.pk)
    assert job.run.status == Run.Status.COMPLETED and job.run.source == Source.SCHEDULE
    sent = await Message.objects.filter(thread=job.thread, role="user").aget()
    assert sent.content == "News for 2026-05-04 at 11:00"  # 09:00 UTC is 11:00 in Paris in May
    await schedule.arefresh_from_db()
    # 09:00 in Paris, the next morning, is 07:00 UTC.
    assert schedule.next_run_at == T0 + timedelta(hours=22) and schedule.last_run_at == T0 + timedelta(seconds=1)


async def test_a_second_claim_of_the_same_slot_finds_nothing(owner, agent):
    await db(make_schedule)(owner)
    assert len(await db(claim_due)(T0)) == 1
    assert await db(claim_due)(T0) == []
    assert await db(claim_due)(T0 + timedelta(hours=1)) == []


async def test_a_clock_moved_past_three_slots_fires_once_and_goes_on_from_now(owner, agent):
    schedule = await db(make_schedule)(owner, kind="every", cron="", every_minutes=10)
    back = T0 + timedelta(minutes=35)  # slots 09:00, 09:10, 09:20 and 09:30 were all missed
    assert len(await tick(back)) == 1
    await runs_finished()
    assert await tick(back + timedelta(seconds=30)) == []
    await schedule.arefresh_from_db()
    assert schedule.next_run_at == T0 + timedelta(minutes=40)
    assert await ScheduleRun.objects.acount() == 1 and await Thread.objects.acount() == 1


async def test_one_thread_that_grows_takes_every_firing(owner, agent):
    schedule = await db(make_schedule)(owner, kind="every", cron="", every_minutes=1, target="one")
    for minute in range(3):
        await tick(T0 + timedelta(minutes=minute, seconds=1))
        await runs_finished()
    await schedule.arefresh_from_db()
    assert await Thread.objects.acount() == 1 and schedule.thread_id is not None
    assert await Message.objects.filter(thread_id=schedule.thread_id, role="user").acount() == 3


async def test_a_firing_whose_process_died_before_its_run_started_is_started_once(owner, agent, settings):
    settings.AGENTWEB_SCHEDULE_CLAIM_STALE_SECONDS = 60
    await db(make_schedule)(owner)
    [job] = await db(claim_due)(T0)  # claimed and committed; the process then died
    assert await db(reclaim_stale)(T0 + timedelta(seconds=30)) == []  # not yet stale: its process may be alive
    assert await db(reclaim_stale)(T0 + timedelta(seconds=61)) == [job]
    assert await db(reclaim_stale)(T0 + timedelta(seconds=62)) == []  # taken by the first to see it
    await fire(job)
    await runs_finished()
    assert await Thread.objects.acount() == 1


async def test_a_firing_started_again_after_its_turn_was_written_opens_no_second_turn(owner, agent):
    await db(make_schedule)(owner)
    [job] = await db(claim_due)(T0)
    await fire(job)
    await runs_finished()
    # Its process died after the turn was written but before the ScheduleRun said so: started again, by another.
    await ScheduleRun.objects.filter(pk=job).aupdate(status="claimed", thread=None, run=None)
    assert await fire(job) == "started"
    first = await Thread.objects.aget()
    assert await Run.objects.acount() == 1
    assert (await ScheduleRun.objects.aget(pk=job)).thread_id == first.pk


async def test_an_agent_the_owner_lost_pauses_the_schedule_with_the_reason(owner, agent):
    schedule = await db(make_schedule)(owner)
    await agent.adelete()
    await tick(T0)
    await schedule.arefresh_from_db()
    job = await ScheduleRun.objects.aget()
    assert schedule.paused and "no longer one its owner can use" in schedule.pause_reason
    assert job.status == "paused" and job.error == schedule.pause_reason
    assert await Thread.objects.acount() == 0
    assert await tick(T0 + timedelta(days=2)) == []  # paused: it fires no more


async def test_a_deactivated_owner_pauses_the_schedule(owner, agent):
    schedule = await db(make_schedule)(owner)
    owner.is_active = False
    await owner.asave()
    await tick(T0)
    await schedule.arefresh_from_db()
    assert schedule.paused and schedule.pause_reason == "The owner's account is deactivated."
    assert await Thread.objects.acount() == 0


async def test_a_spent_budget_pauses_the_schedule_saying_so(owner, agent, settings):
    settings.AGENTWEB_DAILY_TOKEN_BUDGET = 100
    await Usage.objects.acreate(user=owner, input_tokens=150, output_tokens=0)
    schedule = await db(make_schedule)(owner, next_run_at=timezone.now())
    await tick()
    await schedule.arefresh_from_db()
    assert schedule.paused and "daily token budget" in schedule.pause_reason
    assert await Thread.objects.acount() == 0


async def test_a_paused_schedule_is_not_claimed(owner, agent):
    await db(make_schedule)(owner, paused=True)
    assert await tick(T0 + timedelta(days=1)) == []
    assert await Schedule.objects.filter(paused=True).acount() == 1


def agent_with_tools(agent, *names):
    sync_tool_settings()
    agent.all_tools, agent.tools = False, list(names)
    agent.save()


async def test_a_tool_of_the_agent_switched_off_pauses_the_schedule_naming_it(owner, agent):
    await db(agent_with_tools)(agent, "calculator", "current_time")
    await ToolSetting.objects.filter(name="current_time").aupdate(enabled=False)
    schedule = await db(make_schedule)(owner)
    await tick(T0)
    await schedule.arefresh_from_db()
    job = await ScheduleRun.objects.aget()
    assert schedule.paused and "'current_time'" in schedule.pause_reason and "'calculator'" not in schedule.pause_reason
    assert "may no longer use" in schedule.pause_reason
    assert job.status == "paused" and job.error == schedule.pause_reason
    assert await Thread.objects.acount() == 0


async def test_a_tool_no_longer_allowed_for_the_owners_groups_pauses_the_schedule(owner, agent):
    await db(agent_with_tools)(agent, "calculator")
    staff = await Group.objects.acreate(name="staff")
    setting = await ToolSetting.objects.aget(name="calculator")
    await db(setting.groups.add)(staff)  # only staff may use it now, and the owner is not staff
    schedule = await db(make_schedule)(owner)
    await tick(T0)
    await schedule.arefresh_from_db()
    assert schedule.paused and "'calculator'" in schedule.pause_reason
    assert await Thread.objects.acount() == 0
    await db(owner.groups.add)(staff)  # in the group again: resumed, it fires
    await db(services.resume)(schedule)
    await schedule.arefresh_from_db()
    assert len(await tick(schedule.next_run_at)) == 1
    await runs_finished()
    await schedule.arefresh_from_db()
    assert not schedule.paused and await Thread.objects.acount() == 1


async def test_an_agent_with_every_tool_loses_none_when_one_is_switched_off(owner, agent):
    await db(sync_tool_settings)()
    await ToolSetting.objects.filter(name="calculator").aupdate(enabled=False)
    schedule = await db(make_schedule)(owner)
    await tick(T0)
    await runs_finished()
    await schedule.arefresh_from_db()
    assert not schedule.paused and (await ScheduleRun.objects.aget()).status == "started"
