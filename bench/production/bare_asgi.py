"""The floor of the idle-sockets benchmark: an ASGI application that accepts websockets and does nothing else,
served by plain Daphne, so that what Daphne, Twisted and autobahn hold per socket is measured apart from what
the app adds (the consumer, its channel, its groups)."""


async def application(scope, receive, send):
    if scope["type"] == "websocket":
        while True:
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
            elif message["type"] == "websocket.disconnect":
                return
    elif scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
