"""The checks of AGENTWEB_SECRET_KEYS: `check --deploy` warns without it, any check refuses a malformed key; and
the settings read the variable as a comma-separated list."""

import os
import subprocess
import sys

from cryptography.fernet import Fernet
from django.core.checks import run_checks

from tests.test_settings import PRODUCTION, ROOT

KEY = Fernet.generate_key().decode()


def ids(**kwargs) -> list[str]:
    return [message.id for message in run_checks(**kwargs)]


def test_check_deploy_warns_when_debug_is_off_and_no_key_is_set(settings):
    settings.DEBUG = False
    settings.AGENTWEB_SECRET_KEYS = []
    assert "agentweb.W001" in ids(include_deployment_checks=True)
    assert "agentweb.W001" not in ids()  # a deployment check only

    settings.AGENTWEB_SECRET_KEYS = [KEY]
    assert "agentweb.W001" not in ids(include_deployment_checks=True)
    settings.DEBUG, settings.AGENTWEB_SECRET_KEYS = True, []
    assert "agentweb.W001" not in ids(include_deployment_checks=True)


def test_a_malformed_key_is_an_error_of_every_check_run_that_does_not_quote_it(settings):
    settings.AGENTWEB_SECRET_KEYS = [KEY, "my-passphrase"]
    [error] = [message for message in run_checks() if message.id == "agentweb.E001"]
    assert "Key 2 of AGENTWEB_SECRET_KEYS" in error.msg
    assert "my-passphrase" not in error.msg and KEY not in error.msg


def manage(*args, **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_", "DATABASE_URL"))}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )


def test_production_settings_with_a_key_pass_check_deploy_and_without_it_warn():
    production = {name: value for name, value in PRODUCTION.items() if name != "AGENTWEB_SECRET_KEYS"}
    passed = manage("check", "--deploy", "--fail-level", "WARNING", **production, AGENTWEB_SECRET_KEYS=KEY)
    assert passed.returncode == 0, passed.stdout + passed.stderr

    warned = manage("check", "--deploy", "--fail-level", "WARNING", **production)
    assert warned.returncode != 0
    assert "agentweb.W001" in warned.stderr and "AGENTWEB_SECRET_KEYS is not set" in warned.stderr


def test_the_variable_is_a_comma_separated_list():
    other = Fernet.generate_key().decode()
    code = "import agentweb.settings as s; print('|'.join(s.AGENTWEB_SECRET_KEYS))"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "AGENTWEB_"))}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "AGENTWEB_SECRET_KEYS": f" {KEY}, {other} ,"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == f"{KEY}|{other}"
