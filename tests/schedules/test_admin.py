"""An admin manages anyone's schedules in the Django admin, with the pages' checks: a schedule made for a person
gets its next slot; one that cannot be kept is refused, saying why, and nothing is written; each one's runs show."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from schedules.models import Schedule, ScheduleRun

from .conftest import T0, make_schedule

pytestmark = pytest.mark.django_db

ADD = "/admin/schedules/schedule/add/"


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("boss", password="boss-password-1"))
    return client


def form(owner, **fields) -> dict:
    data = {
        "owner": owner.pk,
        "agent": "daily",
        "prompt": "Report for {date}",
        "kind": "cron",
        "cron": "0 6 * * *",
        "time_zone": "Asia/Tokyo",
        "every_minutes": "",
        "target": "new",
        "runs-TOTAL_FORMS": "0",
        "runs-INITIAL_FORMS": "0",
        "runs-MIN_NUM_FORMS": "0",
        "runs-MAX_NUM_FORMS": "1000",
    }
    return {**data, **fields}


def test_an_admin_makes_a_schedule_for_someone_and_it_gets_its_next_slot(admin_client, owner, agent):
    answer = admin_client.post(ADD, form(owner))
    assert answer.status_code == 302, answer.content.decode()[:2000]
    schedule = Schedule.objects.get()
    assert schedule.owner == owner and schedule.next_run_at is not None
    assert schedule.next_run_at.astimezone().minute == 0


@pytest.mark.parametrize(
    ("fields", "error"),
    [({"cron": "now and then"}, "not a cron expression"), ({"agent": "not-theirs"}, "is not an agent this person")],
)
def test_what_cannot_be_kept_is_refused_in_the_admin_too(admin_client, owner, agent, fields, error):
    answer = admin_client.post(ADD, form(owner, **fields))
    assert answer.status_code == 200 and error in answer.content.decode()
    assert not Schedule.objects.exists()


def test_the_change_page_lists_the_schedules_runs(admin_client, owner, agent):
    schedule = make_schedule(owner)
    ScheduleRun.objects.create(schedule=schedule, slot=T0, claimed_at=T0, status="failed", error="model down")
    page = admin_client.get(f"/admin/schedules/schedule/{schedule.pk}/change/").content.decode()
    assert "model down" in page
