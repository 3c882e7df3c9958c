"""/schedules/: a person's schedules (list, make, change, pause, resume, run now, delete) and each one's history.
A person reaches only their own: another's is a 404, as if it did not exist."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from agents.services import agents_for_picker
from chat.runs.detached import detached

from . import services
from .firing import fire_safely, run_now
from .forms import ScheduleForm
from .models import Schedule
from .timing import in_words, next_slots

app_name = "schedules"
#: Rows of a schedule's history shown.
HISTORY_ROWS = 200
#: Schedules a person may keep.
MOST_SCHEDULES = 100


def own(request, pk: int) -> Schedule:
    return get_object_or_404(Schedule, pk=pk, owner=request.user)


def describe(schedule: Schedule, now) -> dict:
    words = in_words(schedule.kind, schedule.cron, schedule.time_zone, schedule.every_minutes)
    return {
        "schedule": schedule,
        "words": words,
        "upcoming": [] if words or schedule.paused else next_slots(schedule, 3, now),
    }


def edit_page(request, editing: Schedule | None):
    agents = agents_for_picker(request.user)
    schedule = editing or Schedule(owner=request.user)
    before = services.timing_of(schedule) if editing else None
    form = ScheduleForm(request.POST or None, instance=schedule, agents=agents)
    if request.method == "POST" and form.is_valid():
        if editing is None and Schedule.objects.filter(owner=request.user).count() >= MOST_SCHEDULES:
            form.add_error(None, _("You have %(n)s schedules, the most one person may keep.") % {"n": MOST_SCHEDULES})
        else:
            try:
                services.save(form.instance, timing_before=before)
                return redirect("schedules:list")
            except ValidationError as error:
                for field, messages in error.message_dict.items():
                    form.add_error(field if field in form.fields else None, messages)
    now = timezone.now()
    schedules = [describe(s, now) for s in Schedule.objects.filter(owner=request.user).order_by("pk")]
    return render(request, "schedules/list.html", {"schedules": schedules, "form": form, "editing": editing})


@login_required
def listing(request):
    return edit_page(request, None)


@login_required
def edit(request, pk: int):
    return edit_page(request, own(request, pk))


@login_required
def history(request, pk: int):
    schedule = own(request, pk)
    rows = schedule.runs.select_related("thread", "run")[:HISTORY_ROWS]
    return render(request, "schedules/history.html", {**describe(schedule, timezone.now()), "rows": rows})


@login_required
@require_POST
def pause(request, pk: int):
    services.pause(own(request, pk))
    return redirect("schedules:list")


@login_required
@require_POST
def resume(request, pk: int):
    services.resume(own(request, pk))
    return redirect("schedules:list")


@login_required
@require_POST
def delete(request, pk: int):
    own(request, pk).delete()
    return redirect("schedules:list")


@login_required
@require_POST
def fire_now(request, pk: int):
    """One firing now, besides the schedule's own slots; its history shows how it went."""
    job = run_now(own(request, pk))

    async def start() -> None:
        await detached(fire_safely(job))

    async_to_sync(start)()
    return redirect("schedules:history", pk=pk)


urlpatterns = [
    path("", listing, name="list"),
    path("<int:pk>/", edit, name="edit"),
    path("<int:pk>/history", history, name="history"),
    path("<int:pk>/pause", pause, name="pause"),
    path("<int:pk>/resume", resume, name="resume"),
    path("<int:pk>/run", fire_now, name="run"),
    path("<int:pk>/delete", delete, name="delete"),
]
