"""A schedule that paused itself (its owner lost a tool of its agent) says why where its owner and an operator look:
the list at /schedules/, its history page, and `manage.py schedules list`; resuming clears the reason."""

from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.test import Client

from schedules.models import Schedule
from schedules.ticker import tick
from tools.models import ToolSetting
from tools.services import sync_tool_settings

from .conftest import T0, make_schedule

pytestmark = pytest.mark.django_db(transaction=True)


def paused_by_a_lost_tool(owner, agent) -> Schedule:
    sync_tool_settings()
    agent.all_tools, agent.tools = False, ["calculator"]
    agent.save()
    ToolSetting.objects.filter(name="calculator").update(enabled=False)
    schedule = make_schedule(owner)
    async_to_sync(tick)(T0)
    schedule.refresh_from_db()
    assert schedule.paused
    return schedule


def test_the_reason_is_on_the_list_and_the_history_page(owner, agent):
    schedule = paused_by_a_lost_tool(owner, agent)
    client = Client()
    client.force_login(owner)
    listing = client.get("/schedules/").content.decode()
    assert "Paused" in listing and "may no longer use (&#x27;calculator&#x27;)" in listing
    history = client.get(f"/schedules/{schedule.pk}/history").content.decode()
    assert "may no longer use (&#x27;calculator&#x27;)" in history
    client.post(f"/schedules/{schedule.pk}/resume")
    assert "may no longer use" not in client.get("/schedules/").content.decode()


def test_the_reason_is_in_schedules_list(owner, agent):
    schedule = paused_by_a_lost_tool(owner, agent)
    out = StringIO()
    call_command("schedules", "list", stdout=out)
    line = out.getvalue().strip()
    assert line.startswith(f"{schedule.pk}\t{owner.username}\tdaily\t")
    assert line.endswith("\tpaused: " + schedule.pause_reason)
    assert "'calculator'" in line
