"""The settings file refuses what would be unsafe, and reads the environment as documented."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_settings(**env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    return subprocess.run(
        [sys.executable, "-c", "import agentweb.settings as s; print(s.DATABASES['default']['ENGINE'], s.DEBUG)"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
    )


def test_it_refuses_to_start_with_debug_off_and_the_default_secret_key():
    result = load_settings(DJANGO_DEBUG="false")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_it_starts_with_debug_off_and_a_secret_key():
    result = load_settings(DJANGO_DEBUG="false", DJANGO_SECRET_KEY="x" * 50)
    assert result.stdout.split() == ["django.db.backends.sqlite3", "False"]


def test_it_uses_the_database_url():
    result = load_settings(DATABASE_URL="postgres://u:p@127.0.0.1:5432/agentweb")
    assert result.stdout.split()[0] == "django.db.backends.postgresql"


def test_a_misspelt_boolean_is_an_error_not_a_guess():
    result = load_settings(DJANGO_DEBUG="nope")
    assert result.returncode != 0
    assert "DJANGO_DEBUG" in result.stderr


PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "DJANGO_SECRET_KEY": "a-long-random-production-secret-key-0123456789-abcdefghijklmnop",
    "DJANGO_ALLOWED_HOSTS": "chat.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://chat.example.com",
    "DJANGO_HSTS_SECONDS": "31536000",
    "DJANGO_HSTS_INCLUDE_SUBDOMAINS": "true",
    "DJANGO_HSTS_PRELOAD": "true",
    "DJANGO_SSL_REDIRECT": "true",
    "DJANGO_BEHIND_TLS_PROXY": "true",
    "DATABASE_URL": "postgres://agentweb@127.0.0.1:5432/agentweb",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "AGENTWEB_RUN_WORKERS": "true",
    "AGENTWEB_SECRET_KEYS": "tUlKG7jleBXELVNJhdkImG_dj3KMO7uiZZNRw2JJmJE=",
}


def test_the_documented_production_settings_pass_check_deploy():
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**clean, **PRODUCTION},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def tool_threads(**env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    code = "import django; django.setup(); from tools.pool import TOOL_THREADS as t; print(t.threads, t.per_tool)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "agentweb.settings", **env},
        capture_output=True,
        text=True,
    )


def test_the_sync_tools_pool_takes_its_sizes_from_the_environment():
    result = tool_threads(AGENTWEB_TOOL_THREADS="8", AGENTWEB_TOOL_THREADS_PER_TOOL="2")
    assert result.stdout.split() == ["8", "2"], result.stderr


def test_a_tool_share_of_no_threads_is_an_error():
    result = tool_threads(AGENTWEB_TOOL_THREADS_PER_TOOL="0")
    assert result.returncode != 0
    assert "AGENTWEB_TOOL_THREADS_PER_TOOL must be at least 1" in result.stderr
