"""How many chat sockets one person holds open in this process (AGENTWEB_MAX_SOCKETS_PER_USER).

Counted per process, in memory: a socket is counted while its consumer lives, and a process that dies takes its
counts with it, so no count outlives its sockets. With several Daphne processes a person may hold the cap in each
(docs/deploy.md); a flood of sockets through one process is what the cap stops.
"""

from __future__ import annotations

from collections import Counter

from django.apps import apps

#: The close code of a socket refused because its person holds the cap already (docs/protocol.md).
TOO_MANY_SOCKETS = 4429


class SocketCap:
    def __init__(self) -> None:
        self._open: Counter[int] = Counter()

    def open(self, user_id: int, cap: int) -> bool:
        """Count one more socket of `user_id`; False (nothing counted) when they hold `cap` already. 0: no cap."""
        if cap and self._open[user_id] >= cap:
            return False
        self._open[user_id] += 1
        return True

    def close(self, user_id: int) -> None:
        self._open[user_id] -= 1
        if self._open[user_id] <= 0:
            del self._open[user_id]

    def held(self, user_id: int) -> int:
        return self._open[user_id]


def sockets() -> SocketCap:
    """This process's count (made by chat/apps.py for the app's lifetime; consumers run on one event loop: no lock
    needed)."""
    return apps.get_app_config("chat").sockets
