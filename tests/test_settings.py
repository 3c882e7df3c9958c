"""The settings file refuses what would be unsafe, and reads the environment as documented."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_settings(*names: str, **env):
    """Imports the settings in a fresh process with only `env` set; prints the engine, DEBUG and `names`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    shown = ", ".join(["s.DATABASES['default']['ENGINE']", "s.DEBUG", *(f"s.{name}" for name in names)])
    return subprocess.run(
        [sys.executable, "-c", f"import agentweb.settings as s; print({shown})"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
    )


def test_debug_is_off_unless_asked_for(tmp_path):
    result = load_settings(DJANGO_SECRET_KEY_FILE=str(tmp_path / "key"))
    assert result.stdout.split()[1] == "False", result.stderr


def test_debug_is_on_when_asked_for(tmp_path):
    result = load_settings(DJANGO_DEBUG="true", DJANGO_SECRET_KEY_FILE=str(tmp_path / "key"))
    assert result.stdout.split()[1] == "True", result.stderr


def test_without_a_secret_key_one_is_made_once_and_kept_for_the_owner_only(tmp_path):
    key_file = tmp_path / "key"

    first = load_settings("SECRET_KEY", DJANGO_SECRET_KEY_FILE=str(key_file))
    second = load_settings("SECRET_KEY", DJANGO_SECRET_KEY_FILE=str(key_file))

    key = first.stdout.split()[2]
    assert len(key) >= 50 and not key.startswith("django-insecure")
    assert second.stdout.split()[2] == key
    assert key_file.read_text().strip() == key
    assert key_file.stat().st_mode & 0o777 == 0o600


def test_a_secret_key_given_is_used_and_no_file_is_made(tmp_path):
    result = load_settings("SECRET_KEY", DJANGO_SECRET_KEY="k" * 50, DJANGO_SECRET_KEY_FILE=str(tmp_path / "key"))
    assert result.stdout.split()[2] == "k" * 50
    assert not (tmp_path / "key").exists()


def test_a_key_file_that_cannot_be_made_is_a_clear_error(tmp_path):
    result = load_settings(DJANGO_SECRET_KEY_FILE=str(tmp_path / "missing-directory" / "key"))
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr and "missing-directory" in result.stderr


def test_the_default_key_file_is_not_tracked_by_git():
    ignored = subprocess.run(["git", "check-ignore", "-q", ".secret_key"], cwd=ROOT)
    assert ignored.returncode == 0


def test_cookies_are_secure_only_when_the_app_is_served_over_tls(tmp_path):
    key_file = {"DJANGO_SECRET_KEY_FILE": str(tmp_path / "key")}
    plain = load_settings("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", **key_file)
    proxied = load_settings("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", DJANGO_BEHIND_TLS_PROXY="true", **key_file)
    redirected = load_settings("SESSION_COOKIE_SECURE", DJANGO_SSL_REDIRECT="true", **key_file)

    assert plain.stdout.split()[2:] == ["False", "False"]
    assert proxied.stdout.split()[2:] == ["True", "True"]
    assert redirected.stdout.split()[2:] == ["True"]


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


FAIL_A_REQUEST = """
from django.test import Client, override_settings
from django.urls import path

def failing_view(request):
    raise RuntimeError("a bug in a view")

class urls:
    urlpatterns = [path("fails/", failing_view)]

with override_settings(ROOT_URLCONF=urls, ALLOWED_HOSTS=["testserver"]):
    print(Client(raise_request_exception=False).get("/fails/").status_code)
"""


def test_with_debug_off_a_server_error_is_logged_with_its_traceback(tmp_path):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", FAIL_A_REQUEST],
        cwd=ROOT,
        env={**clean, "DJANGO_SECRET_KEY_FILE": str(tmp_path / "key")},
        capture_output=True,
        text=True,
    )
    assert result.stdout.split()[-1] == "500", result.stderr
    assert "Internal Server Error: /fails/" in result.stderr
    assert "RuntimeError: a bug in a view" in result.stderr
