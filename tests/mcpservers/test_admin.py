"""The MCP servers' admin pages, for an admin."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from mcpservers.models import McpServer
from modelconfig.models import ModelConfiguration

from .conftest import stdio_row, wait_connected

pytestmark = pytest.mark.django_db

LIST = "/admin/mcpservers/mcpserver/"


@pytest.fixture
def admin_client_(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="root-password-1"))
    return client


def test_the_list_shows_each_servers_state(admin_client_, record):
    stdio_row(record)
    McpServer.objects.create(name="off", transport="http", url="http://127.0.0.1:9/mcp", enabled=False)
    wait_connected()
    page = admin_client_.get(LIST).content.decode()
    assert "connected: 10 tools (agentweb-test-server 1.2.3)" in page
    assert "disabled" in page


def test_a_server_that_cannot_connect_shows_its_error_and_when_it_retries(admin_client_, tmp_path):
    McpServer.objects.create(name="gone", transport="stdio", command=str(tmp_path / "nothing-here"))
    admin_client_.get(LIST)
    import time

    from tools.services import mcp_connections

    # The page is read until it shows the failure: between two tries the state is "failed" only until the next
    # try starts, which a loaded machine may reach before a page read once would.
    deadline = time.monotonic() + 20
    page = ""
    while "failed: FileNotFoundError" not in page and time.monotonic() < deadline:
        while mcp_connections().state("gone").status != "failed" and time.monotonic() < deadline:
            time.sleep(0.05)
        page = admin_client_.get(LIST).content.decode()
    assert "failed: FileNotFoundError: the command" in page and "nothing-here" in page and "retries in" in page


def test_the_change_page_lists_the_tools_and_never_shows_a_secret(admin_client_, record):
    row = stdio_row(record, env={"MCP_TEST_RECORD": str(record), "TOKEN": "very-secret-token"})
    wait_connected()
    page = admin_client_.get(f"{LIST}{row.pk}/change/").content.decode()
    assert "Add two numbers." in page and f"{LIST}{row.pk}/try/add/" in page
    assert "TOKEN" in page and "very-secret-token" not in page


def test_the_try_page_runs_an_mcp_tool(admin_client_, record):
    row = stdio_row(record)
    wait_connected()
    url = f"{LIST}{row.pk}/try/add/"
    assert admin_client_.get(url).status_code == 200
    page = admin_client_.post(url, {"arguments": '{"a": 20, "b": 22}'}).content.decode()
    assert "42.0" in page


def test_a_tool_whose_name_has_a_slash_has_its_try_page(admin_client_, record):
    row = stdio_row(record)
    wait_connected()
    response = admin_client_.get(f"{LIST}{row.pk}/change/")
    assert response.status_code == 200
    url = f"{LIST}{row.pk}/try/files/read/"
    assert url in response.content.decode()
    assert admin_client_.get(url).status_code == 200
    page = admin_client_.post(url, {"arguments": '{"path": "notes.txt"}'}).content.decode()
    assert "the text of notes.txt" in page


def test_adding_a_server_keeps_the_typed_secret(admin_client_):
    response = admin_client_.post(
        f"{LIST}add/",
        {
            "name": "web",
            "transport": "http",
            "enabled": "on",
            "timeout": "30",
            "command": "",
            "args": "[]",
            "url": "https://mcp.example.com/mcp",
            "offered_tools": "null",
            "require_approval": "on",
            "approval_exempt": "[]",
            "secret_env-count": "0",
            "secret_headers-count": "1",
            "secret_headers-0-name": "Authorization",
            "secret_headers-0-value": "Bearer abc123",
            "secret_headers-0-original": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    assert McpServer.objects.get().headers == {"Authorization": "Bearer abc123"}


def test_the_list_warns_when_the_tools_take_too_much_context(admin_client_, record):
    ModelConfiguration.objects.create(name="tiny", api="demo", context_window=256)
    stdio_row(record)
    wait_connected()
    page = admin_client_.get(LIST).content.decode()
    assert "more than 25% of the smallest context window (256 tokens)" in page


def test_the_servers_of_the_config_file_are_read_only_rows_of_the_list(admin_client_, settings, tmp_path, record):
    import json
    import sys

    from tests.support.mcp_servers.running import SCRIPT

    servers = {
        "fromfile": {"url": "http://someone:file-password@127.0.0.1:9/mcp?token=file-token", "enabled": False},
        "local": {"command": sys.executable, "args": [str(SCRIPT)], "env": {"MCP_TEST_RECORD": str(record)}},
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    settings.AGENTWEB_MCP_CONFIG = str(path)
    wait_connected("local")
    page = admin_client_.get(LIST).content.decode()
    rows = page.split('id="mcp-file-servers"')[1].split("</table>")[0]
    cells = {row.split('data-name="')[1].split('"')[0]: _cells(row) for row in rows.split("<tr")[2:]}
    fromfile = ["fromfile read-only", "streamable HTTP", "http://127.0.0.1:9/mcp", "no", "yes", "disabled"]
    assert cells["fromfile"] == fromfile
    assert cells["local"][:2] == ["local read-only", "stdio (a command run on this server)"]
    assert cells["local"][5].startswith("connected: 10 tools")
    assert "disabled" in rows and "From AGENTWEB_MCP_CONFIG (read-only here: edit the file and restart)" in page
    assert "file-password" not in page and "file-token" not in page
    assert "/admin/mcpservers/mcpserver/fromfile" not in page  # read-only: no change link
    assert 'class="messagelist"' not in page  # rows, not banners


def test_staff_with_every_permission_but_not_superuser_cannot_add_or_change_a_server(record):
    from django.contrib.auth.models import Permission

    staff = get_user_model().objects.create_user("staff", password="staff-password-1", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(content_type__app_label="mcpservers"))
    row = stdio_row(record, enabled=False)
    client = Client()
    client.force_login(staff)
    assert client.get(f"{LIST}add/").status_code == 403
    assert client.post(f"{LIST}{row.pk}/change/", {"name": "x"}).status_code == 403
    assert client.get(f"{LIST}{row.pk}/try/add/").status_code == 403
    assert client.get(LIST).status_code == 200  # it may look


def _cells(row: str) -> list[str]:
    """The text of each cell of a table row's HTML, tags dropped and spaces collapsed."""
    import re

    cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", cell).split()) for cell in cells]
