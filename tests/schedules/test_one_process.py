"""In the one-process shape (a Daphne process, no Redis, no run workers) the Daphne process fires due schedules
itself: there is no other process to start."""

import json
import time

from tests.support.processes import manage, served_app

MAKE = (
    "from datetime import timedelta; from django.utils import timezone; from django.contrib.auth.models import User;"
    " from agents.models import Agent; from schedules.models import Schedule;"
    " Agent.objects.create(name='Daily', slug='daily');"
    " Schedule.objects.create(owner=User.objects.get(username='ada'), agent='daily', prompt='hello', kind='every',"
    " every_minutes=60, next_run_at=timezone.now() + timedelta(seconds=2))"
)
STATE = (
    "import json; from schedules.models import ScheduleRun;"
    " print(json.dumps([[r.status, r.run.status if r.run else None] for r in ScheduleRun.objects.all()]))"
)


def test_the_daphne_process_fires_a_due_schedule_once(tmp_path):
    with served_app(tmp_path, {"ada": "ada-password-1"}, AGENTWEB_DEMO_DELAY="0", AGENTWEB_SCHEDULE_TICK="1") as (
        _,
        env,
    ):
        manage(env, "shell", "-c", MAKE)
        deadline = time.monotonic() + 60
        while True:
            found = json.loads(manage(env, "shell", "-c", STATE).strip().splitlines()[-1])
            if found == [["started", "completed"]] or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        time.sleep(2)  # a second firing of the same slot would show by now
        found = json.loads(manage(env, "shell", "-c", STATE).strip().splitlines()[-1])
    assert found == [["started", "completed"]]
