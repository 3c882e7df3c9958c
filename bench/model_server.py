"""A fast OpenAI-compatible model server for benchmarks: asyncio on raw sockets, no framework.

POST /v1/chat/completions streams what the request's `bench {spec}` user message asks for (bench/tokens.py):
stamped tokens, unpaced (as fast as the reader takes them, with backpressure) or paced at `rate` tokens/s,
optionally after a step of tool calls. Each SSE event is its own HTTP chunk (Transfer-Encoding: chunked on a
keep-alive connection, as uvicorn-served vLLM does), or the body is close-delimited with `close: true`.
Events due at the same moment go out in one socket write but stay separate chunks, so the reader parses
each as a real server's.

GET /_log[?id=X] answers the requests seen (newest 10,000): their spec id, step, and the times (time.time_ns)
the request was complete, the first and last token were written and the response ended.

    python -m bench.model_server [--port 0]      # first stdout line: PORT <n>
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import socket
import sys
import time
from collections import deque
from urllib.parse import parse_qs, urlsplit

from .tokens import Spec, markdown_tokens, stamp, time_code

LOG: deque[dict] = deque(maxlen=10_000)

_CHUNK_HEAD = (
    '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1727346178,"model":"bench",'
    '"system_fingerprint":"fp_bench","choices":[{"index":0,"delta":'
)
_CHUNK_TAIL = ',"logprobs":null,"finish_reason":null}]}'


def sse(data: str) -> bytes:
    return f"data: {data}\n\n".encode()


def content_event(text_json: str) -> bytes:
    return sse(f'{_CHUNK_HEAD}{{"content":{text_json}}}{_CHUNK_TAIL}')


def frame(event: bytes, chunked: bool) -> bytes:
    return b"%x\r\n%s\r\n" % (len(event), event) if chunked else event


class Stream:
    """The token events of one answer, built as they are sent (each stamp carries its own send time)."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.markdown = (
            [json.dumps(t) if t is not None else None for t in markdown_tokens(spec.tokens, spec.stamp_every)]
            if spec.kind == "markdown"
            else None
        )

    def events(self, start: int, end: int, code: str) -> list[bytes]:
        out = []
        for seq in range(start, end):
            text = self.markdown[seq] if self.markdown is not None else None
            if text is None:
                # A stamp has no characters that need escaping in JSON but "§", which json allows raw.
                text = f'"{stamp(seq, code)}"'
            out.append(content_event(text))
        return out


def tool_call_events(count: int, tool: dict | None = None) -> list[bytes]:
    """`count` calculator calls, or calls of `tool` ({"name": …, "arguments": {…}}: a spec's `extra["tool"]`)."""
    events = [sse(f'{_CHUNK_HEAD}{{"role":"assistant","content":null}}{_CHUNK_TAIL}')]
    for index in range(count):
        start = {"index": index, "id": f"call_bench_{index}", "type": "function"}
        start["function"] = {"name": tool["name"] if tool else "calculator", "arguments": ""}
        events.append(sse(f"{_CHUNK_HEAD}{json.dumps({'tool_calls': [start]})}{_CHUNK_TAIL}"))
        pieces = (json.dumps(tool["arguments"]),) if tool else ('{"expression": "', f"{index + 2}*{index + 3}", '"}')
        for piece in pieces:
            fragment = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            events.append(sse(f"{_CHUNK_HEAD}{json.dumps(fragment)}{_CHUNK_TAIL}"))
    return events


def closing_events(reason: str, completion_tokens: int) -> list[bytes]:
    finish = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1727346178,
            "model": "bench",
            "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}],
        }
    )
    usage = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1727346178,
            "model": "bench",
            "choices": [],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": completion_tokens,
                "total_tokens": 10 + completion_tokens,
            },
        }
    )
    return [sse(finish), sse(usage), b"data: [DONE]\n\n"]


def turn_step(messages: list[dict]) -> tuple[Spec | None, int]:
    """The spec of the turn (its last user message) and how many model steps of the turn came before."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            spec = Spec.parse(content or "")
            step = sum(1 for m in messages[position + 1 :] if m.get("role") == "assistant")
            return spec, step
    return None, 0


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    return method, target, headers, body


async def respond_plain(writer: asyncio.StreamWriter, status: str, body: bytes, content_type: str) -> None:
    writer.write(
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    )
    await writer.drain()


async def stream_answer(writer: asyncio.StreamWriter, spec: Spec, step: int, record: dict) -> bool:
    """Write the answer; returns False when the connection must close afterwards."""
    chunked = not spec.close
    headers = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    headers += "Transfer-Encoding: chunked\r\n\r\n" if chunked else "Connection: close\r\n\r\n"
    writer.write(headers.encode())
    if spec.tools and step == 0:
        record["kind"] = "tool_calls"
        events = tool_call_events(spec.tools, spec.extra.get("tool")) + closing_events("tool_calls", 5 * spec.tools)
        record["t_first_token"] = time.time_ns()
        writer.write(b"".join(frame(e, chunked) for e in events))
    else:
        stream = Stream(spec)
        total = spec.tokens
        sent = 0
        if spec.rate > 0:
            start = time.perf_counter()
            while sent < total:
                due = min(total, math.floor((time.perf_counter() - start) * spec.rate) + 1)
                if due > sent:
                    now = time.time_ns()
                    record.setdefault("t_first_token", now)
                    writer.write(b"".join(frame(e, chunked) for e in stream.events(sent, due, time_code(now // 1000))))
                    sent = due
                    await writer.drain()
                    if sent >= total:
                        break
                delay = start + sent / spec.rate - time.perf_counter()
                await asyncio.sleep(max(delay, 0))
        else:
            batch = max(1, spec.batch)
            while sent < total:
                end = min(total, sent + batch)
                now = time.time_ns()
                record.setdefault("t_first_token", now)
                writer.write(b"".join(frame(e, chunked) for e in stream.events(sent, end, time_code(now // 1000))))
                sent = end
                await writer.drain()
        record["t_last_token"] = time.time_ns()
        writer.write(b"".join(frame(e, chunked) for e in closing_events("stop", total)))
    if chunked:
        writer.write(b"0\r\n\r\n")
    await writer.drain()
    record["t_done"] = time.time_ns()
    return chunked


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        while True:
            request = await read_request(reader)
            if request is None:
                return
            received = time.time_ns()
            method, target, _headers, body = request
            path = urlsplit(target).path
            if method == "GET" and path == "/_log":
                wanted = parse_qs(urlsplit(target).query).get("id", [None])[0]
                records = [r for r in LOG if wanted is None or r.get("id") == wanted]
                await respond_plain(writer, "200 OK", json.dumps(records).encode(), "application/json")
                continue
            if method != "POST" or not path.endswith("/chat/completions"):
                await respond_plain(writer, "404 Not Found", b'{"error": {"message": "not found"}}', "application/json")
                continue
            try:
                payload = json.loads(body)
            except ValueError:
                await respond_plain(
                    writer, "400 Bad Request", b'{"error": {"message": "bad json"}}', "application/json"
                )
                continue
            spec, step = turn_step(payload.get("messages") or [])
            spec = spec or Spec(tokens=20)
            record = {
                "id": spec.id,
                "step": step,
                "t_request": received,
                "messages": len(payload.get("messages") or []),
            }
            LOG.append(record)
            if not await stream_answer(writer, spec, step, record):
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def serve(port: int, ready=None) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=512)
    port = server.sockets[0].getsockname()[1]
    if ready is not None:
        ready(port)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fast OpenAI-compatible SSE server for benchmarks.")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)

    def ready(port: int) -> None:
        sys.stdout.write(f"PORT {port}\n")
        sys.stdout.flush()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, ready))


if __name__ == "__main__":
    main()
