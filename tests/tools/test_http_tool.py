"""HTTP tools against a real local HTTP server on 127.0.0.1 (opened for the tests through the allow-list)."""

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tools.executor import execute_tool
from tools.http_tool import MAX_RESPONSE_BYTES, build_http_tool, render_body, render_url
from tools.registry import ToolRegistry

SECRET = "sk-live-0123456789abcdef"


class EchoHandler(BaseHTTPRequestHandler):
    """/echo...: the request as JSON (headers included, as some real APIs do); /big: 3 MB; /status/<n>: that
    status; /redirect: a 302 to /echo; /text: plain text."""

    def do_GET(self):
        self.answer()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self.server.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers)})
        if self.path == "/big":
            self.send(200, b"x" * (3 * 1024 * 1024), "text/plain")
        elif self.path.startswith("/status/"):
            self.send(int(self.path.rsplit("/", 1)[1]), b'{"error": "no such item"}', "application/json")
        elif self.path == "/redirect":
            self.send(302, b"", "text/plain", location="http://169.254.169.254/latest/meta-data/")
        elif self.path == "/text":
            self.send(200, "plain words é".encode(), "text/plain; charset=utf-8")
        else:
            echo = {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
            self.send(200, json.dumps(echo).encode(), "application/json")

    def send(self, status, payload, content_type, location=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@dataclass
class LocalServer:
    """A threaded HTTP server on 127.0.0.1 with a free port; `requests` lists what it received."""

    server: ThreadingHTTPServer = field(init=False)

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
        self.server.requests = []
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def requests(self) -> list[dict]:
        return self.server.requests


@dataclass
class Row:
    """The attributes of an HttpTool row that build_http_tool reads."""

    name: str = "items"
    description: str = "Look an item up."
    parameters: dict = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {"item_id": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["item_id"],
        }
    )
    method: str = "GET"
    url_template: str = ""
    headers: dict = field(default_factory=lambda: {"Authorization": f"Bearer {SECRET}"})
    body_template: str = ""
    requires_approval: bool = False
    timeout: float | None = None


@pytest.fixture
def server():
    with LocalServer() as running:
        yield running


async def call(row: Row, args: dict, *, allowed=("127.0.0.1",)):
    tool = build_http_tool(row, allowed_hosts=allowed)
    return await execute_tool(ToolRegistry([tool]), tool.name, args)


async def test_it_puts_the_url_quoted_argument_into_the_path(server):
    row = Row(url_template=server.base_url + "/echo/items/{item_id}")

    result = await call(row, {"item_id": "a b/c?"})

    assert result.status == "success"
    assert server.requests[0]["path"] == "/echo/items/a%20b%2Fc%3F"


async def test_it_sends_the_arguments_the_url_does_not_use_as_query_parameters_of_a_get(server):
    row = Row(url_template=server.base_url + "/echo/{item_id}")

    await call(row, {"item_id": "7", "limit": 3})

    assert server.requests[0]["path"] == "/echo/7?limit=3"


async def test_it_returns_a_json_answer_pretty_printed(server):
    row = Row(url_template=server.base_url + "/echo/{item_id}")

    result = await call(row, {"item_id": "7"})

    assert result.content.startswith('{\n  "method": "GET"')


async def test_it_returns_a_text_answer_as_text(server):
    row = Row(url_template=server.base_url + "/text", parameters={"type": "object", "properties": {}})

    result = await call(row, {})

    assert (result.status, result.content) == ("success", "plain words é")


async def test_it_fills_the_body_template_with_json_values(server):
    row = Row(
        method="POST",
        url_template=server.base_url + "/echo",
        body_template='{"id": {item_id}, "note": "item {item_id}, at most {limit}", "limit": {limit}}',
    )

    result = await call(row, {"item_id": 'say "hi"', "limit": 2})

    sent = json.loads(json.loads(result.content)["body"])
    assert sent == {"id": 'say "hi"', "note": 'item say "hi", at most 2', "limit": 2}


async def test_it_posts_the_unused_arguments_as_json_without_a_body_template(server):
    row = Row(method="POST", url_template=server.base_url + "/echo/{item_id}")

    result = await call(row, {"item_id": "7", "limit": 5})

    assert json.loads(json.loads(result.content)["body"]) == {"limit": 5}


async def test_it_sends_the_secret_header_but_masks_it_in_the_echoed_result(server):
    row = Row(url_template=server.base_url + "/echo/{item_id}")

    result = await call(row, {"item_id": "7"})

    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in result.content
    assert '"Authorization": "••••"' in result.content


async def test_it_reports_an_http_error_status_with_the_body(server):
    row = Row(url_template=server.base_url + "/status/{item_id}")

    result = await call(row, {"item_id": "404"})

    assert result.status == "error"
    assert "HTTP 404 Not Found" in result.content
    assert "no such item" in result.content


async def test_it_refuses_a_redirect_to_the_metadata_address(server):
    row = Row(url_template=server.base_url + "/redirect", parameters={"type": "object", "properties": {}})

    result = await call(row, {})

    assert result.status == "error"
    assert "169.254.169.254" in result.content
    assert "metadata" in result.content


async def test_it_cuts_a_large_answer_at_the_cap(server):
    row = Row(url_template=server.base_url + "/big", parameters={"type": "object", "properties": {}}, timeout=20)
    tool = build_http_tool(row, allowed_hosts={"127.0.0.1"})

    text = await tool.func()

    assert text.startswith("xxxx")
    assert text.count("x") == MAX_RESPONSE_BYTES
    assert text.endswith("[response cut at 2 MB]")


async def test_it_refuses_a_loopback_host_that_is_not_allowed(server):
    row = Row(url_template=server.base_url + "/echo/{item_id}")

    result = await call(row, {"item_id": "7"}, allowed=())

    assert result.status == "error"
    assert "Refused" in result.content
    assert server.requests == []


async def test_it_refuses_localhost_by_name(server):
    port = server.base_url.rsplit(":", 1)[1]
    row = Row(url_template=f"http://localhost:{port}/echo/{{item_id}}")

    result = await call(row, {"item_id": "7"}, allowed=("127.0.0.1",))

    assert result.status == "error"
    assert server.requests == []


async def test_it_keeps_the_secret_out_of_a_connection_error():
    row = Row(url_template="http://127.0.0.1:9/echo/{item_id}", headers={"X-Api-Key": SECRET})

    result = await call(row, {"item_id": "7"})

    assert result.status == "error"
    assert "ConnectError" in result.content
    assert SECRET not in result.content


async def test_it_validates_the_arguments_before_any_request(server):
    row = Row(url_template=server.base_url + "/echo/{item_id}")

    result = await call(row, {"limit": 3})

    assert result.status == "error"
    assert "item_id" in result.content
    assert server.requests == []


async def test_it_uses_the_rows_timeout_as_the_tools_deadline():
    tool = build_http_tool(Row(url_template="https://api.example.com/{item_id}", timeout=2.5))

    assert tool.timeout == 2.5


def test_it_renders_a_missing_optional_placeholder_as_empty_in_a_url():
    assert render_url("https://x.test/a?q={q}", {}) == "https://x.test/a?q="


def test_it_renders_a_missing_placeholder_as_null_in_a_body():
    assert render_body('{"q": {q}, "s": "<{q}>"}', {}) == {"q": None, "s": "<>"}


def test_it_rejects_a_body_template_that_is_not_json_once_filled():
    with pytest.raises(ValueError, match="not valid JSON"):
        render_body('{"q": {q}', {"q": 1})


async def test_a_url_with_credentials_sends_them_as_basic_auth_and_masks_them_in_the_result(server):
    host = server.base_url.removeprefix("http://")
    row = Row(url_template=f"http://bob:pw-hunter2-x@{host}/echo/{{item_id}}", headers={})

    result = await call(row, {"item_id": "7"})

    sent = server.requests[0]["headers"]["Authorization"]
    assert base64.b64decode(sent.removeprefix("Basic ")).decode() == "bob:pw-hunter2-x"
    assert "pw-hunter2-x" not in result.content and sent not in result.content


async def test_a_url_with_credentials_keeps_them_out_of_a_connection_error():
    row = Row(url_template="http://bob:pw-hunter2-x@127.0.0.1:9/echo/{item_id}", headers={})

    result = await call(row, {"item_id": "7"})

    assert result.status == "error"
    assert "pw-hunter2-x" not in result.content
