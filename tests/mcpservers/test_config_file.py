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
    assert "AGENTWEB_MCP_CONFIG:" in result.stderr and "MCP server 'files': 'args' must be a list" in result.stderr


def test_a_good_file_starts(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"files": {"command": "npx", "args": ["-y", "files"]}}}))
    result = start_with(path)
    assert result.returncode == 0, result.stderr
