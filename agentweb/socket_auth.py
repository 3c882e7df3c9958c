"""The session and user of a websocket: channels' SessionMiddlewareStack, and the user read in one trip to the
database with the other sockets opening at that moment (chat/signed_in.py, docs/performance.md P23).

channels' AuthMiddleware reads each socket's user on its own (`get_user`): in a reconnect storm those reads queued
behind each other on the process's one database thread. Here the user is read as channels' `get_user` reads it
(its flush of a session whose password changed included), batched, and put in the scope in place of channels' lazy
user: the consumer sees the same user, resolved before it runs, as channels' own middleware resolves it.

(agentweb/socket_session.py once skipped channels' SessionMiddleware's `send` wrapper; measured again it bought
nothing, docs/performance.md "Library reach-ins measured again", piece 10, and channels' own stack is back.)
"""

from __future__ import annotations

from channels.auth import AuthMiddleware
from channels.sessions import SessionMiddlewareStack


class SocketAuthMiddleware(AuthMiddleware):
    """channels' AuthMiddleware, the user read with the other sockets opening at that moment (chat/signed_in.py)."""

    async def resolve_scope(self, scope):
        from chat.signed_in import read_signed_in_user

        scope["user"] = await read_signed_in_user(scope["session"])


def SocketAuthMiddlewareStack(inner):
    return SessionMiddlewareStack(SocketAuthMiddleware(inner))
