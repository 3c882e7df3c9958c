"""Retries of a model request that failed before its first event.

`RetryingProvider` wraps any provider: a retryable failure (429, 500/502/503/504/529, a connection that
could not be made or broke) is retried with backoff, honouring Retry-After, but only while nothing has
been yielded yet. Once the first event is out, a failure ends the run: the caller keeps the partial text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from .base import Provider
from .http_provider import ModelServerError
from .structured import AnswerFormat
from .types import ChatMessage, StreamEvent, ToolDefinition

log = logging.getLogger("agentweb.llm")


@dataclass(frozen=True)
class RetryPolicy:
    #: Attempts in all, the first included; 1 means no retries.
    max_attempts: int = 3
    #: Backoff without Retry-After: a random wait in [d/2, d], d = base_delay · 2^(retry-1), at most max_delay.
    base_delay: float = 0.5
    max_delay: float = 8.0
    #: A server that asks to wait longer than this is not waited for: the error is reported at once.
    max_retry_after: float = 60.0

    def wait(self, retry: int, retry_after: float | None, rng: random.Random) -> float | None:
        """Seconds to wait before retry number `retry` (1-based), or None when waiting is not worth it."""
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        return rng.uniform(ceiling / 2, ceiling)


class RetryingProvider:
    """Any provider, retried on retryable failures that happen before its first event."""

    def __init__(
        self,
        inner: Provider,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self.label = inner.label
        self.is_demo = inner.is_demo
        self._sleep = sleep
        self._rng = rng or random.Random()

    def __repr__(self) -> str:
        return f"RetryingProvider({self.inner!r}, max_attempts={self.policy.max_attempts})"

    async def stream(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: AnswerFormat | None = None
    ) -> AsyncIterator[StreamEvent]:
        extra = {} if answer is None else {"answer": answer}
        attempt = 1
        while True:
            yielded = False
            try:
                async with contextlib.aclosing(self.inner.stream(messages, tools, **extra)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except ModelServerError as exc:
                if yielded or not exc.retryable:
                    raise
                if attempt >= self.policy.max_attempts:
                    if attempt == 1:
                        raise
                    raise _with_note(exc, f"{attempt} attempts") from exc
                wait = self.policy.wait(attempt, exc.retry_after, self._rng)
                if wait is None:
                    raise _with_note(exc, f"it asked to wait {exc.retry_after:g} s before trying again") from exc
                log.warning(
                    "%s: attempt %d of %d failed, retrying in %.2f s: %s",
                    self.label,
                    attempt,
                    self.policy.max_attempts,
                    wait,
                    exc,
                )
                await self._sleep(wait)
                attempt += 1


def _with_note(exc: ModelServerError, note: str) -> ModelServerError:
    return ModelServerError(f"{exc} ({note})", status=exc.status, retryable=exc.retryable, retry_after=exc.retry_after)
