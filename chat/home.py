"""The person's home (the settings page, templates/chat/settings.html): their chat defaults, and their usage over
the last 30 days as a chart the server draws (inline SVG, no script, no library) with a table beside it for
screen readers and for anyone who wants the numbers."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Sum
from django.db.models.functions import TruncDate
from django.utils.translation import gettext as _

from agentweb.admin_display import money

from .models import ChatDefaults, Usage
from .usage import start_of_day

USAGE_DAYS = 30
# The chart's drawing, in SVG units (it scales to the page's width).
CHART_WIDTH = 600
CHART_HEIGHT = 160
CHART_TOP = 12  # room for the tallest bar's outline


def defaults_for(
    *, saved: tuple[str, str] | None, agents: list[dict[str, Any]], models: list[dict[str, Any]]
) -> tuple[str, str]:
    """The person's default agent slug and model id, each only while it is still offered to them ("" otherwise):
    an agent removed or a model disabled since they chose it falls back to the site's default, with no error.
    `saved`: their row's (agent, model), None for no row (chat.queries.stamp_and_defaults reads it with the
    settings' stamp)."""
    if saved is None:
        return "", ""
    saved_agent, saved_model = saved
    agent = saved_agent if any(a["slug"] == saved_agent for a in agents) else ""
    model = saved_model if any(m["id"] == saved_model for m in models) else ""
    return agent, model


def save_defaults(user, *, agent: str, model: str, agents: list[dict[str, Any]], models: list[dict[str, Any]]) -> str:
    """Stores the person's defaults; "" for either means none (the site's default). Returns an error to show
    (nothing stored) when either is not one the person may pick."""
    if agent and not any(a["slug"] == agent for a in agents):
        return _("That agent is not one you can pick.")
    if model and not any(m["id"] == model for m in models):
        return _("That model is not one you can pick.")
    ChatDefaults.objects.update_or_create(user=user, defaults={"agent": agent, "model": model})
    return ""


@dataclass(frozen=True)
class UsageDay:
    date: datetime.date
    input_tokens: int
    output_tokens: int
    cost: Decimal | None
    # The bar, in the chart's units.
    x: float
    width: float
    y: float
    height: float

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost_text(self) -> str:
        return money(self.cost)


def usage_by_day(user, *, now: datetime.datetime | None = None) -> dict[str, Any]:
    """The person's tokens and cost per day (UTC, as the daily budget counts), the last USAGE_DAYS days with today,
    days without use included (zero): one grouped query on the (user, created_at) index."""
    today = start_of_day(now)
    first = today - datetime.timedelta(days=USAGE_DAYS - 1)
    rows = (
        Usage.objects.filter(user=user, created_at__gte=first)
        .annotate(day=TruncDate("created_at", tzinfo=datetime.UTC))
        .values("day")
        .annotate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost"))
    )
    by_day = {row["day"]: row for row in rows}
    dates = [(first + datetime.timedelta(days=n)).date() for n in range(USAGE_DAYS)]
    peak = max([(by_day[d]["i"] or 0) + (by_day[d]["o"] or 0) for d in dates if d in by_day] or [0])
    slot = CHART_WIDTH / USAGE_DAYS
    days = []
    for n, date in enumerate(dates):
        row = by_day.get(date) or {}
        i, o = row.get("i") or 0, row.get("o") or 0
        height = (i + o) / peak * (CHART_HEIGHT - CHART_TOP) if peak else 0
        if i + o and height < 1:
            height = 1  # a day with use is never drawn as none
        days.append(
            UsageDay(
                date=date,
                input_tokens=i,
                output_tokens=o,
                cost=row.get("c"),
                x=round(n * slot + slot * 0.15, 2),
                width=round(slot * 0.7, 2),
                y=round(CHART_HEIGHT - height, 2),
                height=round(height, 2),
            )
        )
    costs = [d.cost for d in days if d.cost is not None]
    return {
        "days": days,
        "used": [d for d in days if d.tokens],
        "total_tokens": sum(d.tokens for d in days),
        "total_cost": money(sum(costs, Decimal(0))) if costs else "",
        "peak": peak,
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
    }
