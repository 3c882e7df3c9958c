"""A Server-Sent Events client for the run API's event streams (api/run_events.py), over a real httpx connection:
parses `id:`, `event:` and `data:` lines as an EventSource does, and keeps the comment lines (keep-alives) it saw."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import httpx

RUN_ENDS = frozenset({"run.completed", "run.failed", "run.cancelled", "run.waiting"})


@dataclass
class Event:
    id: str | None
    type: str
    data: dict

    @property
    def seq(self) -> int | None:
        return int(self.id) if self.id is not None else None


@dataclass
class EventStream:
    """GET `url` as an event stream; `async with` opens it, `next()` reads one event, `until()` reads up to a type."""

    client: httpx.AsyncClient
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)
    last_id: str | None = None

    async def __aenter__(self) -> EventStream:
        self._context = self.client.stream("GET", self.url, headers=self.headers, timeout=httpx.Timeout(30.0))
        self.response = await self._context.__aenter__()
        self._lines = self.response.aiter_lines()
        return self

    async def __aexit__(self, *exc) -> None:
        await self._context.__aexit__(*exc)

    async def next(self, timeout: float = 30) -> Event:
        event_id, event_type, data = None, "message", []
        while True:
            line = await asyncio.wait_for(anext(self._lines), timeout)
            if line == "":
                if data:
                    if event_id is not None:
                        self.last_id = event_id
                    return Event(event_id, event_type, json.loads("\n".join(data)))
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "":
                self.comments.append(value)
            elif name == "id":
                event_id = value
            elif name == "event":
                event_type = value
            elif name == "data":
                data.append(value)

    async def until_comment(self, text: str, timeout: float = 10) -> None:
        """Reads on (events included) until a comment line `text` comes; fails after `timeout` seconds without it."""

        async def read() -> None:
            # Line by line: next() reads on past comments to the next event, which an idle stream never sends.
            while text not in self.comments:
                line = await anext(self._lines)
                if line.startswith(":"):
                    self.comments.append(line[1:].removeprefix(" "))

        try:
            await asyncio.wait_for(read(), timeout)
        except TimeoutError:
            raise AssertionError(f"no ': {text}' comment within {timeout} s; got {self.comments}") from None

    async def until_run_ends(self, timeout: float = 30) -> list[Event]:
        """The events until the thread's run no longer runs: its run.completed, .failed, .cancelled or .waiting, or a
        snapshot that shows it so already (a stream opened after the run ended)."""
        events: list[Event] = []

        def ended() -> bool:
            last = events[-1]
            if last.type == "thread.snapshot":
                return last.data["run"] is not None and last.data["run"]["status"] != "running"
            return last.type in RUN_ENDS

        async def read() -> None:
            while not events or not ended():
                events.append(await self.next(timeout))

        try:
            await asyncio.wait_for(read(), timeout)
        except TimeoutError:
            raise AssertionError(f"the run did not end within {timeout} s; got {[e.type for e in events]}") from None
        return events

    async def until(self, *types: str, timeout: float = 30) -> list[Event]:
        """The events up to the first of `types` (included), all within `timeout` seconds (keep-alives go on)."""
        events: list[Event] = []

        async def read() -> None:
            while not events or events[-1].type not in types:
                events.append(await self.next(timeout))

        try:
            await asyncio.wait_for(read(), timeout)
        except TimeoutError:
            got = [e.type for e in events]
            raise AssertionError(f"no {' or '.join(types)} within {timeout} s; got {got}") from None
        return events
