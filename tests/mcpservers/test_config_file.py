"""AGENTWEB_MCP_CONFIG is read at start: a file that cannot be used stops the start, saying what is wrong."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start_with(path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "agentweb.settings", "AGENTWEB_MCP_CONFIG": str(path)},
        capture_output=True,
        text=True,
    )


def test_a_mistake_in_the_file_stops_the_start_naming_the_server_and_field(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"files": {"command": "npx", "args": "-y"}}}))
    result = start_with(path)
    assert result.returncode != 0
    assert "AGENTWEB_MCP_CONFIG has a mistake" in result.stderr
    assert "MCP server 'files': 'args' must be a list" in result.stderr


def test_a_good_file_starts(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"files": {"command": "npx", "args": ["-y", "files"]}}}))
    result = start_with(path)
    assert result.returncode == 0, result.stderr


BAD = {
    "mcpServers": {
        "files": {"command": "npx", "args": "-y", "timeout": "soon"},
        "search": {"url": "ftp://example.com/mcp"},
        "fine": {"url": "http://127.0.0.1:9/mcp"},
    }
}
MISTAKES = [
    "MCP server 'files': 'args' must be a list of strings.",
    "MCP server 'files': 'timeout' must be a number of seconds.",
    "MCP server 'search': 'url' must be an http:// or https:// address.",
]


def test_a_bad_file_stops_the_start_with_every_mistake_and_no_traceback(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(BAD))
    result = start_with(path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    for mistake in MISTAKES:
        assert mistake in result.stderr


def test_manage_py_mcp_import_of_a_bad_file_prints_every_mistake_and_no_traceback(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(BAD))
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    result = subprocess.run(
        [sys.executable, "manage.py", "mcp", "import", str(path)],
        cwd=ROOT,
        env={
            **clean,
            "DJANGO_SETTINGS_MODULE": "agentweb.settings",
            "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        },
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    for mistake in MISTAKES:
        assert mistake in result.stderr
