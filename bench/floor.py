"""The floor: a bare httpx reader of the same stream the app relays, in its own process.

It does the least any reader must: POST the request, read the chunked body with httpx, cut SSE events,
json-decode each, and read the stamps of the text (bench/tokens.py). What the app adds on top of this
(database, agent loop, coalescing, channel layer, websocket) is what the benchmarks are about.

    python -m bench.floor --base-url http://127.0.0.1:PORT --spec '{"tokens": 1000}' [--streams N] [--repeat R]

prints one JSON line: per stream (or the merged streams) tokens, seconds, tokens/s, CPU seconds of this
process while reading, latency samples (µs) summarised, first-token latencies, and the time from calling
httpx to the server having the request (from the server's /_log).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid

import httpx

from .common import summary_ms
from .tokens import STAMP_RE, Spec, latency_us


async def read_stream(client: httpx.AsyncClient, base_url: str, spec: Spec) -> dict:
    body = {
        "model": "bench",
        "messages": [{"role": "system", "content": "floor"}, {"role": "user", "content": spec.message()}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    seqs: list[int] = []
    latencies: list[int] = []
    first_recv_us = last_recv_us = None
    t_call = time.time_ns()
    async with client.stream("POST", f"{base_url}/v1/chat/completions", json=body) as response:
        response.raise_for_status()
        buffer = b""
        async for data in response.aiter_bytes():
            received = time.time_ns() // 1000
            buffer += data
            *events, buffer = buffer.split(b"\n\n")
            for event in events:
                if not event.startswith(b"data: ") or event == b"data: [DONE]":
                    continue
                chunk = json.loads(event[6:])
                for choice in chunk.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if not text:
                        continue
                    for s, t in STAMP_RE.findall(text):
                        seqs.append(int(s, 36))
                        latencies.append(latency_us(t, received))
                        if first_recv_us is None:
                            first_recv_us = received
                        last_recv_us = received
    return {
        "id": spec.id,
        "t_call": t_call,
        "seqs": seqs,
        "latencies": latencies,
        "first_recv_us": first_recv_us,
        "last_recv_us": last_recv_us,
    }


async def server_log(client: httpx.AsyncClient, base_url: str, spec_id: str) -> dict:
    records = (await client.get(f"{base_url}/_log", params={"id": spec_id})).json()
    return records[-1] if records else {}


async def measure(base_url: str, spec: Spec, streams: int, repeat: int) -> dict:
    limits = httpx.Limits(max_connections=max(streams, 10), max_keepalive_connections=max(streams, 10))
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0), limits=limits) as client:
        # One small stream first, so the connection pool and the code paths are warm, as the app's are.
        await read_stream(client, base_url, Spec(id=f"floor-warm-{uuid.uuid4().hex[:8]}", tokens=10))
        runs = []
        for _ in range(repeat):
            specs = [Spec(**{**spec.__dict__, "id": f"floor-{uuid.uuid4().hex[:12]}"}) for _ in range(streams)]
            cpu0, wall0 = time.process_time(), time.perf_counter()
            results = await asyncio.gather(*(read_stream(client, base_url, s) for s in specs))
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            logs = [await server_log(client, base_url, s.id) for s in specs]
            runs.append(summarise(spec, results, logs, cpu, wall))
    return {"runs": runs}


def summarise(spec: Spec, results: list[dict], logs: list[dict], cpu: float, wall: float) -> dict:
    tokens = sum(len(r["seqs"]) for r in results)
    latencies = [lat for r in results for lat in r["latencies"]]
    lost = sum(spec.tokens - len(set(r["seqs"])) for r in results) if spec.kind == "stamp" else None
    spans = []
    first_token = []
    request_send = []
    end_lag = []
    for result, log in zip(results, logs, strict=True):
        if log.get("t_first_token") and result["last_recv_us"]:
            spans.append(result["last_recv_us"] - log["t_first_token"] / 1000)
            first_token.append(result["first_recv_us"] - log["t_first_token"] / 1000)
            end_lag.append(result["last_recv_us"] - log["t_last_token"] / 1000)
        if log.get("t_request"):
            request_send.append((log["t_request"] - result["t_call"]) / 1000)
    span = max(spans) if spans else wall * 1e6
    return {
        "tokens": tokens,
        "lost": lost,
        "seconds": span / 1e6,
        "tokens_per_s": tokens / (span / 1e6) if span else None,
        "cpu_s": cpu,
        "wall_s": wall,
        "cpu_us_per_token": cpu * 1e6 / tokens if tokens else None,
        "cpu_share": cpu / wall if wall else None,
        "latency_ms": summary_ms(latencies),
        "first_token_us": first_token,
        "request_send_us": request_send,
        "end_lag_us": end_lag,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A bare httpx reader of a bench stream (the floor).")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--spec", default="{}", help="JSON fields of bench.tokens.Spec")
    parser.add_argument("--streams", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    spec = Spec(**json.loads(args.spec))
    print(json.dumps(asyncio.run(measure(args.base_url, spec, args.streams, args.repeat))))


if __name__ == "__main__":
    main()
