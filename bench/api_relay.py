"""api-relay: one stream through the OpenAI-compatible endpoint (POST /v1/chat/completions, streamed) against the
same stream through the chat's websocket, in the same run: tokens/s unpaced, and the first token's way from the
model server to the reader (docs/api.md). Issue 38's targets: at least 0.8 of the websocket's tokens/s, and at
most 2 ms more to the first token."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import time

import httpx

from .app import BenchApp, Client, new_id, server_log
from .common import Result, median
from .relay import one_stream
from .tokens import Spec, decode


def api_key(app: BenchApp) -> str:
    """A key of the bench's first user, made in the bench's own Django (set up on the app's database)."""
    from django.contrib.auth import get_user_model
    from django.db import connections

    from api.models import ApiKey

    _, key = ApiKey.issue(get_user_model().objects.get(pk=app.users[0][0]), "bench")
    connections.close_all()
    return key


async def api_stream(app: BenchApp, http: httpx.AsyncClient, key: str, spec: Spec) -> dict:
    """One streamed completion: (time received, text) of each content chunk, read as an OpenAI client reads them."""
    body = {"model": "model:default", "messages": [{"role": "user", "content": spec.message()}], "stream": True}
    pieces: list[tuple[int, str]] = []
    headers = {"Authorization": f"Bearer {key}"}
    async with http.stream("POST", f"{app.daphne.url}/v1/chat/completions", json=body, headers=headers) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if "error" in chunk:
                raise RuntimeError(f"the API ended the stream with an error: {chunk['error']}")
            for choice in chunk.get("choices") or ():
                text = (choice.get("delta") or {}).get("content")
                if text:
                    pieces.append((time.time_ns(), text))
    log = next((r for r in await server_log(app.model_url, spec.id) if r.get("t_first_token")), {})
    seqs = [seq for t, text in pieces for seq, _ in decode(text, t // 1000)]
    span_s = (pieces[-1][0] - log["t_first_token"]) / 1e9 if pieces and log else None
    return {
        "tokens": len(seqs),
        "lost": spec.tokens - len(set(seqs)),
        "duplicates": len(seqs) - len(set(seqs)),
        "chunks": len(pieces),
        "tokens_per_s": len(seqs) / span_s if span_s else None,
        "first_token_us": (pieces[0][0] - log["t_first_token"]) / 1000 if pieces and log else None,
    }


async def api_relay(app: BenchApp, result: Result, smoke: bool) -> None:
    if importlib.util.find_spec("api.openai_views") is None:
        result.error = "this version of the app has no API (/v1)"
        return
    tokens, repeat, samples = (3_000, 1, 2) if smoke else (60_000, 3, 15)
    key = await asyncio.to_thread(api_key, app)
    ws_runs, api_runs, ws_first, api_first = [], [], [], []
    async with Client(app) as client, httpx.AsyncClient(timeout=300) as http:
        await client.turn(Spec(id=new_id("warm"), tokens=200))
        await api_stream(app, http, key, Spec(id=new_id("warm-api"), tokens=200))
        for _ in range(repeat):  # in turn, so that both meet the same machine
            ws = await one_stream(app, client, Spec(id=new_id("relay-ws"), tokens=tokens))
            ws.pop("latency_us")
            ws_runs.append(ws)
            api_runs.append(await api_stream(app, http, key, Spec(id=new_id("relay-api"), tokens=tokens)))
        for _ in range(samples):
            ws = await one_stream(app, client, Spec(id=new_id("first-ws"), tokens=20))
            ws_first.append(ws["first_token_us"])
            api_first.append(
                (await api_stream(app, http, key, Spec(id=new_id("first-api"), tokens=20)))["first_token_us"]
            )
    result.details.update(ws_runs=ws_runs, api_runs=api_runs, ws_first_us=ws_first, api_first_us=api_first)
    best_ws = max(r["tokens_per_s"] or 0 for r in ws_runs)
    best_api = max(r["tokens_per_s"] or 0 for r in api_runs)
    lost = sum(r["lost"] + r["duplicates"] for r in api_runs)
    result.add(
        "API tokens/s, one stream, unpaced",
        best_api,
        "tokens/s",
        target="≥ 0.8× the websocket's",
        floor=best_ws,
        passed=best_api >= 0.8 * best_ws and lost == 0,
        note=f"best of {repeat} each, in turn; floor: the websocket relay's"
        + (f"; {lost} tokens lost or repeated" if lost else ""),
    )
    api_ms, ws_ms = median(api_first) / 1000, median(ws_first) / 1000
    result.add(
        "API first-token latency (median)",
        api_ms,
        "ms",
        target="≤ the websocket's + 2 ms",
        floor=ws_ms,
        passed=api_ms - ws_ms <= 2,
        judged=api_ms - ws_ms,
        judged_as="added",
        note=f"median of {samples} each, in turn; floor: the websocket's first token",
    )
