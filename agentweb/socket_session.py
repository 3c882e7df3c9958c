"""The session and user of a websocket, as channels' AuthMiddlewareStack gives them, without its wrapper around
every frame the socket is sent.

channels' SessionMiddleware hands the consumer a `send` that, for every message, looks at the (lazy) session to
decide whether to save it and set its cookie: only ever for `http.response.start`, which a websocket never sends.
Every token frame of every socket paid those checks (about a twentieth of the loop in the reconnect storm's
profile, docs/performance.md). Here a websocket's consumer gets the server's own `send`; the session is still
resolved into the scope the same way, and the user read from it by channels' AuthMiddleware.
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


def SocketAuthMiddlewareStack(inner):
    return CookieMiddleware(SocketSessionMiddleware(AuthMiddleware(inner)))
