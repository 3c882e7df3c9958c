"""The admin's usage report over the calls its filters select (chat/admin.py UsageAdmin, docs/usage.md): the totals,
the same by user, agent, model and day, and a chart of the tokens of each day, by model or by agent.

The chart is drawn here as numbers (each bar's place and size in the SVG's own units) and written as inline SVG by
templates/admin/chat/usage/chart.html: no script, nothing to load, and a table beside it with the same numbers for
whoever does not see it. Its queries are bounded whatever the table holds: one aggregate for the latest day, one
grouped by day and model (or agent) over the last CHART_DAYS days before it."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import Count, F, Max, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils.formats import date_format
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import money

#: The groups of the report: (key, title, the field grouped by).
USAGE_GROUPS = (
    ("user", _("user"), "user__username"),
    ("agent", _("agent"), "agent"),
    ("model", _("model"), "model_label"),
    ("day", _("day (UTC)"), "day"),
)
#: Groups shown per table, the largest first.
REPORT_ROWS = 100
#: Days the chart shows, up to the latest day of the selection.
CHART_DAYS = 31
#: Series drawn with colours of their own, the largest first; the rest are added up as one.
CHART_SERIES = 6
#: What a chart can break a day down by: (key, title, the field).
CHART_BY = (("model", _("model"), "model_label"), ("agent", _("agent"), "agent"))

# The SVG's own units (it scales to the page's width): the plot's box inside it and the room for the axes' labels.
WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 8, 12, 28

SUMS = {
    "calls": Count("id"),
    "input": Sum("input_tokens"),
    "output": Sum("output_tokens"),
    "tokens": Sum(F("input_tokens") + F("output_tokens")),
    "cost": Sum("cost"),
}


def report(queryset: QuerySet) -> dict[str, Any]:
    """The totals and one table per group, over the filtered rows: one aggregate query each."""
    rows = queryset.order_by()
    totals = rows.aggregate(**SUMS, estimated=Count("id", filter=Q(estimated=True)))
    totals = {key: value if value is not None or key == "cost" else 0 for key, value in totals.items()}
    groups = []
    for key, title, by in USAGE_GROUPS:
        grouped = rows.annotate(day=TruncDate("created_at", tzinfo=datetime.UTC)) if key == "day" else rows
        ordering = f"-{by}" if key == "day" else "-tokens"
        found = grouped.values(name=F(by)).annotate(**SUMS).order_by(ordering)[:REPORT_ROWS]
        groups.append({"key": key, "title": title, "rows": list(found)})
    return {"totals": totals, "groups": groups, "charts": [chart(rows, by=key) for key, _title, _field in CHART_BY]}


@dataclass
class Bar:
    """One series' part of one day's bar, in the SVG's units."""

    x: float
    y: float
    width: float
    height: float
    series: int
    title: str


@dataclass
class Chart:
    key: str
    title: str
    days: list[datetime.date] = field(default_factory=list)
    series: list[str] = field(default_factory=list)
    #: tokens[day index][series index], and the same for costs (None: nothing priced).
    tokens: list[list[int]] = field(default_factory=list)
    costs: list[list[Decimal | None]] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    ticks: list[dict[str, Any]] = field(default_factory=list)
    labels: list[dict[str, Any]] = field(default_factory=list)
    width: int = WIDTH
    height: int = HEIGHT
    plot: dict[str, float] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.days

    def table(self) -> list[dict[str, Any]]:
        """The chart's numbers as a table's rows: a day, each series' tokens and cost, the day's total."""
        return [
            {
                "day": day,
                "cells": [
                    {"tokens": f"{tokens:,}", "cost": money(cost) if cost is not None else ""}
                    for tokens, cost in zip(self.tokens[i], self.costs[i], strict=True)
                ],
                "total": f"{sum(self.tokens[i]):,}",
            }
            for i, day in enumerate(self.days)
        ]

    def description(self) -> str:
        """What the chart shows, in words: the days, and each series' tokens over them."""
        if self.empty:
            return ""
        totals = [sum(day[s] for day in self.tokens) for s in range(len(self.series))]
        parts = ", ".join(f"{name}: {tokens_text(total)}" for name, total in zip(self.series, totals, strict=True))
        return gettext("Tokens a day from %(first)s to %(last)s (UTC), by %(by)s. In all, %(parts)s.") % {
            "first": f"{self.days[0]:%Y-%m-%d}",
            "last": f"{self.days[-1]:%Y-%m-%d}",
            "by": self.title,
            "parts": parts,
        }


def chart(rows: QuerySet, *, by: str) -> Chart:
    """The tokens of each day (UTC) of the selection's last CHART_DAYS days, each day's bar split by `by`."""
    key, title, group_field = next(entry for entry in CHART_BY if entry[0] == by)
    result = Chart(key=key, title=str(title))
    latest = rows.aggregate(latest=Max("created_at"))["latest"]
    if latest is None:
        return result
    last_day = latest.astimezone(datetime.UTC).date()
    first_day = last_day - datetime.timedelta(days=CHART_DAYS - 1)
    since = datetime.datetime.combine(first_day, datetime.time(), tzinfo=datetime.UTC)
    found = (
        rows.filter(created_at__gte=since)
        .annotate(day=TruncDate("created_at", tzinfo=datetime.UTC))
        .values("day", name=F(group_field))
        .annotate(tokens=SUMS["tokens"], cost=SUMS["cost"])
    )
    cells: dict[tuple[datetime.date, str], tuple[int, Decimal | None]] = {}
    for row in found:
        cells[(_as_date(row["day"]), row["name"] or "")] = (row["tokens"] or 0, row["cost"])
    if not cells:
        return result
    first_day = min(day for day, _name in cells)
    result.days = [first_day + datetime.timedelta(days=n) for n in range((last_day - first_day).days + 1)]
    result.series, fold = _series(cells)
    index = {day: n for n, day in enumerate(result.days)}
    result.tokens = [[0] * len(result.series) for _day in result.days]
    result.costs = [[None] * len(result.series) for _day in result.days]
    for (day, name), (tokens, cost) in cells.items():
        d, s = index[day], fold[name]
        result.tokens[d][s] += tokens
        if cost is not None:
            result.costs[d][s] = (result.costs[d][s] or Decimal(0)) + Decimal(str(cost))
    _draw(result)
    return result


def _series(cells: dict) -> tuple[list[str], dict[str, int]]:
    """The names drawn, the largest first, and where each name's tokens go (the smallest together as "others")."""
    totals: dict[str, int] = {}
    for (_day, name), (tokens, _cost) in cells.items():
        totals[name] = totals.get(name, 0) + tokens
    ranked = sorted(totals, key=lambda name: (-totals[name], name))
    kept = ranked if len(ranked) <= CHART_SERIES else ranked[: CHART_SERIES - 1]
    names = [name or gettext("(none)") for name in kept]
    fold = {name: n for n, name in enumerate(kept)}
    if len(kept) < len(ranked):
        names.append(gettext("others"))
        fold.update({name: len(kept) for name in ranked[len(kept) :]})
    return names, fold


def _draw(result: Chart) -> None:
    """Each bar's place and size, the value axis' ticks and which days get a label under the axis."""
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    result.plot = {
        "left": LEFT,
        "top": TOP,
        "right": WIDTH - RIGHT,
        "bottom": TOP + plot_height,
        "label_x": LEFT - 6,  # the value axis' labels end there
        "label_y": TOP + plot_height + 18,  # the days' labels stand there
    }
    top = nice_ceiling(max(sum(day) for day in result.tokens))
    slot = plot_width / len(result.days)
    bar_width = max(1.0, slot * 0.7)
    for d, day in enumerate(result.days):
        x, y = LEFT + d * slot + (slot - bar_width) / 2, TOP + plot_height
        for s, tokens in enumerate(result.tokens[d]):
            if not tokens:
                continue
            height = tokens / top * plot_height
            y -= height
            title = bar_title(day, result.series[s], tokens, result.costs[d][s])
            result.bars.append(Bar(round(x, 2), round(y, 2), round(bar_width, 2), round(height, 2), s, title))
    result.ticks = [
        {"y": round(TOP + plot_height - value / top * plot_height, 2), "label": tokens_text(value)}
        for value in (0, top // 2, top)
    ]
    every = max(1, -(-len(result.days) // 8))  # at most eight dates under the axis
    result.labels = [
        {"x": round(LEFT + d * slot + slot / 2, 2), "text": date_format(day, "M j")}
        for d, day in enumerate(result.days)
        if d % every == 0
    ]


def bar_title(day: datetime.date, series: str, tokens: int, cost: Decimal | None) -> str:
    """What a bar's part says on hover (and to a screen reader): the day, the series, its tokens and cost."""
    text = ngettext("%(day)s, %(series)s: %(tokens)s token", "%(day)s, %(series)s: %(tokens)s tokens", tokens) % {
        "day": f"{day:%Y-%m-%d}",
        "series": series,
        "tokens": f"{tokens:,}",
    }
    return text if cost is None else f"{text}, {money(cost)}"


def _as_date(value: Any) -> datetime.date:
    """TruncDate's day: a date, or on SQLite sometimes its ISO text."""
    return value if isinstance(value, datetime.date) else datetime.date.fromisoformat(str(value))


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 2.5 or 5 times a power of ten at or above `value` (at least 10): the axis' top."""
    value = max(value, 10)
    power = 10 ** (len(str(value)) - 1)
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return int(step * power)
    return 10 * power


def tokens_text(tokens: int) -> str:
    """Tokens as the axis and the summary say them: 950, 12 k, 3.4 M."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.3g} M"
    if tokens >= 1_000:
        return f"{tokens / 1_000:.3g} k"
    return str(tokens)
