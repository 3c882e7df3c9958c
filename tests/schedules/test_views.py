"""/schedules/: a person makes, sees, changes, pauses, resumes, runs now and deletes their own schedules, and reads
each one's history; another person's schedule is a 404 on every page and changes nothing."""

import pytest
from django.test import Client
from django.urls import reverse

from schedules import services
from schedules.models import Schedule, ScheduleRun

from .conftest import make_schedule

pytestmark = pytest.mark.django_db(transaction=True)


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_person_makes_a_schedule_and_sees_it_in_words_with_its_next_run(owner, agent):
    client = login(owner)
    answer = client.post(
        "/schedules/",
        {
            "agent": "daily",
            "prompt": "Summarise {date}",
            "kind": "cron",
            "cron": "30 8 * * 1-5",
            "time_zone": "Europe/Berlin",
            "target": "new",
        },
    )
    assert answer.status_code == 302
    schedule = Schedule.objects.get()
    assert (schedule.owner, schedule.cron, schedule.paused) == (owner, "30 8 * * 1-5", False)
    assert schedule.next_run_at is not None
    page = client.get("/schedules/").content.decode()
    assert "on weekdays at 08:30 (Europe/Berlin)" in page and "Summarise {date}" in page
    assert "last run never" in " ".join(page.split())


def test_an_uncommon_expression_is_shown_with_its_next_three_times(owner, agent):
    schedule = services.save(make_schedule(owner, cron="0 9 1-7 * 1", next_run_at=None))
    page = login(owner).get("/schedules/").content.decode()
    item = page.split(f'data-schedule-id="{schedule.pk}"')[1].split("</li>")[0]
    assert "<code>0 9 1-7 * 1</code>" in item and item.count("<time") == 3 + 1  # three next times, and next run


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"cron": "every morning"}, "not a cron expression"),
        ({"time_zone": "Moon/Base"}, "not a time zone"),
        ({"agent": "someone-elses"}, "Select a valid choice"),
        ({"kind": "every", "cron": "", "every_minutes": "0"}, "Every N minutes takes N from 1"),
    ],
)
def test_a_schedule_that_cannot_be_kept_is_refused_saying_why_and_nothing_is_written(owner, agent, fields, error):
    data = {"agent": "daily", "prompt": "p", "kind": "cron", "cron": "0 9 * * *", "time_zone": "UTC", "target": "new"}
    answer = login(owner).post("/schedules/", {**data, **fields})
    assert answer.status_code == 200 and error in answer.content.decode()
    assert not Schedule.objects.exists()


def test_pause_resume_and_delete(owner, agent):
    schedule = make_schedule(owner)
    client = login(owner)
    client.post(f"/schedules/{schedule.pk}/pause")
    schedule.refresh_from_db()
    assert schedule.paused and schedule.pause_reason == "Paused by hand."
    assert "Paused" in client.get("/schedules/").content.decode()
    client.post(f"/schedules/{schedule.pk}/resume")
    schedule.refresh_from_db()
    assert not schedule.paused and schedule.pause_reason == ""
    client.post(f"/schedules/{schedule.pk}/delete")
    assert not Schedule.objects.exists()


def test_run_now_fires_once_and_the_history_links_to_the_thread(owner, agent):
    schedule = make_schedule(owner)
    client = login(owner)
    answer = client.post(f"/schedules/{schedule.pk}/run")
    assert answer.status_code == 302 and answer.url == f"/schedules/{schedule.pk}/history"
    job = ScheduleRun.objects.get()
    assert job.manual and job.status == "started" and job.thread is not None
    page = client.get(answer.url).content.decode()
    assert f'href="{reverse("chat:thread", args=[job.thread_id])}"' in page
    assert "by hand" in page


def test_a_strangers_schedule_is_not_found_anywhere_and_is_left_as_it_was(owner, stranger, agent):
    schedule = make_schedule(owner)
    client = login(stranger)
    assert "data-schedule-id" not in client.get("/schedules/").content.decode()
    for page in ("", "history"):
        assert client.get(f"/schedules/{schedule.pk}/{page}").status_code == 404
    for action in ("pause", "resume", "run", "delete"):
        assert client.post(f"/schedules/{schedule.pk}/{action}").status_code == 404
    assert client.post(f"/schedules/{schedule.pk}/", {"prompt": "mine now"}).status_code == 404
    schedule.refresh_from_db()
    assert (schedule.paused, schedule.prompt) == (False, "News for {date} at {time}")
    assert not ScheduleRun.objects.exists()


def test_signed_out_the_pages_ask_to_sign_in(owner, agent):
    answer = Client().get("/schedules/")
    assert answer.status_code == 302 and "/accounts/login/" in answer.url
