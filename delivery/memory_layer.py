"""channels' in-memory channel layer (one process, no Redis) as the delivery uses it: without three costs it pays per
message (delivery/adapters/channels.py: the expiry walk at most once a second, members sent to in turn, shallow
copies, a backlog in one read), and handing a message straight to an idle consumer (take-now, delivery/take_now.py).

With a thread's events sent as one pre-serialised string to each of its sockets, channels' own costs were most of the
layer's CPU while many streams run (docs/performance.md, concurrency). What the layer does is unchanged: the same
expiry, capacity, ChannelFull and groups. Channels' own layer, measured again in its place, delivered tokens seconds
late beside fifty streams (docs/performance.md, "Library reach-ins measured again", piece 7).
"""

from __future__ import annotations

from delivery.adapters import channels
from delivery.take_now import TakesNow


class InMemoryChannelLayer(TakesNow, channels.InMemoryChannelLayer):
    """The layer of agentweb/settings.py's CHANNEL_LAYERS without Redis."""
