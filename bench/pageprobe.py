"""Fetch one page over and over and time each response: the 'an HTTP page meanwhile' of the concurrency
benchmark, in its own process so the measuring client's own work does not inflate it.

    python -m bench.pageprobe --url http://127.0.0.1:PORT/ --cookie 'sessionid=…' --seconds 10 [--interval 0.1]

prints one JSON line: {"latencies_ms": [...], "sent_ns": [...], "statuses": {...}, "bytes": n}, where sent_ns is
each request's time.time_ns() when it was sent (to place it against the streams' own times).
"""

from __future__ import annotations

import argparse
import json
import signal
import time

import httpx


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--cookie", default="")
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args(argv)
    # SIGTERM ends the probe early with what it has (a bench that cannot know how long to probe stops it so).
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(True))
    latencies, sent_ns, statuses, size = [], [], {}, 0
    with httpx.Client(headers={"Cookie": args.cookie}, timeout=30) as client:
        client.get(args.url)  # a warm connection, as a browser's would be
        end = time.perf_counter() + args.seconds
        while time.perf_counter() < end and not stopped:
            started = time.perf_counter()
            sent_ns.append(time.time_ns())
            response = client.get(args.url)
            latencies.append((time.perf_counter() - started) * 1000)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            size = len(response.content)
            if not stopped:
                time.sleep(max(0.0, args.interval - (time.perf_counter() - started)))
    print(json.dumps({"latencies_ms": latencies, "sent_ns": sent_ns, "statuses": statuses, "bytes": size}))


if __name__ == "__main__":
    main()
