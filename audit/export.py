"""The audit log as CSV or JSON, streamed: rows are read BATCH at a time by id (newest first), each batch written
out before the next is read, so an export of any size holds one batch in memory."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Iterable

from channels.db import database_sync_to_async
from django.db.models import QuerySet

from .models import Event

#: Events read per statement.
BATCH = 1000
COLUMNS = ["id", "at", "action", "actor", "actor_id", "target_type", "target_id", "target", "ip", "detail"]
#: A cell a spreadsheet would read as a formula starts with one of these: such a cell is written with a quote first
#: (a failed sign-in's username is whatever was typed).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_dict(event: Event) -> dict:
    return {
        "id": event.pk,
        "at": event.at.isoformat(),
        "action": event.action,
        "actor": event.actor_name,
        "actor_id": event.actor_id,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "target": event.target_label,
        "ip": event.ip,
        "detail": event.detail,
    }


async def batches(events: QuerySet[Event]) -> AsyncIterator[list[Event]]:
    ordered = events.order_by("-pk")
    last = None

    def read(before):
        page = ordered if before is None else ordered.filter(pk__lt=before)
        return list(page[:BATCH])

    while True:
        batch = await database_sync_to_async(read)(last)
        if not batch:
            return
        yield batch
        last = batch[-1].pk


def safe_cell(value) -> str:
    text = "" if value is None else (json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value))
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_lines(rows: Iterable[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([safe_cell(row[column]) for column in COLUMNS])
    return out.getvalue()


async def as_csv(events: QuerySet[Event]) -> AsyncIterator[str]:
    yield csv_lines([dict(zip(COLUMNS, COLUMNS, strict=True))])
    async for batch in batches(events):
        yield csv_lines(as_dict(event) for event in batch)


async def as_json(events: QuerySet[Event]) -> AsyncIterator[str]:
    """One JSON array, an event per line."""
    yield "["
    first = True
    async for batch in batches(events):
        parts = [json.dumps(as_dict(event), ensure_ascii=False) for event in batch]
        yield ("\n" if first else ",\n") + ",\n".join(parts)
        first = False
    yield "\n]\n"
