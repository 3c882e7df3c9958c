"""What each model call costs: its tokens as the server counted them (or estimated, and marked so: chat/agent.py
step_usage), its cost from the model configuration's prices, the run's totals, and the daily token budget.

A run's recorder holds a `Meter`: each answer's usage goes out with its `message.completed` and into the message's
row; the calls' `Usage` rows and the run's totals are written with the run's pause or end (chat/store/steps.py), in
the statements those already make, plus one INSERT. A process that dies mid-run loses the rows of that run segment
(the answers keep their usage)."""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext_noop, ngettext_lazy

from agentweb.locks import lock_person
from languages.phrases import Phrase
from tools.services import groups_of_id
from tools.settings_cache import SETTINGS_CACHE

from .live.views import UsageView
from .models import GroupTokenBudget, Run, TokenBudget, Usage

MILLION = Decimal(1_000_000)
CENT_FRACTIONS = Decimal("0.000001")


def cost_of(input_tokens: int, output_tokens: int, price_input: Decimal | None, price_output: Decimal | None):
    """The cost of a call at prices per million tokens; None when neither price is set."""
    if price_input is None and price_output is None:
        return None
    cost = (input_tokens * (price_input or 0) + output_tokens * (price_output or 0)) / MILLION
    return cost.quantize(CENT_FRACTIONS)


def empty_totals() -> UsageView:
    return {"input_tokens": 0, "output_tokens": 0, "estimated": False, "cost": None}


def add(totals: UsageView, usage: UsageView) -> UsageView:
    """`totals` with one call's usage added (costs are decimal strings; a call without one adds nothing to it)."""
    cost = totals.get("cost")
    if usage.get("cost") is not None:
        cost = str(Decimal(cost or 0) + Decimal(usage["cost"]))
    return {
        "input_tokens": totals.get("input_tokens", 0) + usage.get("input_tokens", 0),
        "output_tokens": totals.get("output_tokens", 0) + usage.get("output_tokens", 0),
        "estimated": bool(totals.get("estimated")) or bool(usage.get("estimated")),
        "cost": cost,
    }


@dataclass
class Meter:
    """A run's model calls, as they complete: their usage with cost, the rows to write, the run's totals."""

    user_id: int | None = None
    thread_id: uuid.UUID | None = None
    run_id: int | None = None
    model_config_id: int | None = None
    model_label: str = ""
    agent: str = ""
    source: str = "chat"
    api_key_id: int | None = None
    price_input: Decimal | None = None
    price_output: Decimal | None = None
    totals: UsageView = field(default_factory=empty_totals)
    rows: list[Usage] = field(default_factory=list)

    def record(self, usage: dict[str, Any]) -> UsageView:
        """One call's usage ({input_tokens, output_tokens, estimated}) as the answer shows it: with its cost (a
        decimal string) when the model is priced. Held for the run's next write (take_rows)."""
        cost = cost_of(usage["input_tokens"], usage["output_tokens"], self.price_input, self.price_output)
        shown: UsageView = {**usage, "cost": None if cost is None else str(cost)}
        self.totals = add(self.totals, shown)
        self.rows.append(
            Usage(
                user_id=self.user_id,
                thread_id=self.thread_id,
                run_id=self.run_id,
                model_config_id=self.model_config_id,
                model_label=self.model_label[:300],
                agent=self.agent,
                source=self.source,
                api_key_id=self.api_key_id,
                input_tokens=usage["input_tokens"],
                output_tokens=usage["output_tokens"],
                estimated=usage["estimated"],
                cost=cost,
            )
        )
        return shown

    def take_rows(self) -> list[Usage]:
        rows, self.rows = self.rows, []
        return rows


# --- the daily token budget -------------------------------------------------------------------------


class BudgetExhausted(Exception):
    """The person spent their daily token budget: no new run starts until tomorrow (UTC). `running`: the answers
    still running whose share of the budget held back the rest (the budget is not spent yet)."""

    def __init__(self, budget: int, spent: int, running: int = 0):
        if running:
            message = Phrase(
                ngettext_lazy(
                    "Your daily token budget is nearly used (%(spent)s of %(budget)s tokens today, and %(n)s answer "
                    "still running may use the rest). Wait for it to finish, then try again; an administrator can "
                    "raise your budget.",
                    "Your daily token budget is nearly used (%(spent)s of %(budget)s tokens today, and %(n)s answers "
                    "still running may use the rest). Wait for them to finish, then try again; an administrator can "
                    "raise your budget.",
                    "n",
                ),
                plural_by="n",
                spent=spent,
                budget=budget,
                n=running,
            )
        else:
            message = Phrase(
                gettext_noop(
                    "You have used your daily token budget (%(spent)s of %(budget)s tokens today). New answers can "
                    "start again tomorrow (00:00 UTC); an administrator can raise your budget."
                ),
                spent=spent,
                budget=budget,
            )
        super().__init__(message)
        self.budget, self.spent, self.running = budget, spent, running


def start_of_day(now: datetime.datetime | None = None) -> datetime.datetime:
    now = now or timezone.now()
    return now.astimezone(datetime.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def default_budget() -> int | None:
    """AGENTWEB_DAILY_TOKEN_BUDGET: tokens (input and output) a person may spend per day (UTC); None or 0: none."""
    return getattr(settings, "AGENTWEB_DAILY_TOKEN_BUDGET", None) or None


def overrides(stamp: str | None = None) -> dict[int, int | None]:
    """user id → their own daily budget (None: no budget). `stamp`: the settings stamp the caller read; the
    budgets (a small table) are then kept in the settings cache (tools/settings_cache.py: any write to them gives
    a new stamp), so a turn on a thread, which reads the stamp anyway, needs no statement for them. None: read now."""
    return SETTINGS_CACHE.get(
        stamp, "budgets", "all", lambda: dict(TokenBudget.objects.values_list("user_id", "daily_tokens"))
    )


def group_budgets(stamp: str | None = None) -> dict[str, int | None]:
    """group name → its members' daily budget (None: no budget), kept per stamp as overrides are."""
    return SETTINGS_CACHE.get(
        stamp,
        "budgets",
        "groups",
        lambda: dict(GroupTokenBudget.objects.values_list("group__name", "daily_tokens")),
    )


def budget_for(user_id: int, stamp: str | None = None, groups: frozenset[str] | None = None) -> int | None:
    """The person's daily budget (None: none), by the first rule that has one: their own (TokenBudget); else the
    most generous of their groups' (GroupTokenBudget: no budget beats any number, a larger number a smaller one);
    else AGENTWEB_DAILY_TOKEN_BUDGET. `groups`: their group names, when the caller read them already (read only
    when some group has a budget)."""
    return budget_and_reason(user_id, stamp, groups)[0]


def budget_and_reason(
    user_id: int, stamp: str | None = None, groups: frozenset[str] | None = None
) -> tuple[int | None, str]:
    """budget_for, and which rule gave it: "own", "group <name>" or "default" (the admin's page for a person)."""
    own = overrides(stamp)
    if user_id in own:
        return own[user_id], "own"
    by_group = group_budgets(stamp)
    if by_group:
        if groups is None:
            groups = groups_of_id(user_id, stamp=stamp)
        theirs = sorted((name, by_group[name]) for name in groups if name in by_group)
        if theirs:
            # The most generous: no budget (None) first, then the largest; ties by the group's name.
            name, tokens = min(theirs, key=lambda item: (item[1] is not None, -(item[1] or 0), item[0]))
            return tokens, f"group {name}"
    return default_budget(), "default"


def spent_today(user_id: int) -> int:
    totals = Usage.objects.filter(user_id=user_id, created_at__gte=start_of_day()).aggregate(
        i=Sum("input_tokens"), o=Sum("output_tokens")
    )
    return (totals["i"] or 0) + (totals["o"] or 0)


def check_budget(user_id: int, stamp: str | None = None, groups: frozenset[str] | None = None) -> None:
    """Before a new run, in the transaction that opens it: BudgetExhausted when the person's daily budget is spent,
    or held back by the runs still running (each holds AGENTWEB_BUDGET_RUN_RESERVE tokens of it until its usage is
    written). The person is locked until that transaction ends (agentweb/locks.py), so of two runs opened at once
    the second sees the first: once the budget is taken, the sends that arrive together are refused. `stamp`: the
    settings stamp the caller read (the overrides are then kept per stamp); with no budget for the person, no
    further statement. `groups`: the person's group names, when the caller read them (budget_for)."""
    budget = budget_for(user_id, stamp, groups)
    if budget is None:
        return
    lock_person(user_id)
    spent = spent_today(user_id)
    if spent >= budget:
        raise BudgetExhausted(budget, spent)
    running = Run.objects.filter(thread__owner_id=user_id, status__in=Run.ACTIVE_STATUSES).count()
    if running and spent + running * settings.AGENTWEB_BUDGET_RUN_RESERVE >= budget:
        raise BudgetExhausted(budget, spent, running=running)
