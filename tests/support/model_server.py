"""A real local HTTP server that answers like a model server, from a script: OpenAI-compatible chat completions,
the Anthropic Messages API and Ollama's native /api/chat.

Tests talk to it over real sockets, so the provider's whole HTTP path runs; nothing is patched.

    with ScriptedModelServer() as server:
        server.enqueue(SSEResponse(openai_sse_body(text="Hello")))
        provider = OpenAIProvider(base_url=server.base_url, model="m")
        ...
        assert server.requests[0]["json"]["model"] == "m"

Every POST to /v1/chat/completions (OpenAI, base URL `server.base_url`), /v1/messages (Anthropic) or
/api/chat (Ollama; both with base URL `server.root_url`) pops the next scripted response from one queue
(none left: a 500 with a JSON error "script exhausted"). A request whose history holds a tool call with arguments
that are not a JSON object is refused as the real servers refuse it (`refused_history`: llama-server's 500,
Anthropic's and Ollama's 400), without taking a response from the queue. Requests are recorded as {"method", "path",
"headers", "json"}, and so is a `GET /props` answered with `server.props` (llama-server's settings; None: 404, as
other servers); `GET /_requests` returns them as JSON for a test in another process, and `POST /_script`
with a JSON list of CLI script entries (below) queues more responses.

Response kinds:
- `SSEResponse(body, pieces=None, delay=0.001, status=200, headers={})` — an event-stream body (str or bytes).
  With `pieces`, those byte chunks are written instead of `body`, one write each, `delay` seconds apart, on
  a TCP_NODELAY socket, so the client really receives the splits. `SSEResponse.split(body, seed)` cuts a
  body at random byte offsets (inside UTF-8 characters and `data:` lines too).
- `ErrorResponse(status, body, headers={})` — a complete response with Content-Length, meant for HTTP errors
  (any status works, e.g. a 200 JSON body where a stream was expected); `body` is a dict (sent as JSON), str
  or bytes (sent as text/plain); headers e.g. {"Retry-After": "1"}.
- `EchoRequest(status=502)` — an error whose plain-text body echoes the request line and every header as
  received (Authorization included), as some proxies answer a request they refuse.
- `Hang(prelude=b"", status=200, content_type=...)` — sends the headers and `prelude`, then nothing until the
  server stops (the client may give up first): for read-timeout tests.
- `NDJSONResponse(...)` — like SSEResponse, with Content-Type application/x-ndjson (Ollama).
- Faults: `SSEResponse(..., reset=True)` writes its pieces, then resets the connection (TCP RST) instead of
  closing it: the client sees the connection break mid-answer. `Disconnect()` reads the request and closes
  the connection without answering anything.
Streams are sent with `Connection: close` and no Content-Length (written, then closed), as model servers do.

`openai_sse_body(...)`, `anthropic_sse_body(...)` and `ollama_ndjson_body(...)` build realistic bodies.
`server.carried(i)` says what request i asked of the model in any of the three formats (tools, structured-answer
options, system text, messages).

CLI for end-to-end tests in another process:

    python -m tests.support.model_server --script responses.json [--port 0]

The script is a JSON list; each entry is one response:
    {"text": "...", "tool_calls": [{"id", "name", "arguments"}], "finish_reason": ..., "usage": {...},
     "delay_ms": per-chunk delay}                               → an OpenAI stream (see openai_sse_body)
    {"status": 500, "body": {...} or "...", "headers": {...}}   → an HTTP error
    {"echo": true, "status": 502}                              → EchoRequest()
    {"hang": true, "text": "..."?}                              → Hang(), after that text when given
    {"disconnect": true}                                        → Disconnect()
An entry with "format": "anthropic" (stop_reason, usage {input_tokens, output_tokens}) or "format": "ollama"
(done_reason, usage {prompt_eval_count, eval_count}) gets that API's stream instead of OpenAI's.
The first line on stdout is `PORT <n>` (flushed); it serves until killed.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPLETIONS_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
OLLAMA_PATH = "/api/chat"
ROUTES = frozenset({COMPLETIONS_PATH, ANTHROPIC_PATH, OLLAMA_PATH})


@dataclass
class SSEResponse:
    body: str | bytes = b""
    pieces: list[bytes] | None = None
    delay: float = 0.001
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    #: After the last piece, reset the connection (TCP RST) instead of closing it cleanly.
    reset: bool = False

    @classmethod
    def split(cls, body: str | bytes, seed: int, max_piece: int = 64, **kwargs: Any) -> SSEResponse:
        """`body` cut at random byte offsets, pieces of 1..max_piece bytes, reproducible by `seed`."""
        data = body.encode() if isinstance(body, str) else body
        rng = random.Random(seed)
        pieces, start = [], 0
        while start < len(data):
            end = start + rng.randint(1, max_piece)
            pieces.append(data[start:end])
            start = end
        return cls(body=data, pieces=pieces, **kwargs)


@dataclass
class NDJSONResponse(SSEResponse):
    """A newline-delimited JSON stream, as Ollama's /api/chat sends it."""

    content_type: str = "application/x-ndjson"


@dataclass
class ErrorResponse:
    status: int
    body: dict[str, Any] | str | bytes = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class EchoRequest:
    """An error answering with the request's line and headers as its plain-text body."""

    status: int = 502


@dataclass
class Hang:
    prelude: bytes = b""
    status: int = 200
    content_type: str = "text/event-stream"


@dataclass
class Disconnect:
    """Read the request, then close the connection without a response."""


Response = SSEResponse | ErrorResponse | EchoRequest | Hang | Disconnect


def openai_sse_body(
    text: str = "",
    tool_calls: list[dict] | None = None,
    finish_reason: str | None = None,
    usage: dict | None = None,
    chunk_text: int = 3,
) -> str:
    """An OpenAI chat-completions stream as api.openai.com sends it.

    `tool_calls`: [{"id", "name", "arguments"}], arguments as a JSON string (a dict is dumped); each call
    streams as a start fragment (id, name, arguments "") and then argument fragments. `text` and arguments
    are cut into pieces of `chunk_text` characters. finish_reason defaults to "tool_calls"/"stop";
    usage defaults to made-up counts, since the real API sends it whenever include_usage is asked; False sends none.
    """
    tool_calls = tool_calls or []
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": None if tool_calls and not text else ""}]
    deltas += [{"content": piece} for piece in _cut(text, chunk_text)]
    for index, call in enumerate(tool_calls):
        arguments = call.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        start = {"index": index, "id": call.get("id") or f"call_{index}", "type": "function"}
        start["function"] = {"name": call["name"], "arguments": ""}
        deltas.append({"tool_calls": [start]})
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": p}}]} for p in _cut(arguments, chunk_text)
        ]
    chunks = [_chunk([{"index": 0, "delta": d, "logprobs": None, "finish_reason": None}]) for d in deltas]
    reason = finish_reason or ("tool_calls" if tool_calls else "stop")
    chunks.append(_chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}]))
    if usage is None:
        usage = {"prompt_tokens": 10, "completion_tokens": len(deltas), "total_tokens": 10 + len(deltas)}
    if usage is not False:  # False: no usage chunk, as a server that was not asked (or ignores it) sends
        chunks.append(_chunk([], usage=usage))
    return "".join(f"data: {c}\n\n" for c in chunks) + "data: [DONE]\n\n"


def _cut(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(size, 1))]


def _chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
    chunk = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1727346178,
        "model": "scripted-model",
        "system_fingerprint": "fp_scripted",
        "choices": choices,
        **extra,
    }
    return json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))


def anthropic_sse_body(
    text: str = "",
    tool_calls: list[dict] | None = None,
    stop_reason: str | None = None,
    usage: dict | None = None,
    thinking: str = "",
    chunk_text: int = 3,
) -> str:
    """An Anthropic Messages stream as api.anthropic.com sends it.

    Blocks in order: `thinking` (if any), `text` (if any), one tool_use block per call
    ({"id", "name", "arguments"}, arguments a JSON string or a dict), each argument text streamed as
    input_json_delta pieces of `chunk_text` characters after an empty first one, as the API does.
    stop_reason defaults to "tool_use"/"end_turn". With stop_reason "max_tokens" the last tool block gets
    no content_block_stop, as when the model is cut off while writing it (pass its arguments cut short).
    usage: {"input_tokens", "output_tokens"}, made up when not given; False sends none.
    """
    tool_calls = tool_calls or []
    counted = usage is not False  # False: no usage anywhere, as some proxies send it
    usage = usage or {}
    events: list[tuple[str, dict[str, Any]]] = []
    message = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": "scripted-model",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage.get("input_tokens", 10), "output_tokens": 1},
    }
    if not counted:
        del message["usage"]
    events.append(("message_start", {"type": "message_start", "message": message}))
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _cut(thinking, chunk_text)]
        blocks.append(
            ({"type": "thinking", "thinking": ""}, [*deltas, {"type": "signature_delta", "signature": "c2ln"}])
        )
    if text:
        blocks.append(
            ({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _cut(text, chunk_text)])
        )
    for number, call in enumerate(tool_calls):
        arguments = call.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        start = {"type": "tool_use", "id": call.get("id") or f"toolu_{number}", "name": call["name"], "input": {}}
        pieces = ["", *_cut(arguments, chunk_text)]
        blocks.append((start, [{"type": "input_json_delta", "partial_json": p} for p in pieces]))
    reason = stop_reason or ("tool_use" if tool_calls else "end_turn")
    for index, (block, deltas) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        cut_off = reason == "max_tokens" and block["type"] == "tool_use" and index == len(blocks) - 1
        if not cut_off:
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    output = usage.get("output_tokens", sum(len(d) for _, d in blocks))
    delta = {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None}}
    events.append(("message_delta", {**delta, "usage": {"output_tokens": output}} if counted else delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {_compact(payload)}\n\n" for name, payload in events)


def ollama_ndjson_body(
    text: str = "",
    tool_calls: list[dict] | None = None,
    done_reason: str | None = None,
    usage: dict | None = None,
    thinking: str = "",
    load: bool = False,
    chunk_text: int = 3,
) -> str:
    """An Ollama /api/chat stream: one JSON object per line, the last one with done: true and the counts.

    `tool_calls`: [{"name", "arguments"}], arguments a dict (as Ollama sends them) or a string; they all come
    in one chunk, without ids. `load` puts the done_reason "load" chunk Ollama sends when it had to load the
    model first. usage: {"prompt_eval_count", "eval_count"}, made up when not given; False sends none.
    """
    counted = usage is not False  # False: a last line without the counts
    usage = usage or {}
    lines: list[dict[str, Any]] = []

    def chunk(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        created = "2025-01-01T00:00:00.000000000Z"
        return {"model": "scripted-model", "created_at": created, "message": {"role": "assistant", **message}, **extra}

    if load:
        lines.append(chunk({"content": ""}, done=True, done_reason="load"))
    lines += [chunk({"content": "", "thinking": p}, done=False) for p in _cut(thinking, chunk_text)]
    lines += [chunk({"content": p}, done=False) for p in _cut(text, chunk_text)]
    if tool_calls:
        wire = [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in tool_calls]
        lines.append(chunk({"content": "", "tool_calls": wire}, done=False))
    counts = {
        "prompt_eval_count": usage.get("prompt_eval_count", 10),
        "eval_count": usage.get("eval_count", len(lines)),
    }
    if not counted:
        counts = {}
    final = chunk({"content": ""}, done=True, done_reason=done_reason or "stop", total_duration=1000, **counts)
    lines.append(final)
    return "".join(_compact(line) + "\n" for line in lines)


def _compact(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def response_from_script(entry: dict[str, Any]) -> Response:
    """One entry of a CLI script file (see the module docstring) as a response."""
    if entry.get("hang"):
        # With "text": that much of an OpenAI stream first, then silence (a model stalled mid-answer).
        prelude = b""
        if entry.get("text"):
            chunk = {"choices": [{"index": 0, "delta": {"content": entry["text"]}}]}
            prelude = f"data: {_compact(chunk)}\n\n".encode()
        return Hang(prelude=prelude)
    if entry.get("disconnect"):
        return Disconnect()
    if entry.get("echo"):
        return EchoRequest(entry.get("status", 502))
    if "status" in entry and entry["status"] >= 400:
        return ErrorResponse(entry["status"], entry.get("body", {}), entry.get("headers", {}))
    text, tool_calls, usage = entry.get("text", ""), entry.get("tool_calls"), entry.get("usage")
    kind = entry.get("format", "openai")
    if kind == "ollama":
        body = ollama_ndjson_body(text=text, tool_calls=tool_calls, done_reason=entry.get("done_reason"), usage=usage)
        # One piece per line, so the delay is per chunk as a slow model would stream it.
        pieces = [(line + "\n").encode() for line in body.splitlines()]
        response: SSEResponse = NDJSONResponse(body)
    else:
        if kind == "anthropic":
            body = anthropic_sse_body(
                text=text, tool_calls=tool_calls, stop_reason=entry.get("stop_reason"), usage=usage
            )
        else:
            body = openai_sse_body(
                text=text, tool_calls=tool_calls, finish_reason=entry.get("finish_reason"), usage=usage
            )
        pieces = [(event + "\n\n").encode() for event in body.split("\n\n") if event]
        response = SSEResponse(body)
    delay_ms = entry.get("delay_ms")
    if delay_ms:
        response.pieces, response.delay = pieces, delay_ms / 1000
    return response


class ScriptedModelServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._responses: deque[Response] = deque()
        self._requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer((host, port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None
        #: What `GET /props` answers, as llama-server says its settings there ({"default_generation_settings":
        #: {"n_ctx": …}}); None: 404, as other servers.
        self.props: dict[str, Any] | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def root_url(self) -> str:
        """The base URL for the Anthropic and Ollama providers (they add /v1/messages and /api/chat)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The base URL for the OpenAI-compatible provider."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    def carried(self, index: int = -1) -> dict[str, Any]:
        """What request `index` asked of the model, in any of the three wire formats: the tools offered (names), a
        structured answer's option (`response_format` OpenAI, `format` Ollama, `tool_choice`), the system text and
        the other messages' texts (a block list joined), in order."""
        body = self.requests[index]["json"]
        tools = [t.get("name") or (t.get("function") or {}).get("name") for t in body.get("tools") or ()]
        system = body.get("system") or ""
        texts: list[tuple[str, str]] = []
        for message in body.get("messages") or ():
            content = message.get("content")
            if isinstance(content, list):
                content = "\n".join(str(b.get("text") or b.get("content") or "") for b in content)
            if message.get("role") == "system":
                system = f"{system}\n\n{content}" if system else content or ""
            else:
                texts.append((message.get("role"), content or ""))
        return {
            "path": self.requests[index]["path"],
            "tools": tools,
            "response_format": body.get("response_format"),
            "format": body.get("format"),
            "tool_choice": body.get("tool_choice"),
            "system": system,
            "messages": texts,
        }

    def enqueue(self, *responses: Response) -> None:
        with self._lock:
            self._responses.extend(responses)

    def start(self) -> ScriptedModelServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="scripted-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases handlers that Hang
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- used by the handler --------------------------------------------------------

    def _record(self, request: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_response(self) -> Response | None:
        with self._lock:
            return self._responses.popleft() if self._responses else None


def refused_history(path: str, body: Any) -> tuple[int, dict[str, Any]] | None:
    """The error a real server answers a history with a tool call whose arguments are not a JSON object:
    llama-server's 500, the Anthropic API's and Ollama's 400. None: the history is accepted."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for n, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        if path == ANTHROPIC_PATH and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_use" and not isinstance(block.get("input"), dict):
                    error = f"messages.{n}.content.tool_use.input: Input should be a valid dictionary"
                    return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": error}}
        for call in message.get("tool_calls") or ():
            arguments = (call.get("function") or {}).get("arguments")
            if path == OLLAMA_PATH and not isinstance(arguments, dict):
                return 400, {"error": "json: cannot unmarshal string into Go struct field of type api.ToolCallFunction"}
            if path == COMPLETIONS_PATH:
                try:
                    decoded = json.loads(arguments)
                except (TypeError, ValueError):
                    decoded = None
                if not isinstance(decoded, dict):
                    error = "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101]"
                    return 500, {"error": {"code": 500, "message": error, "type": "server_error"}}
    return None


def _make_handler(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        scripted = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scripted: ScriptedModelServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        if self.path == "/_requests":
            self._send_json(200, self.scripted.requests)
        elif self.path == "/props" and self.scripted.props is not None:
            self.scripted._record({"method": "GET", "path": self.path, "headers": dict(self.headers), "json": None})
            self._send_json(200, self.scripted.props)
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        if self.path == "/_script":  # more script entries, from a test in another process
            self.scripted.enqueue(*(response_from_script(entry) for entry in parsed or []))
            self._send_json(200, {"queued": len(parsed or [])})
            return
        self.scripted._record({"method": "POST", "path": self.path, "headers": dict(self.headers), "json": parsed})
        if self.path not in ROUTES:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        refused = refused_history(self.path, parsed)
        if refused is not None:  # as the real server would, before any answer of the script is taken
            self._send_json(*refused)
            return
        response = self.scripted._next_response()
        try:
            if response is None:
                self._send_json(500, {"error": {"message": "script exhausted", "type": "server_error"}})
            elif isinstance(response, ErrorResponse):
                self._send_error(response)
            elif isinstance(response, EchoRequest):
                echo = "".join(f"{name}: {value}\n" for name, value in self.headers.items())
                body = f"Upstream refused the request:\n{self.requestline}\n{echo}"
                self._send_error(ErrorResponse(response.status, body))
            elif isinstance(response, Hang):
                self._hang(response)
            elif isinstance(response, Disconnect):
                self.close_connection = True  # nothing written: the client sees the connection close
            else:
                self._send_stream(response)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (it saw [DONE] or gave up): nothing to do

    def _send_stream(self, response: SSEResponse) -> None:
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._start_stream(response.status, response.headers, response.content_type)
        body = response.body.encode() if isinstance(response.body, str) else response.body
        pieces = response.pieces if response.pieces is not None else [body]
        for i, piece in enumerate(pieces):
            if i and response.delay:
                time.sleep(response.delay)
            self.wfile.write(piece)
            self.wfile.flush()
        if response.reset:
            self._reset()

    def _reset(self) -> None:
        """Abort the connection: SO_LINGER 0 makes the close send a TCP RST instead of a FIN."""
        time.sleep(0.05)  # let the client read what was written: it must see those bytes, then the break
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.wfile.close()
        self.rfile.close()
        self.connection.close()

    def _hang(self, response: Hang) -> None:
        self._start_stream(response.status, {}, response.content_type)
        if response.prelude:
            self.wfile.write(response.prelude)
            self.wfile.flush()
        self.scripted._stopping.wait()

    def _start_stream(self, status: int, headers: dict[str, str], content_type: str = "text/event-stream") -> None:
        self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _send_error(self, response: ErrorResponse) -> None:
        if isinstance(response.body, dict):
            self._send_json(response.status, response.body, response.headers)
            return
        data = response.body.encode() if isinstance(response.body, str) else response.body
        self._send_bytes(response.status, data, "text/plain; charset=utf-8", response.headers)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers or {})

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve scripted OpenAI-compatible, Anthropic or Ollama responses.")
    parser.add_argument("--script", required=True, help="JSON file: a list of responses")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    server = ScriptedModelServer(port=args.port)
    server.enqueue(*(response_from_script(entry) for entry in script))
    print(f"PORT {server.port}", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
