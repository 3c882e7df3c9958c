"""The session and user of a websocket, as channels' AuthMiddlewareStack gives them, without its wrapper around
every frame the socket is sent.

channels' SessionMiddleware hands the consumer a `send` that, for every message, looks at the (lazy) session to
decide whether to save it and set its cookie: only ever for `http.response.start`, which a websocket never sends.
Every token frame of every socket paid those checks (about a twentieth of the loop in the reconnect storm's
profile, docs/performance.md). Here a websocket's consumer gets the server's own `send`; the session is still
resolved into the scope the same way, and the user read from it as channels' AuthMiddleware reads it, in one trip
to the database with the other sockets opening at that moment (chat/signed_in.py).
"""

from __future__ import annotations

from channels.auth import AuthMiddleware
from channels.sessions import CookieMiddleware, InstanceSessionWrapper, SessionMiddleware


class SocketSessionMiddleware(SessionMiddleware):
    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await super().__call__(scope, receive, send)
        wrapper = InstanceSessionWrapper(scope, send)
        await wrapper.resolve_session()
        return await self.inner(wrapper.scope, receive, send)


class SocketAuthMiddleware(AuthMiddleware):
    """channels' AuthMiddleware, the user read with the other sockets opening at that moment (chat/signed_in.py)."""

    async def resolve_scope(self, scope):
        from chat.signed_in import read_signed_in_user

        scope["user"]._wrapped = await read_signed_in_user(scope["session"])


def SocketAuthMiddlewareStack(inner):
    return CookieMiddleware(SocketSessionMiddleware(SocketAuthMiddleware(inner)))
