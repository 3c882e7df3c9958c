"""tool-result-50mb: capturing a 50 MB tool result for the model and the database, against json.dumps.

A tool that returns 600,000 small rows (about 52 MB as JSON) is captured by tools.results.capture, which
keeps the two capped ends and counts the rest without building the whole text. The floor is the C encoder
encoding the same rows once into one string, in the same process, just before.
"""

from __future__ import annotations

import json
import time

from tools.results import capture

from .common import Result


def encode_floor(rows: list[dict]) -> float:
    started = time.perf_counter()
    json.dumps(rows, ensure_ascii=False)
    return time.perf_counter() - started


def capture_seconds(rows: list[dict]) -> float:
    started = time.perf_counter()
    captured = capture(rows)
    seconds = time.perf_counter() - started
    assert captured.total > len(rows) * 60, "the whole result was not counted"
    return seconds


async def tool_result(app, result: Result, smoke: bool) -> None:
    rows = [{"id": n, "name": "x" * 60} for n in range(10_000 if smoke else 600_000)]
    floor = min(encode_floor(rows) for _ in range(3))
    measured = min(capture_seconds(rows) for _ in range(3))
    result.add(
        "capture a 50 MB list of small rows",
        measured * 1000,
        "ms",
        target="≤ 3 × json.dumps",
        floor=floor * 1000,
        passed=measured <= 3 * floor,
        note="best of 3; encoding item by item was about 6 times the floor",
    )
