"""A Redis script that many callers run, the calls waiting at one moment sent together in one write.

Every frame of every stream a process runs is one call of the event log's script. Sent one by one, each call
was a round trip of its own: a write, a wake-up of the loop, a read, through redis-py's Python per call; beside
200 streams the run worker spent about 250 µs of CPU on each frame's publish (docs/performance.md, "Production
shape"). Here a call made while none is in flight goes out at the loop's next turn, and the calls made meanwhile
go out together, in the order they were made, as soon as it returns: one pipeline, one write and one read for
all of them (a group commit). A lone call waits for nothing more than before; under load the calls share their
round trips.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any

from redis.exceptions import NoScriptError

#: A call's arguments, or a function that gives them when the call goes out (None: the call has nothing to do).
Args = list[Any] | Callable[[], list[Any] | None]
Call = tuple[list[str], Args, asyncio.Future]


class BatchedScript:
    def __init__(self, client, script: str, *, most: int = 500):
        self._client = client
        self._script = script
        self._sha = hashlib.sha1(script.encode()).hexdigest()
        self._most = most
        self._waiting: list[Call] = []
        self._sender: asyncio.Task | None = None

    async def __call__(self, keys: list[str], args: list[Any]) -> Any:
        """The script's result for these keys and arguments (its error raised here, as a lone call's would be)."""
        return await self.submit(keys, args)

    def submit(self, keys: list[str], args: Args) -> asyncio.Future:
        """Queue a call now, behind every call queued before it; its result's future. `args` may be a function, called
        when the call goes out: what it gives then is sent (None: nothing is, and the result is None)."""
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((keys, args, future))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.ensure_future(self._send_waiting())
        return future

    async def _send_waiting(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting[: self._most], self._waiting[self._most :]
            batch = _made(batch)
            if not batch:
                continue
            try:
                results = await self._run(batch)
            except asyncio.CancelledError:
                for *_, future in batch + self._waiting:
                    future.cancel()
                self._waiting = []
                raise
            except Exception as error:  # Redis out of reach, the connection cut: each caller of this batch hears it
                results = [error] * len(batch)
            for (*_, future), result in zip(batch, results, strict=True):
                if future.done():  # its caller was cancelled; the call itself was made
                    continue
                if isinstance(result, Exception):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    async def _run(self, batch: list[Call], *, load_if_missing: bool = True) -> list[Any]:
        async with self._client.pipeline(transaction=False) as pipe:
            for keys, args, _ in batch:
                pipe.evalsha(self._sha, len(keys), *keys, *args)
            results = await pipe.execute(raise_on_error=False)
        missing = [i for i, result in enumerate(results) if isinstance(result, NoScriptError)]
        if missing and load_if_missing:  # Redis restarted, or first use: such a call did nothing; load and redo it
            await self._client.script_load(self._script)
            again = await self._run([batch[i] for i in missing], load_if_missing=False)
            for i, result in zip(missing, again, strict=True):
                results[i] = result
        return results


def _made(batch: list[Call]) -> list[Call]:
    """The batch's calls with their arguments in hand: a function's are made now; a call that has nothing to do (or
    whose function failed) is answered here and left out."""
    made = []
    for keys, args, future in batch:
        if callable(args):
            try:
                args = args()
            except Exception as error:
                if not future.done():
                    future.set_exception(error)
                continue
            if args is None:
                if not future.done():
                    future.set_result(None)
                continue
        made.append((keys, args, future))
    return made
