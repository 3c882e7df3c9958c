"""Lines the app's processes print keep URL credentials and remotely chosen query strings out."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def printed(logger: str, line: str) -> str:
    """What a process configured by the app's settings prints for one WARNING on `logger`."""
    script = f"import logging, sys, django; django.setup(); logging.getLogger({logger!r}).warning('%s', sys.argv[1])"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "agentweb.settings"}
    done = subprocess.run(
        [sys.executable, "-c", script, line], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_mcp_clients_redirect_warning_shows_neither_password_nor_query():
    out = printed(
        "mcp.client.streamable_http",
        "GET stream not opened: Redirect to https://bob:hunter2-secret@mcp.example/mcp?token=tok-123 not followed",
    )
    assert "GET stream not opened: Redirect to https://mcp.example/mcp?… not followed" in out
    assert "hunter2-secret" not in out and "tok-123" not in out


def test_any_loggers_line_loses_url_credentials_but_keeps_the_rest():
    out = printed("agentweb.tools", "fetching http://ada:pw-9f8e7d@example.test/a?page=2 failed")
    assert "fetching http://example.test/a?page=2 failed" in out
    assert "pw-9f8e7d" not in out
