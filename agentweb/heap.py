"""What a process holds for long (its open sockets' state, mostly) kept out of the cyclic collector's walks, so that
a process holding thousands of sockets does not stop for half a second at a time.

Python's full collection walks every tracked object the process holds. A Daphne process holding 5,000 open sockets
holds most of its objects in those sockets' state, and a full collection then took 300-660 ms (logged with
gc.callbacks): 14 of them while those sockets opened, and one every few minutes while they sat idle, each freeing
nothing, and every stream of the process stalled meanwhile. Python starts a full collection each time the objects
that survived the younger ones grow by a quarter of those the last one kept, whatever they are.

So after each full collection what survived it is frozen (`gc.freeze()`: moved where no collection walks it): the
next full collection walks only what came since. Freezing keeps an object alive only if it is in a reference cycle
(everything else is freed by its reference count, frozen or not). A socket that closes leaves none since P19 and
P20 (docs/performance.md; it left ~55 objects in cycles before, and this module unfroze everything once a quarter
of the sockets had closed, a full walk of the whole process in the middle of every reconnect storm). What a freeze
can still hold is the few cycles that happened to be alive at that moment and died later (an exception's
traceback, say: 50 to 400 objects in all, counted after a reconnect storm and after 200 streams with nothing ever
unfrozen). Those are let go once an hour: everything is unfrozen, the next full collection walks it all and frees
them, and what it keeps is frozen again.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

#: How long a cycle caught by a freeze may be held; also how often one full collection walks everything.
UNFREEZE_EVERY_S = 3600


class HeapFreezer:
    """Checked often (`check`, each second): freezes what each full collection kept, and unfreezes hourly."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.full_collections = full_collections()
        self.unfrozen_at = clock()

    def check(self) -> None:
        now = self.clock()
        if now - self.unfrozen_at >= UNFREEZE_EVERY_S:
            self.unfrozen_at = now
            if gc.get_freeze_count():
                gc.unfreeze()
                self.full_collections = full_collections()  # only a collection after this one walks it all
                return
        done = full_collections()
        if done != self.full_collections:
            self.full_collections = done
            gc.freeze()


def full_collections() -> int:
    return gc.get_stats()[-1]["collections"]
