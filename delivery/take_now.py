"""A channel layer handing a message straight to its socket's consumer when that consumer has nothing else to do.

A thread's event reaches every socket that follows the thread, and each of them paid, per frame, for a queue of its
own, a wake-up of its consumer's task, the consumer's lock and dispatch, and Daphne's send coroutine, before the frame
was written: in a py-spy profile of the reconnect storm that was a third of a Daphne process's loop, for frames the
consumer only passes on (docs/performance.md, P25). Here a consumer may register a `taker` for its channel
(delivery/dispatch.py does, for a consumer with a `take_now` method): when a message comes for that channel and
nothing waits in the channel's queue, the layer offers the message to the taker first, and queues it only if the
taker says no. The taker says no unless its consumer is idle (no handler running, none waiting to run, so nothing
the message could overtake) and the message is one it can finish at once, without awaiting (ChatConsumer.take_now:
a thread's event, written to the socket then and there). A taker is only ever called in the event loop its
consumer runs in.
"""

from __future__ import annotations

from collections.abc import Callable

#: The scope's extension (ASGI's `scope["extensions"]`) through which agentweb's server (agentweb/serve.py) gives a
#: websocket's consumer `send_now(*texts) -> bool`: text frames written to the socket at once (together), or False if
#: they cannot be.
SEND_NOW = "agentweb.send_now"

#: Called with a message for the channel; True if it took the message (which is then not queued).
Taker = Callable[[dict], bool]


class TakesNow:
    """Mixed into a channel layer (before it): `take_now_for`, `forget_taker`, and `taken_now` for the layer's
    delivery to call when the channel's queue is empty."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.takers: dict[str, Taker] = {}

    def take_now_for(self, channel: str, taker: Taker) -> None:
        self.takers[channel] = taker

    def forget_taker(self, channel: str) -> None:
        self.takers.pop(channel, None)

    def taken_now(self, channel: str, message: dict) -> bool:
        """Whether the channel's taker took `message`. Call only when nothing waits in the channel's queue."""
        taker = self.takers.get(channel)
        return taker is not None and taker(message)
