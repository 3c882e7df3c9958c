"""The daily token budget holds when a person's sends arrive at once (issue 36: eight sends with 90 of 100 tokens
spent all ran, 810 spent): the check and the run it admits are one step per person, and a run still running holds
back its share of the budget (AGENTWEB_BUDGET_RUN_RESERVE)."""

import pytest

from tests.support.concurrency import DATABASES, at_once, migrated

SETUP = """
import uuid
from django.conf import settings
from django.contrib.auth.models import User
from chat.models import Run, Usage
from chat.store.turns import start_turn

settings.AGENTWEB_DAILY_TOKEN_BUDGET = 100
settings.AGENTWEB_BUDGET_RUN_RESERVE = {reserve}
owner = User.objects.create_user("sender")
Usage.objects.create(user=owner, input_tokens=80, output_tokens=10)


def attempt(n):
    start_turn(user=owner, thread_id=None, content=f"question {{n}}", client_msg_id=uuid.uuid4())


def after():
    return Run.objects.filter(thread__owner=owner).count()
"""


@pytest.mark.parametrize("database", DATABASES)
def test_eight_sends_at_once_with_the_budget_nearly_spent_start_one_run(database, tmp_path):
    with migrated(database, tmp_path) as env:
        outcomes, runs = at_once(env, SETUP.format(reserve=4000), count=8)

    assert sorted(outcomes) == ["BudgetExhausted"] * 7 + ["ok"]
    assert runs == 1


@pytest.mark.parametrize("database", DATABASES)
def test_sends_at_once_start_as_many_runs_as_the_rest_of_the_budget_holds(database, tmp_path):
    """10 tokens left and 3 held back per running run: four runs start (the fourth with 1 token of room), the fifth
    would have none."""
    with migrated(database, tmp_path) as env:
        outcomes, runs = at_once(env, SETUP.format(reserve=3), count=8)

    assert sorted(outcomes) == ["BudgetExhausted"] * 4 + ["ok"] * 4
    assert runs == 4
