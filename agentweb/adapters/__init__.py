"""The server's adapters: the only modules of agentweb/ that touch a library's internals, one module per library
(daphne, autobahn, Twisted, Django), each pinned in requirements.txt and checked by a contract test of its own
(tests/agentweb/adapters/) that fails, naming the internal, when an upgrade changes it.

They are here, not in delivery/adapters/, because what they adapt is the server (Daphne's connections and timers,
the websocket's I/O, the HTTP channel's limits, Django's handler), which the delivery component does not know about;
delivery/adapters/ holds the channel layers' and the consumer's (channels, channels_redis). docs/architecture.md,
"Where the code relies on a library's internals", lists them with what each buys; tests/architecture/
test_library_internals.py fails on a library's underscore attribute read or written anywhere else.
"""
