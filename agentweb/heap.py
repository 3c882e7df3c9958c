"""Long-lived connections kept out of the cyclic collector's walks, so that a process holding thousands of sockets
does not stop for half a second at a time.

Python's full collection walks every tracked object the process holds. A Daphne process holding 5,000 open sockets
holds most of its objects in those sockets' state, and a full collection then took 300-660 ms (logged with
gc.callbacks): 14 of them while those sockets opened, and one every few minutes while they sat idle, each freeing
nothing, and every stream of the process stalled meanwhile. Python starts a full collection each time the objects
that survived the younger ones grow by a quarter of those the last one kept, whatever they are.

So after each full collection what survived it is frozen (`gc.freeze()`: moved where no collection walks it): the
next full collection walks only what came since. Freezing keeps an object alive only if it is in a reference cycle
(everything else is freed by its reference count, frozen or not), and a closed socket left ~55 such objects
(docs/performance.md; since P19 not its handshake's HTTP request, but sockets dropped in the middle of a stream
still leave some: a reconnect storm's collection freed 16,000 objects in one process): the connections open at a
freeze are counted, and once a quarter of them have closed (the same quarter Python waits for), everything is
unfrozen, so that the next full collection frees what they left, after which its survivors are frozen again.
Memory held by closed sockets is so bounded by a quarter of the sockets open at the last freeze, and a full walk
of everything comes with that churn, not with every quarter's growth of anything.
"""

from __future__ import annotations

import gc

#: Below this many closed connections, never unfrozen: a handful of sockets leave a few kilobytes.
FEWEST_CLOSED_TO_UNFREEZE = 100


class ConnectionFreezer:
    """Told of each full collection (`check`, often) and of each connection that closes (`closed`)."""

    def __init__(self) -> None:
        self.full_collections = full_collections()
        self.frozen_connections = 0
        self.closed_since_freeze = 0

    def check(self, connections: dict) -> None:
        """Freezes what the latest full collection kept, if there was one since the last check; `connections`
        (Daphne's, protocol → its details) are marked as frozen."""
        done = full_collections()
        if done == self.full_collections:
            return
        self.full_collections = done
        gc.freeze()
        for details in connections.values():
            details["frozen"] = True
        self.frozen_connections = len(connections)
        self.closed_since_freeze = 0

    def closed(self, details: dict) -> None:
        """A connection is gone: once a quarter of those frozen are, everything is unfrozen."""
        if not details.get("frozen") or not self.frozen_connections:
            return
        self.closed_since_freeze += 1
        if self.closed_since_freeze >= max(FEWEST_CLOSED_TO_UNFREEZE, self.frozen_connections // 4):
            gc.unfreeze()
            self.frozen_connections = 0
            self.closed_since_freeze = 0


def full_collections() -> int:
    return gc.get_stats()[-1]["collections"]
