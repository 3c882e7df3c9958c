"""A schedule: an agent asked the same prompt at set times, as its owner, with no tab open
(docs/background.md). Each firing is a ScheduleRun row, the schedule's history."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

#: What a prompt may hold, and a pause reason.
PROMPT_CHARS = 10_000
REASON_CHARS = 300


class Schedule(models.Model):
    class Kind(models.TextChoices):
        CRON = "cron", _("A cron expression")
        EVERY = "every", _("Every N minutes")

    class Target(models.TextChoices):
        NEW = "new", _("A new thread each time")
        ONE = "one", _("One thread that grows")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="schedules")
    # A slug, read again at each firing: the agent the owner may pick by that name then (their own first).
    agent = models.SlugField(max_length=60)
    prompt = models.TextField(max_length=PROMPT_CHARS, help_text=_("{date} and {time} are filled in at each firing."))
    kind = models.CharField(max_length=5, choices=Kind.choices, default=Kind.CRON)
    cron = models.CharField(max_length=100, blank=True, help_text=_("Five fields: minute hour day month weekday."))
    time_zone = models.CharField(max_length=64, default="UTC", help_text=_("An IANA zone, such as Europe/Berlin."))
    every_minutes = models.PositiveIntegerField(null=True, blank=True)
    target = models.CharField(max_length=3, choices=Target.choices, default=Target.NEW)
    # The thread that grows (Target.ONE): made by the first firing, and again if it is deleted.
    thread = models.ForeignKey("chat.Thread", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    paused = models.BooleanField(default=False)
    pause_reason = models.CharField(max_length=REASON_CHARS, blank=True)
    # The slot the schedule fires at next; a claim moves it past the present (schedules/firing.py).
    next_run_at = models.DateTimeField(null=True, blank=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["next_run_at", "pk"]
        indexes = [models.Index(fields=["paused", "next_run_at"], name="schedule_due")]

    def __str__(self) -> str:
        return f"{self.agent}: {self.prompt[:40]}"


class ScheduleRun(models.Model):
    class Status(models.TextChoices):
        CLAIMED = "claimed", _("Starting")
        STARTED = "started", _("Started")
        SKIPPED = "skipped", _("Skipped")
        PAUSED = "paused", _("Paused the schedule")
        FAILED = "failed", _("Failed")

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="runs")
    # The slot fired (the time it was due), or the moment of a "Run now".
    slot = models.DateTimeField()
    claimed_at = models.DateTimeField()
    # The turn's client_msg_id: a firing started again after its process died opens the same turn, not a second one.
    client_msg_id = models.UUIDField(default=uuid.uuid4, editable=False)
    thread = models.ForeignKey("chat.Thread", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    run = models.ForeignKey("chat.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.CLAIMED)
    error = models.CharField(max_length=REASON_CHARS, blank=True)
    manual = models.BooleanField(default=False)

    class Meta:
        ordering = ["-slot", "-pk"]
        constraints = [
            # A second guard against a slot fired twice: the claim's conditional UPDATE is the first.
            models.UniqueConstraint(fields=["schedule", "slot"], name="schedule_run_once_per_slot"),
        ]
        indexes = [models.Index(fields=["status", "claimed_at"], name="schedule_run_claimed")]
