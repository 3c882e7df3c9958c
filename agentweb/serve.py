"""Daphne as agentweb needs it: `python -m agentweb.serve [daphne's options] agentweb.asgi:application`.

Daphne refuses to send (and receive) a websocket message over 1 MiB by default and closes the socket with
1011 instead. A thread's snapshot carries the whole conversation and `message.completed` a whole answer,
so a long thread could then never be opened again. Incoming frames stay small all the same: the consumer
refuses any over AGENTWEB_MAX_FRAME_BYTES (256 KiB) before parsing it.
"""

from __future__ import annotations

import sys

from daphne.cli import CommandLineInterface

WEBSOCKET_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


def daphne_arguments(argv: list[str]) -> list[str]:
    """`argv`, with agentweb's message size limit unless one is given."""
    if any(arg.startswith("--websocket-max-message-size") for arg in argv):
        return list(argv)
    return ["--websocket-max-message-size", str(WEBSOCKET_MAX_MESSAGE_BYTES), *argv]


def interrupt_runs_on_stop() -> None:
    """On a clean stop (SIGTERM, SIGINT) the runs streaming here write what they have and become interrupted before
    the process exits (chat/runs.py interrupt_live_runs); Twisted waits for it before it stops the event loop."""
    import asyncio

    from twisted.internet import defer, reactor

    def interrupt():
        from chat.runs import interrupt_live_runs

        return defer.Deferred.fromFuture(asyncio.ensure_future(interrupt_live_runs()))

    reactor.addSystemEventTrigger("before", "shutdown", interrupt)


def main(argv: list[str] | None = None) -> None:
    interrupt_runs_on_stop()
    CommandLineInterface().run(daphne_arguments(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
