"""An asyncio Redis client whose connections pack their commands with hiredis.

redis-py parses replies with hiredis when it is installed, and its synchronous connections pack commands with it
too (redis.connection.HiredisRespSerializer), but its asyncio connections pack every argument in Python. The run
worker sends one script call per frame of every stream it runs, about 15 arguments each: beside 200 streams that
packing was a fifth of what the worker spent on a frame (docs/performance.md, P29). Here the connections of the
client are redis-py's own, of the class the URL asks for (plain, TLS or a Unix socket), packing with redis-py's
own hiredis serializer.
"""

from __future__ import annotations

import functools

from redis.asyncio import Redis
from redis.connection import HiredisRespSerializer
from redis.utils import HIREDIS_AVAILABLE


def client(url: str) -> Redis:
    """`Redis.from_url(url)`, its commands packed by hiredis when hiredis is installed (requirements.txt has it)."""
    found = Redis.from_url(url)
    if HIREDIS_AVAILABLE:
        pool = found.connection_pool
        pool.connection_class = packing_with_hiredis(pool.connection_class)
    return found


@functools.cache
def packing_with_hiredis(connection_class: type) -> type:
    """`connection_class`, its `pack_command` hiredis's."""
    serializer = HiredisRespSerializer()

    def pack_command(self, *args) -> list[bytes]:
        return serializer.pack(*args)

    return type(f"Hiredis{connection_class.__name__}", (connection_class,), {"pack_command": pack_command})
