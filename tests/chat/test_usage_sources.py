"""Usage rows say where their run came from: a run a program started with an API key writes rows that name the key
(the admin's report filters on them); a browser's run writes rows with no key. Real rows: the turn opened as the API
opens it (api/auth.py caller_of), the run's meter set up as a run sets it up, its rows written as a run ends."""

import uuid

import pytest

from api.auth import caller_of
from api.models import ApiKey
from chat import store
from chat.caller import Caller
from chat.models import Run, Usage
from chat.runs.execute import meter_for
from chat.runs.start import open_turn
from chat.usage import Meter
from providers.config import ModelConfig
from tools.settings_cache import SETTINGS_CACHE

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def forget_kept_settings():
    """The turns here keep the model they read under the settings stamp, which a test's rollback leaves as it was:
    a later test serving another model (tests/conftest.py model_server) must not be given this one."""
    yield
    SETTINGS_CACHE.clear()


def run_spending(owner, caller: Caller) -> Run:
    """A turn opened by `caller`, whose run made one model call and ended."""
    turn, _setup, _info = open_turn(
        user=owner,
        session_key=None,
        thread_id=None,
        content="hi",
        client_msg_id=uuid.uuid4(),
        model=None,
        caller=caller,
    )
    run = Run.objects.get(pk=turn.run.pk)
    meter = meter_for(Meter(), turn.thread, run, ModelConfig(), {"id": None, "label": "Demo"}, None)
    meter.record({"input_tokens": 12, "output_tokens": 3, "estimated": False})
    store.finish_run(run_id=run.pk, status=Run.Status.COMPLETED, steps=1, usage=meter.take_rows(), totals=meter.totals)
    return run


def test_a_runs_usage_through_the_api_names_its_key(owner):
    key, _ = ApiKey.issue(owner, "cron job")
    run = run_spending(owner, caller_of(key))
    assert (run.source, run.api_key_id) == ("api", key.pk)
    row = Usage.objects.get(run=run)
    assert (row.source, row.api_key_id, row.user_id, row.input_tokens) == ("api", key.pk, owner.pk, 12)


def test_a_browsers_run_writes_usage_with_no_key(owner):
    browser = Caller(current=lambda: owner)  # a signed-in tab's session, as Caller.session reads it
    run = run_spending(owner, browser)
    row = Usage.objects.get(run=run)
    assert (run.source, row.source, row.api_key_id) == ("chat", "chat", None)


def test_the_rows_keep_their_source_when_the_key_is_deleted(owner):
    key, _ = ApiKey.issue(owner, "cron job")
    run = run_spending(owner, caller_of(key))
    key.delete()
    row = Usage.objects.get(run=run)
    assert (row.source, row.api_key_id) == ("api", None)
