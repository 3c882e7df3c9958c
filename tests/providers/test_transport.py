"""The model-stream transport against a real local server that writes exactly the bytes each test chooses:
bodies cut anywhere, kept-alive and closed connections, broken and silent servers, TLS, back-pressure."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import socket
import ssl

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.anthropic import AnthropicProvider
from providers.client import TRANSPORTS, new_http_client, proxies_in_environment
from providers.ollama import OllamaProvider
from providers.openai import OpenAIProvider
from providers.transport import HIGH_WATER, StreamingTransport
from providers.types import ChatMessage, TextDelta
from tests.support.model_server import anthropic_sse_body, ollama_ndjson_body, openai_sse_body


class RawServer:
    """An HTTP server that reads each request (head and body) and lets the test's `answer` write the reply."""

    def __init__(self, answer, tls: ssl.SSLContext | None = None):
        self.answer = answer
        self.tls = tls
        self.connections = 0
        self.requests: list[tuple[bytes, bytes]] = []
        self.writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        scheme = "https" if self.tls else "http"
        self.url = f"{scheme}://{'localhost' if self.tls else '127.0.0.1'}:{self.port}/v1/stream"
        return self

    async def __aexit__(self, *exc):
        for writer in self.writers:
            writer.close()
        self.server.close()
        await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                body = await self._read_body(reader, head)
                self.requests.append((head, body))
                if await self.answer(writer, len(self.requests)) == "close":
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, head: bytes) -> bytes:
        lines = head.lower().split(b"\r\n")
        if b"transfer-encoding: chunked" in lines:
            body = b""
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                body += (await reader.readexactly(size + 2))[:-2]
                if size == 0:
                    return body
        for line in lines:
            if line.startswith(b"content-length:"):
                return await reader.readexactly(int(line.split(b":")[1]))
        return b""


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


OK_CHUNKED = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
EVENTS = [b"data: one\n\n", b"data: two\n\n", b"data: three\n\n"]


def client(**kwargs) -> httpx.AsyncClient:
    timeout = kwargs.pop("timeout", httpx.Timeout(5.0))
    return httpx.AsyncClient(transport=StreamingTransport(**kwargs), timeout=timeout)


async def body_of(http: httpx.AsyncClient, url: str, **kwargs) -> tuple[httpx.Response, bytes]:
    async with http.stream("POST", url, json={"stream": True}, **kwargs) as response:
        return response, b"".join([piece async for piece in response.aiter_bytes()])


async def test_a_chunked_stream_arrives_whole_and_in_order():
    async def answer(writer, _):
        writer.write(OK_CHUNKED)
        for event in EVENTS:
            writer.write(chunked(event)[:-5])  # each event its own chunk, as a model server sends them
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")

    async with RawServer(answer) as server, client() as http:
        response, body = await body_of(http, server.url)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert body == b"".join(EVENTS)


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=12))
def test_a_response_cut_into_any_pieces_reads_the_same(cuts):
    payload = OK_CHUNKED + chunked(*EVENTS)
    points = sorted({c % len(payload) for c in cuts} - {0})
    pieces = [payload[a:b] for a, b in zip([0, *points], [*points, len(payload)], strict=True)]

    async def answer(writer, _):
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0)

    async def run():
        async with RawServer(answer) as server, client() as http:
            return await body_of(http, server.url)

    _, body = asyncio.run(run())
    assert body == b"".join(EVENTS)


async def test_a_body_with_a_content_length():
    async def answer(writer, _):
        writer.write(
            b'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 17\r\n\r\n{"error": "nope"}'
        )

    async with RawServer(answer) as server, client() as http:
        response, body = await body_of(http, server.url)
    assert (response.status_code, response.reason_phrase, body) == (400, "Bad Request", b'{"error": "nope"}')


async def test_a_body_that_ends_when_the_server_closes():
    async def answer(writer, _):
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + b"".join(EVENTS))
        return "close"

    async with RawServer(answer) as server, client() as http:
        _, body = await body_of(http, server.url)
    assert body == b"".join(EVENTS)


async def test_the_request_goes_out_as_sent():
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"ok"))

    async with RawServer(answer) as server, client() as http:
        await body_of(http, server.url + "?q=1", headers={"Authorization": "Bearer k"})
    head, body = server.requests[0]
    assert head.startswith(b"POST /v1/stream?q=1 HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Bearer k\r\n" in head
    assert f"\r\nHost: 127.0.0.1:{server.port}\r\n".encode() in head
    assert body == b'{"stream":true}'


async def test_a_streamed_request_body_is_sent_chunked():
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"ok"))

    async def parts():
        yield b'{"a": '
        yield b"1}"

    async with RawServer(answer) as server, client() as http, http.stream("POST", server.url, content=parts()) as got:
        await got.aread()
    assert server.requests[0][1] == b'{"a": 1}'


async def test_keep_alive_carries_the_next_request_on_the_same_connection():
    async def answer(writer, number):
        writer.write(OK_CHUNKED + chunked(b"answer %d" % number))

    async with RawServer(answer) as server, client() as http:
        bodies = [(await body_of(http, server.url))[1] for _ in range(3)]
    assert bodies == [b"answer 1", b"answer 2", b"answer 3"]
    assert server.connections == 1


@pytest.mark.parametrize("api", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_model_answer_read_to_its_end_leaves_the_connection_for_the_next_one(api, transport):
    # Model servers write the answer's last event, then the chunked body's last (empty) chunk in a write of
    # its own: a provider that stops at [DONE] (message_stop, done: true) must still read that chunk, or the
    # kept-alive connection cannot carry the next request.
    body = {"openai": openai_sse_body, "anthropic": anthropic_sse_body, "ollama": ollama_ndjson_body}[api]
    kind = b"application/x-ndjson" if api == "ollama" else b"text/event-stream"

    async def answer(writer, number):
        writer.write(
            OK_CHUNKED.replace(b"text/event-stream", kind) + chunked(body(text=f"answer {number}").encode())[:-5]
        )
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"0\r\n\r\n")

    async with RawServer(answer) as server, new_http_client(transport, timeout=httpx.Timeout(5.0)) as http:
        base = server.url.removesuffix("/v1/stream")
        cls = {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "ollama": OllamaProvider}[api]
        provider = cls(base_url=base + ("/v1" if api == "openai" else ""), model="m", client=http)
        texts = []
        for _ in range(2):
            events = [e async for e in provider.stream([ChatMessage(role="user", content="hi")], [])]
            texts.append("".join(e.text for e in events if isinstance(e, TextDelta)))
    assert texts == ["answer 1", "answer 2"]
    assert server.connections == 1


async def test_connection_close_is_honoured():
    async def answer(writer, number):
        writer.write(OK_CHUNKED.replace(b"\r\n\r\n", b"\r\nconnection: close\r\n\r\n") + chunked(b"a%d" % number))
        return "close"

    async with RawServer(answer) as server, client() as http:
        bodies = [(await body_of(http, server.url))[1] for _ in range(2)]
    assert bodies == [b"a1", b"a2"]
    assert server.connections == 2


async def test_a_body_left_unread_does_not_poison_the_next_request():
    async def answer(writer, number):
        writer.write(OK_CHUNKED + chunked(b"first half %d " % number)[:-5])
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(chunked(b"second half")[:-5] + b"0\r\n\r\n")

    async with RawServer(answer) as server, client() as http:
        async with http.stream("POST", server.url) as response:
            first = await anext(response.aiter_bytes())  # the reader stops early, as a Stop would
        _, body = await body_of(http, server.url)
    assert first == b"first half 1 "
    assert body == b"first half 2 second half"
    assert server.connections == 2


async def test_a_kept_alive_connection_the_server_closed_is_not_reused():
    async def answer(writer, number):
        writer.write(OK_CHUNKED + chunked(b"answer %d" % number))
        await writer.drain()
        return "close"  # without saying so in a header, as servers do when their keep-alive time is up

    async with RawServer(answer) as server, client() as http:
        await body_of(http, server.url)
        await asyncio.sleep(0.05)
        _, body = await body_of(http, server.url)
    assert body == b"answer 2"
    assert server.connections == 2


async def test_a_server_that_closes_each_connection_right_after_its_answer_costs_no_failed_request():
    # llama.cpp's server says keep-alive but closes the connection right after a streamed answer: a request
    # sent on it before its close was seen is sent again on a new connection (the server never read it).
    async def answer(writer, number):
        writer.write(OK_CHUNKED + chunked(b"answer %d" % number))
        await writer.drain()
        return "close"

    async with RawServer(answer) as server, client() as http:
        bodies = [(await body_of(http, server.url))[1] for _ in range(3)]
    assert bodies == [b"answer 1", b"answer 2", b"answer 3"]


async def test_a_server_that_closes_mid_body_is_a_remote_protocol_error():
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"data: partial\n\n")[:-5])
        return "close"

    async with RawServer(answer) as server, client() as http, http.stream("POST", server.url) as response:
        seen = []
        with pytest.raises(httpx.RemoteProtocolError, match="without sending complete message body"):
            async for piece in response.aiter_bytes():
                seen.append(piece)
    assert seen == [b"data: partial\n\n"]


async def test_a_server_that_closes_before_answering():
    async def answer(writer, _):
        return "close"

    async with RawServer(answer) as server, client() as http:
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            await body_of(http, server.url)


async def test_a_malformed_response_is_a_remote_protocol_error():
    async def answer(writer, _):
        writer.write(b"SMTP ready\r\n\r\n")

    async with RawServer(answer) as server, client() as http:
        with pytest.raises(httpx.RemoteProtocolError, match="Malformed HTTP response"):
            await body_of(http, server.url)


async def test_an_interim_100_continue_is_skipped():
    async def answer(writer, _):
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + OK_CHUNKED + chunked(b"after"))

    async with RawServer(answer) as server, client() as http:
        response, body = await body_of(http, server.url)
    assert (response.status_code, body) == (200, b"after")


async def test_a_gzipped_body_is_decoded():
    async def answer(writer, _):
        packed = gzip.compress(b"data: zipped\n\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n%s" % (len(packed), packed)
        )

    async with RawServer(answer) as server, client() as http:
        _, body = await body_of(http, server.url)
    assert body == b"data: zipped\n\n"


async def test_a_head_request_has_no_body():
    async def answer(writer, _):
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n")

    async with RawServer(answer) as server, client() as http:
        response = await http.head(server.url)
    assert (response.status_code, response.content) == (200, b"")


async def test_silence_mid_body_longer_than_the_read_timeout():
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"first")[:-5])
        await writer.drain()
        await asyncio.sleep(5)

    quick = client(timeout=httpx.Timeout(5.0, read=0.2))
    async with RawServer(answer) as server, quick as http, http.stream("POST", server.url) as response:
        pieces = response.aiter_bytes()
        assert await anext(pieces) == b"first"
        with pytest.raises(httpx.ReadTimeout):
            await anext(pieces)


async def test_a_slow_steady_stream_never_times_out_in_all():
    """The read timeout bounds each silence, not the whole answer: 12 pieces 0.05 s apart, read timeout 0.2 s."""

    async def answer(writer, _):
        writer.write(OK_CHUNKED)
        for n in range(12):
            writer.write(chunked(b"%d," % n)[:-5])
            await writer.drain()
            await asyncio.sleep(0.05)
        writer.write(b"0\r\n\r\n")

    async with RawServer(answer) as server, client(timeout=httpx.Timeout(5.0, read=0.2)) as http:
        _, body = await body_of(http, server.url)
    assert body == b"".join(b"%d," % n for n in range(12))


async def test_silence_before_the_head_is_a_read_timeout():
    async def answer(writer, _):
        await asyncio.sleep(5)

    async with RawServer(answer) as server, client(timeout=httpx.Timeout(5.0, read=0.2)) as http:
        with pytest.raises(httpx.ReadTimeout):
            await body_of(http, server.url)


async def test_a_refused_connection_is_a_connect_error_caused_by_the_refusal():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with client() as http:
        with pytest.raises(httpx.ConnectError) as caught:
            await body_of(http, f"http://127.0.0.1:{port}/v1")
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)


async def test_an_unsupported_scheme_is_refused():
    async with client() as http:
        with pytest.raises(httpx.UnsupportedProtocol):
            await http.post("ftp://127.0.0.1/v1")


async def test_a_full_pool_waits_then_times_out():
    release = asyncio.Event()

    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"held")[:-5])
        await writer.drain()
        await release.wait()
        writer.write(b"0\r\n\r\n")

    async with RawServer(answer) as server, client(max_connections=1, timeout=httpx.Timeout(5.0, pool=0.2)) as http:
        async with http.stream("POST", server.url):
            with pytest.raises(httpx.PoolTimeout):
                await body_of(http, server.url)
        release.set()
        _, body = await body_of(http, server.url)  # the slot came back when the first response closed
    assert body == b"held"


async def test_a_reader_that_falls_behind_stops_the_socket_being_read():
    """While the caller does not read, the transport stops reading: the server cannot send the whole body (it
    would all pile up in the app's memory otherwise), and what waits for the caller is about HIGH_WATER bytes."""
    size = 64 * 1024 * 1024
    sent = 0

    async def answer(writer, _):
        nonlocal sent
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size)
        while sent < size:
            writer.write(b"x" * 65536)
            sent += 65536
            await writer.drain()

    async with RawServer(answer) as server, client() as http, http.stream("POST", server.url) as response:
        pieces = response.aiter_raw()
        first = await anext(pieces)
        while True:  # until the server's writes stop getting anywhere
            before = sent
            await asyncio.sleep(0.3)
            if sent == before:
                break
        assert sent < size
        rest = await anext(pieces)  # what had arrived while the reader was away, in one piece
        assert len(rest) <= HIGH_WATER + 256 * 1024
        total = len(first) + len(rest) + sum([len(p) async for p in pieces])
    assert total == size


# --- TLS ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return folder / "cert.pem", folder / "key.pem"


def server_tls(certificate) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*map(str, certificate))
    return context


async def test_https_to_a_server_the_client_trusts(certificate):
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(*EVENTS))

    trusting = ssl.create_default_context(cafile=str(certificate[0]))
    async with RawServer(answer, tls=server_tls(certificate)) as server, client(ssl_context=trusting) as http:
        _, body = await body_of(http, server.url)
    assert body == b"".join(EVENTS)


async def test_https_to_a_server_with_an_unknown_certificate_fails_to_connect(certificate):
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"never"))

    async with RawServer(answer, tls=server_tls(certificate)) as server, client() as http:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await body_of(http, server.url)


# --- proxies from the environment --------------------------------------------------------------------


async def test_a_proxy_named_in_the_environment_is_used(monkeypatch):
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"via the proxy"))

    async with RawServer(answer) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        async with new_http_client("streaming") as http:
            _, body = await body_of(http, "http://models.example:8000/v1/chat/completions")
    assert body == b"via the proxy"
    assert proxy.requests[0][0].startswith(b"POST http://models.example:8000/v1/chat/completions HTTP/1.1")


async def test_no_proxy_hosts_are_reached_directly(monkeypatch):
    async def answer(writer, _):
        writer.write(OK_CHUNKED + chunked(b"direct"))

    async with RawServer(answer) as server:
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        async with new_http_client("streaming") as http:
            _, body = await body_of(http, server.url)
    assert body == b"direct"
    assert server.requests[0][0].startswith(b"POST /v1/stream HTTP/1.1")


def test_the_streaming_transport_gives_way_to_httpx_own_when_a_proxy_is_named(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert not proxies_in_environment()
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert proxies_in_environment()
