"""A group's daily token budget (docs/teams.md, Groups; docs/usage.md): its members' in place of
AGENTWEB_DAILY_TOKEN_BUDGET; a person's own budget wins; in several groups, the most generous; a change reaches the
next turn."""

import pytest
from django.contrib.auth.models import Group

from chat.models import GroupTokenBudget, Thread, TokenBudget
from chat.usage import budget_and_reason, budget_for
from tests.chat.test_usage import counts, reply
from tools.services import settings_stamp

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_rule_own_budget_then_the_most_generous_group_then_the_default(owner, member, research, settings):
    settings.AGENTWEB_DAILY_TOKEN_BUDGET = 100
    sales = Group.objects.create(name="sales")
    ops = Group.objects.create(name="ops")
    member.groups.add(sales, ops)
    assert budget_and_reason(member.pk) == (100, "default")  # no group has a budget yet
    GroupTokenBudget.objects.create(group=research, daily_tokens=5_000)
    GroupTokenBudget.objects.create(group=sales, daily_tokens=20_000)
    assert budget_and_reason(member.pk) == (20_000, "group sales")
    assert budget_and_reason(owner.pk) == (100, "default")  # in none of them
    GroupTokenBudget.objects.create(group=ops, daily_tokens=None)  # no budget beats any number
    assert budget_and_reason(member.pk) == (None, "group ops")
    TokenBudget.objects.create(user=member, daily_tokens=300)
    assert budget_and_reason(member.pk) == (300, "own")
    stamp = settings_stamp()
    assert budget_for(member.pk, stamp) == 300 and budget_for(owner.pk, stamp) == 100


def test_a_tie_is_told_by_the_groups_name(member, research):
    alpha = Group.objects.create(name="alpha")
    member.groups.add(alpha)
    GroupTokenBudget.objects.create(group=research, daily_tokens=700)
    GroupTokenBudget.objects.create(group=alpha, daily_tokens=700)
    assert budget_and_reason(member.pk) == (700, "group alpha")


async def test_a_groups_budget_stops_its_members_runs_and_a_raise_reaches_the_next_turn(
    connect, owner, member, research, model_server, settings
):
    settings.AGENTWEB_DAILY_TOKEN_BUDGET = None
    budget = await GroupTokenBudget.objects.acreate(group=research, daily_tokens=50)
    model_server.enqueue(reply("one", usage=counts(40, 20)), reply("two", usage=counts(40, 20)))
    client = await connect(member)
    await client.ask("first")
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    thread = str((await Thread.objects.aget(owner=member)).pk)
    await client.ask("second", thread=thread, ref="b1")
    error = (await client.until("error"))[-1]
    assert (error["code"], error["ref"]) == ("budget_exhausted", "b1")
    assert "60 of 50 tokens" in error["message"]
    budget.daily_tokens = 1000
    await budget.asave()
    await client.ask("third", thread=thread)
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    # Someone outside the group is not held by its budget.
    other = await connect(owner)
    model_server.enqueue(reply("four", usage=counts(400, 20)))
    await other.ask("no budget for me")
    assert (await other.run_to_end())[-1]["type"] == "run.completed"
