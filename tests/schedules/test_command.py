"""`manage.py schedules`: `add` prints the new schedule's id alone; `list`, `pause`, `resume`, `remove` by id; a wrong
user, agent, expression, zone or id is an error on standard error, with a non-zero status, and nothing is written."""

import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from schedules.models import Schedule
from tests.support.processes import ROOT, app_environment, manage

from .conftest import make_schedule

pytestmark = pytest.mark.django_db


def schedules(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("schedules", *args, stdout=out)
    return out.getvalue()


def test_add_prints_exactly_the_new_id(owner, agent):
    out = schedules(
        "add", "owner", "--agent", "daily", "--prompt", "Hi {date}", "--cron", "0 9 * * 1-5", "--tz", "Asia/Tokyo"
    )
    schedule = Schedule.objects.get()
    assert out == f"{schedule.pk}\n"
    assert (schedule.owner, schedule.kind, schedule.cron, schedule.time_zone) == (
        owner,
        "cron",
        "0 9 * * 1-5",
        "Asia/Tokyo",
    )
    assert schedule.target == "new" and schedule.next_run_at is not None


def test_add_every_n_minutes_into_one_thread(owner, agent):
    out = schedules("add", "owner", "--agent", "daily", "--prompt", "tick", "--every", "15", "--thread", "one")
    schedule = Schedule.objects.get(pk=int(out))
    assert (schedule.kind, schedule.every_minutes, schedule.target) == ("every", 15, "one")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["nobody", "--agent", "daily", "--prompt", "p", "--every", "5"], "No user 'nobody'"),
        (["owner", "--agent", "nope", "--prompt", "p", "--every", "5"], "'nope' is not an agent"),
        (["owner", "--agent", "daily", "--prompt", "p", "--cron", "sometimes"], "not a cron expression"),
        (["owner", "--agent", "daily", "--prompt", "p", "--cron", "0 9 * * *", "--tz", "Nowhere/Land"], "time zone"),
        (["owner", "--agent", "daily", "--prompt", "p", "--every", "0"], "Every N minutes"),
    ],
)
def test_add_refuses_what_it_cannot_keep_and_writes_nothing(owner, agent, args, error):
    with pytest.raises(CommandError, match=error):
        schedules("add", *args)
    assert not Schedule.objects.exists()


def test_list_pause_resume_remove(owner, agent):
    schedule = make_schedule(owner)
    assert schedules("list").startswith(f"{schedule.pk}\towner\tdaily\tevery day at 09:00 (UTC)\tnew\tnext ")
    schedules("pause", str(schedule.pk))
    assert "paused: Paused by hand." in schedules("list")
    schedules("resume", str(schedule.pk))
    schedule.refresh_from_db()
    assert not schedule.paused
    schedules("remove", str(schedule.pk))
    assert not Schedule.objects.exists()
    with pytest.raises(CommandError, match="No schedule"):
        schedules("pause", str(schedule.pk))


def test_as_a_script_sees_it_stdout_is_the_id_alone_and_errors_go_to_stderr(tmp_path):
    env = app_environment(tmp_path)
    manage(env, "migrate", "--noinput")
    setup = (
        "from django.contrib.auth.models import User; from agents.models import Agent;"
        " User.objects.create_user('ada'); Agent.objects.create(name='Daily', slug='daily')"
    )
    manage(env, "shell", "-c", setup)
    command = [sys.executable, "manage.py", "schedules", "add", "ada", "--agent", "daily", "--prompt", "p"]
    made = subprocess.run([*command, "--every", "5"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0 and made.stdout.strip().isdigit() and made.stdout == made.stdout.strip() + "\n"
    refused = subprocess.run(
        [*command, "--cron", "bad"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode != 0 and refused.stdout == "" and "not a cron expression" in refused.stderr
    assert manage(env, "schedules", "list").count("\n") == 1
