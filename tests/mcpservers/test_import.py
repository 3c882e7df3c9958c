"""manage.py mcp import FILE."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from mcpservers.models import McpServer

pytestmark = pytest.mark.django_db


def run_import(path) -> str:
    out = StringIO()
    call_command("mcp", "import", str(path), stdout=out)
    return out.getvalue()


def write(path, servers):
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_it_creates_a_row_per_server_and_reports_it(tmp_path):
    path = write(
        tmp_path / "mcp.json",
        {
            "files": {"command": "npx", "args": ["-y", "files"], "env": {"TOKEN": "t0ken"}},
            "search": {
                "url": "https://mcp.example.com/mcp",
                "headers": {"Authorization": "Bearer x"},
                "requireApproval": False,
            },
        },
    )
    assert run_import(path).splitlines() == ["created files", "created search", "2 created, 0 updated."]
    files, search = McpServer.objects.order_by("name")
    assert (files.transport, files.command, files.args, files.env) == (
        "stdio",
        "npx",
        ["-y", "files"],
        {"TOKEN": "t0ken"},
    )
    assert (search.transport, search.url, search.headers, search.require_approval) == (
        "http",
        "https://mcp.example.com/mcp",
        {"Authorization": "Bearer x"},
        False,
    )
    assert files.require_approval


def test_a_second_import_updates(tmp_path):
    run_import(write(tmp_path / "mcp.json", {"files": {"command": "npx"}}))
    out = run_import(write(tmp_path / "mcp.json", {"files": {"command": "uvx", "args": ["files"]}}))
    assert out.splitlines() == ["updated files", "0 created, 1 updated."]
    assert McpServer.objects.get().command == "uvx"


def test_the_secrets_are_encrypted_at_rest(tmp_path):
    from django.db import connection

    run_import(write(tmp_path / "mcp.json", {"files": {"command": "npx", "env": {"TOKEN": "t0ken-value"}}}))
    with connection.cursor() as cursor:
        cursor.execute("SELECT env FROM mcpservers_mcpserver")
        [(stored,)] = cursor.fetchall()
    assert "t0ken-value" not in stored and stored.startswith("fernet:")


def test_a_bad_file_is_an_error_and_writes_nothing(tmp_path):
    path = write(tmp_path / "mcp.json", {"ok": {"command": "npx"}, "bad": {"url": "ftp://x"}})
    with pytest.raises(CommandError, match="MCP server 'bad': 'url' must be"):
        run_import(path)
    assert not McpServer.objects.exists()
