"""delivery/adapters/channels.py's contract with channels: the in-memory layer's internals, AsyncConsumer's set-up."""

import inspect

from tests.support.library_contracts import at_its_pin, calls, has_method, sets_in_init


def test_channels_is_installed_at_its_pin():
    at_its_pin("channels")


def test_the_in_memory_layers_internals():
    from channels.layers import BaseChannelLayer, InMemoryChannelLayer

    # The adapter throttles the expiry walk and sends without a task per member.
    has_method(InMemoryChannelLayer, "_clean_expired")
    has_method(InMemoryChannelLayer, "receive", "channel")
    has_method(InMemoryChannelLayer, "get_capacity", "channel")
    sets_in_init(InMemoryChannelLayer, "channels", "groups")
    sets_in_init(BaseChannelLayer, "expiry")
    calls(InMemoryChannelLayer, "receive", "_clean_expired", "self.channels")
    # A queue's items are (expiry, message): the adapter puts and takes them so.
    assert "time.time() + self.expiry" in inspect.getsource(InMemoryChannelLayer.send), (
        "InMemoryChannelLayer.send no longer queues (expiry, message)"
    )


def test_what_async_consumer_call_sets_up():
    from channels.consumer import AsyncConsumer

    # delivery/dispatch.py replaces AsyncConsumer.__call__: the attributes it sets are those channels' handlers read.
    source = inspect.getsource(AsyncConsumer.__call__)
    for name in ("scope", "channel_layer_alias", "channel_receive", "base_send", "channel_name", "channel_layer"):
        assert name in source, f"AsyncConsumer.__call__ no longer sets {name}"
    has_method(AsyncConsumer, "dispatch", "message")
