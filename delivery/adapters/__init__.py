"""The delivery's adapters: the only modules of delivery/ that touch a library's internals, one module per library
(channels, channels_redis), each pinned in requirements.txt and checked by a contract test of its own
(tests/delivery/adapters/) that fails, naming the internal, when an upgrade changes it. The server's adapters
(Daphne, autobahn, Twisted, Django) are in agentweb/adapters/: the delivery does not import the project package.
"""
