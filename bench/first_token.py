"""first-token: how long the app takes from a `message.send` to the model request, and how much it adds to
the first token's way to the client.

The app cannot be instrumented from here (its code is not the bench's to edit), so both are measured from
outside on one shared clock (time.time_ns):

- message.send → model request: from the client's send to the bench model server having the whole request
  (its /_log), minus a floor made of what is not the app's doing: half the smallest websocket round trip of a
  `ping` on the same socket just before (the frame's way in) plus the median time a bare httpx client takes
  from calling `stream()` to the server having its request (the request's way out).
- first-token latency: from the server writing the first token to the client receiving the first
  `message.delta`, against the same figure of a bare httpx reader.

Each sample is one turn (20 tokens) in one thread that already has a few turns; the first turn after Daphne
starts is a warm-up and not counted. A few turns that create their thread are measured separately.
"""

from __future__ import annotations

from .app import BenchApp, Client, new_id, server_log
from .common import Result, median, percentile
from .relay import floor
from .tokens import Spec


async def sample(app: BenchApp, client: Client, thread: str | None) -> dict:
    rtt = await client.rtt_us(3)
    spec = Spec(id=new_id("first"), tokens=20)
    turn = await client.turn(spec, thread=thread)
    log = next(r for r in await server_log(app.model_url, spec.id) if r.get("t_first_token"))
    return {
        "thread": turn.thread,
        "rtt_us": rtt,
        "request_us": (log["t_request"] - turn.t_send_ns) / 1000,
        "first_token_us": (turn.first_delta_ns() - log["t_first_token"]) / 1000,
        "history_messages": log.get("messages"),
    }


async def first_token(app: BenchApp, result: Result, smoke: bool) -> None:
    count = 2 if smoke else 25
    fresh = 1 if smoke else 5
    async with Client(app) as client:
        warm = await client.turn(Spec(id=new_id("warm"), tokens=20))
        samples = [await sample(app, client, warm.thread) for _ in range(count)]
        new_threads = [await sample(app, client, None) for _ in range(fresh)]
    floors = floor(app, Spec(tokens=20), repeat=count)
    floor_request = median([r["request_send_us"][0] for r in floors])
    floor_first = median([r["first_token_us"][0] for r in floors])
    rtt = median([s["rtt_us"] for s in samples])
    request = [s["request_us"] for s in samples]
    first = [s["first_token_us"] for s in samples]
    result.details.update(
        samples=samples,
        new_thread_samples=new_threads,
        floor_request_send_us=[r["request_send_us"][0] for r in floors],
        floor_first_token_us=[r["first_token_us"][0] for r in floors],
        ws_rtt_median_us=rtt,
    )
    send_floor = rtt / 2 + floor_request
    req_ms = median(request) / 1000
    floor_ms = send_floor / 1000
    result.add(
        "message.send → model request (median)",
        req_ms,
        "ms",
        target="≤ 10 ms (measured − floor)",
        floor=floor_ms,
        passed=req_ms - floor_ms <= 10,
        judged=req_ms - floor_ms,
        judged_as="app",
        note=f"p90 {percentile(request, 90) / 1000:.1f} ms over {count} turns; floor = ½ ws RTT "
        f"{rtt / 2000:.2f} ms + httpx send {floor_request / 1000:.2f} ms",
    )
    fresh_ms = median([s["request_us"] for s in new_threads]) / 1000
    result.add(
        "message.send → model request, new thread",
        fresh_ms,
        "ms",
        floor=floor_ms,
        judged=fresh_ms - floor_ms,
        judged_as="app",
        note=f"median of {fresh} turns that create their thread (no target)",
    )
    first_ms = median(first) / 1000
    floor_first_ms = floor_first / 1000
    result.add(
        "first-token latency (median)",
        first_ms,
        "ms",
        target="added ≤ 1 ms",
        floor=floor_first_ms,
        passed=first_ms - floor_first_ms <= 1,
        judged=first_ms - floor_first_ms,
        judged_as="added",
        note=f"p90 {percentile(first, 90) / 1000:.2f} ms",
    )
