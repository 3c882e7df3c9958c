"""A response whose status and body are known only once a run has answered."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from django.http import StreamingHttpResponse


class SettledLater(StreamingHttpResponse):
    """Sent once `settle` gives its (status, body): agentweb's HTTP handler awaits `settle()` before it sends the head,
    with no thread held meanwhile and the wait given up when the client leaves (agentweb/http_handler.py). Under
    another server the body still comes, with the status 200."""

    def __init__(self, settle: Callable[[], Awaitable[tuple[int, bytes]]], **kwargs):
        self._settle = settle
        self._body: bytes | None = None
        super().__init__(self.settled_body(), content_type="application/json", **kwargs)

    async def settle(self) -> None:
        if self._body is None:
            self.status_code, self._body = await self._settle()

    async def settled_body(self):
        await self.settle()
        yield self._body
