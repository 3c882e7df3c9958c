"""delivery/adapters/channels_redis.py's contract with channels_redis (and redis-py): the layer's reads, its
storage format, which the adapter's scripts write."""

import inspect

from tests.support.library_contracts import at_its_pin, calls, has_method, sets_in_init


def test_channels_redis_and_redis_py_are_installed_at_their_pins():
    at_its_pin("channels-redis")
    at_its_pin("redis")


def test_the_layers_reads():
    from channels_redis.core import RedisChannelLayer

    has_method(RedisChannelLayer, "receive_single", "channel")
    has_method(RedisChannelLayer, "consistent_hash", "value")
    has_method(RedisChannelLayer, "connection", "index")
    has_method(RedisChannelLayer, "serialize", "message")
    has_method(RedisChannelLayer, "deserialize", "message")
    has_method(RedisChannelLayer, "non_local_name", "name")
    has_method(RedisChannelLayer, "new_channel", "prefix")
    sets_in_init(RedisChannelLayer, "receive_buffer", "group_expiry", "prefix", "hosts", "expiry", "capacity")
    assert isinstance(RedisChannelLayer.brpop_timeout, int | float), "RedisChannelLayer.brpop_timeout is gone"
    # The reader fills receive_buffer, whose queues receive() waits on.
    calls(RedisChannelLayer, "receive", "receive_buffer")


def test_the_storage_format():
    """A process's messages: a sorted set keyed prefix + channel, each member a random prefix of
    `random_prefix_length` bytes then the msgpack of the message, `__asgi_channel__` naming its channel
    (the adapter's DELIVER_LUA writes members so)."""
    import msgpack
    from channels_redis.core import RedisChannelLayer

    layer = RedisChannelLayer(hosts=["redis://127.0.0.1:6379/0"])
    packed = layer.serialize({"type": "x", "__asgi_channel__": "c"})
    assert msgpack.unpackb(packed[12:]) == {"type": "x", "__asgi_channel__": "c"}, "serialize's layout changed"
    assert layer.deserialize(packed) == {"type": "x", "__asgi_channel__": "c"}
    for name in ("zadd", "bzpopmin", "zremrangebyscore"):
        assert name in inspect.getsource(RedisChannelLayer).lower(), f"channels_redis no longer uses {name}"
    # A group's set: its key as the adapter's group_key makes it, its members scored by the time they joined.
    assert layer._group_key("g") == b"asgi:group:g", "channels_redis's RedisChannelLayer._group_key changed"
    calls(RedisChannelLayer, "group_add", "zadd", "time.time()")


def test_redis_py_has_the_commands_the_reads_use():
    from redis.asyncio import Redis

    has_method(Redis, "bzmpop", "timeout", "numkeys", "keys", "min", "count")
    has_method(Redis, "zpopmin", "name", "count")
