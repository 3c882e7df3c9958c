import json

import pytest

from tests.tools.local_http import LocalServer, Reply
from tools.builtin import fetch_url as fetch_module
from tools.builtin.fetch_url import fetch_url
from tools.executor import execute_tool
from tools.registry import ToolRegistry

REGISTRY = ToolRegistry([fetch_url])
PAGE = b"""<!doctype html><html><head><title>Menu</title><style>body{color:red}</style>
<script>alert("no")</script></head><body><h1>Today</h1><p>Soup &amp; bread</p><ul><li>Tea</li><li>Cake</li></ul>
</body></html>"""


@pytest.fixture(autouse=True)
def no_allow_list(monkeypatch):
    monkeypatch.setattr(fetch_module, "ALLOWED_HOSTS_PROVIDER", None)


@pytest.fixture
def allow_local(monkeypatch):
    async def local():  # as the web app's provider gives its allow-list (tools/services.py allowed_hosts)
        return {"127.0.0.1"}

    monkeypatch.setattr(fetch_module, "ALLOWED_HOSTS_PROVIDER", local)


async def fetch(url, **args):
    return await execute_tool(REGISTRY, "fetch_url", {"url": url, **args})


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "localhost", "127.1", "[::ffff:127.0.0.1]", "0.0.0.0", "2130706433", "[::1]"]
)
async def test_it_never_reaches_a_local_listener(host):
    with LocalServer({"/": Reply(body=b"secret")}) as server:
        result = await fetch(server.url(host=host))

    assert result.status == "error" and "BlockedURL" in result.content
    assert server.requests == []


async def test_it_never_follows_a_redirect_from_an_allowed_host_to_a_private_one(allow_local):
    with LocalServer({"/": Reply(body=b"secret")}) as private:
        moved = Reply(302, headers={"Location": private.url(host="localhost")})
        with LocalServer({"/": moved}) as allowed:
            result = await fetch(allowed.url())

    assert result.status == "error" and "Refused to fetch localhost" in result.content
    assert len(allowed.requests) == 1 and private.requests == []


async def test_it_never_follows_a_redirect_to_the_metadata_address(allow_local):
    moved = Reply(301, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
    with LocalServer({"/": moved}) as allowed:
        result = await fetch(allowed.url())

    assert "169.254.169.254, a cloud metadata address" in result.content


async def test_it_refuses_a_non_http_url():
    result = await fetch("file:///etc/passwd")

    assert result.content == "BlockedURL: Only http and https URLs can be fetched, not 'file'."


async def test_it_reduces_html_to_readable_text(allow_local):
    with LocalServer({"/": Reply(body=PAGE, headers={"Content-Type": "text/html; charset=utf-8"})}) as server:
        result = await fetch(server.url())

    header, text = result.content.split("\n\n", 1)
    assert header == f"URL: {server.url()}\nStatus: 200 OK\nContent-Type: text/html"
    assert text == "Menu\n\n# Today\n\nSoup & bread\n\n- Tea\n- Cake"


async def test_it_pretty_prints_json(allow_local):
    body = json.dumps({"city": "Zürich", "temps": [1, 2]}).encode()
    with LocalServer({"/": Reply(body=body, headers={"Content-Type": "application/json"})}) as server:
        result = await fetch(server.url())

    assert result.content.split("\n\n", 1)[1] == '{\n  "city": "Zürich",\n  "temps": [\n    1,\n    2\n  ]\n}'


async def test_it_decodes_with_the_declared_charset(allow_local):
    body = "Crème brûlée".encode("latin-1")
    with LocalServer({"/": Reply(body=body, headers={"Content-Type": "text/plain; charset=iso-8859-1"})}) as server:
        result = await fetch(server.url())

    assert result.content.endswith("\n\nCrème brûlée")


async def test_it_stops_downloading_at_the_size_cap(allow_local):
    body = b"x" * (fetch_module.MAX_BYTES + 500_000)
    with LocalServer({"/": Reply(body=body, headers={"Content-Type": "text/plain"})}) as server:
        result = await fetch(server.url(), max_chars=100)

    cap = fetch_module.MAX_BYTES
    assert result.content.endswith(f"\n[cut at 100 of {cap} characters]\n[the download stopped at {cap} bytes]")


async def test_it_cuts_the_text_at_max_chars(allow_local):
    with LocalServer({"/": Reply(body=b"abcdefghij", headers={"Content-Type": "text/plain"})}) as server:
        result = await fetch(server.url(), max_chars=4)

    assert result.content.endswith("\n\nabcd\n[cut at 4 of 10 characters]")


async def test_it_gives_up_on_a_server_that_hangs_at_its_deadline(allow_local, monkeypatch):
    monkeypatch.setattr(fetch_module, "DEADLINE_SECONDS", 0.3)
    with LocalServer({"/": Reply(hang=True)}) as server:
        result = await fetch(server.url())

    assert result.status == "error"
    assert result.content == f"TimeoutError: Fetching {server.url()} took longer than 0.3 s."
    assert result.duration_ms < 5000


async def test_it_follows_redirects_within_allowed_hosts_and_shows_the_final_url(allow_local):
    with LocalServer() as server:
        server.routes["/old"] = Reply(308, headers={"Location": "/new"})
        server.routes["/new"] = Reply(body=b"moved here", headers={"Content-Type": "text/plain"})
        result = await fetch(server.url("/old"))

    assert result.content.startswith(f"URL: {server.url('/new')}\n") and result.content.endswith("moved here")


async def test_it_stops_after_five_redirects(allow_local):
    with LocalServer({"/loop": Reply(302, headers={"Location": "/loop"})}) as server:
        result = await fetch(server.url("/loop"))

    assert result.status == "error" and "Too many redirects (more than 5)" in result.content
    assert len(server.requests) == 6


async def test_it_reports_an_error_status_with_the_start_of_the_body(allow_local):
    with LocalServer() as server:
        result = await fetch(server.url("/missing"))

    assert result.content == f"RuntimeError: {server.url('/missing')} answered 404 Not Found: not here"


async def test_it_describes_binary_content_instead_of_showing_it(allow_local):
    with LocalServer({"/": Reply(body=b"\x89PNG\x00\x01", headers={"Content-Type": "image/png"})}) as server:
        result = await fetch(server.url())

    assert result.content.endswith("\n\n(6 bytes of image/png, not shown)")


async def test_it_asks_the_allowed_hosts_provider_when_one_is_installed(monkeypatch):
    async def provider():
        return {"127.0.0.1"}

    monkeypatch.setattr(fetch_module, "ALLOWED_HOSTS_PROVIDER", provider)
    with LocalServer({"/": Reply(body=b"ok", headers={"Content-Type": "text/plain"})}) as server:
        result = await fetch(server.url())

    assert result.status == "success" and len(server.requests) == 1
