"""GET /t/<thread>/tool-calls/<call>/artifact: the artifact a tool stored, for its owner only."""

import base64
import json
import re
import uuid

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from chat import store
from chat.models import Message, Thread, ToolCall
from chat.thread_views import ARTIFACT_MAX_BYTES

pytestmark = pytest.mark.django_db


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def url(thread_id, call_id) -> str:
    return f"/t/{thread_id}/tool-calls/{call_id}/artifact"


def step_with_call(thread, *, call_id="c1", name="report", artifact=None, order=None) -> ToolCall:
    """An assistant step calling `name`, and the tool message that answered it with `artifact`."""
    order = order or store.next_order(thread)
    step = Message.objects.create(thread=thread, order=order, role=Message.Role.ASSISTANT)
    call = ToolCall.objects.create(message=step, call_id=call_id, name=name, status=ToolCall.Status.SUCCESS)
    Message.objects.create(
        thread=thread,
        order=order + 1,
        role=Message.Role.TOOL,
        content="done",
        tool_call_id=call_id,
        name=name,
        artifact=artifact,
    )
    return call


@pytest.fixture
def thread(owner):
    thread = Thread.objects.create(owner=owner, title="t")
    Message.objects.create(thread=thread, order=1, role=Message.Role.USER, content="go")
    return thread


def test_the_owner_gets_the_artifact_as_json(owner, thread):
    artifact = {"rows": [{"a": 1}, {"a": 2}], "text": "<b>not markup</b>", "unicode": "ça"}
    call = step_with_call(thread, artifact=artifact)
    response = login(owner).get(url(thread.pk, call.pk))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["artifact"] == artifact
    assert body["truncated"] is False
    assert body["name"] == "report"
    assert body["tool_call"] == str(call.pk)


@pytest.mark.parametrize("artifact", [[1, 2, 3], "just text", 0, False])
def test_any_json_value_is_an_artifact(owner, thread, artifact):
    call = step_with_call(thread, artifact=artifact)
    assert login(owner).get(url(thread.pk, call.pk)).json()["artifact"] == artifact


def page(response) -> bytes:
    """The response's HTML less its CSRF token, which is masked anew on every page."""
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]*"', b"", response.content)


def test_another_user_and_a_random_id_get_the_same_404(owner, stranger, thread):
    call = step_with_call(thread, artifact={"secret": "s3cret"})
    stranger_client = login(stranger)
    as_stranger = stranger_client.get(url(thread.pk, call.pk))
    # The page names whoever is signed in, so each 404 is compared with the same person's 404 for nothing.
    random_call = stranger_client.get(url(thread.pk, uuid.uuid4()))
    random_thread = stranger_client.get(url(uuid.uuid4(), call.pk))
    assert as_stranger.status_code == random_call.status_code == random_thread.status_code == 404
    assert page(as_stranger) == page(random_call) == page(random_thread)
    assert login(owner).get(url(uuid.uuid4(), call.pk)).status_code == 404
    assert b"s3cret" not in as_stranger.content


def test_a_call_of_another_thread_of_the_same_user_is_not_found(owner, thread):
    call = step_with_call(thread, artifact={"x": 1})
    other = Thread.objects.create(owner=owner, title="other")
    assert login(owner).get(url(other.pk, call.pk)).status_code == 404


def test_a_call_without_an_artifact_is_a_404_that_says_so(owner, thread):
    call = step_with_call(thread, artifact=None)
    response = login(owner).get(url(thread.pk, call.pk))
    assert response.status_code == 404
    assert "no artifact" in response.json()["error"]


def test_a_reused_call_id_finds_the_answer_of_its_own_step(owner, thread):
    first = step_with_call(thread, call_id="c1", artifact={"step": 1})
    second = step_with_call(thread, call_id="c1", artifact={"step": 2})
    client = login(owner)
    assert client.get(url(thread.pk, first.pk)).json()["artifact"] == {"step": 1}
    assert client.get(url(thread.pk, second.pk)).json()["artifact"] == {"step": 2}


def test_a_big_artifact_comes_back_cut_with_a_note(owner, thread):
    artifact = {"rows": ["é" * 1000 for _ in range(1500)]}  # 3 MB as UTF-8
    call = step_with_call(thread, artifact=artifact)
    body = login(owner).get(url(thread.pk, call.pk)).json()
    assert body["truncated"] is True
    assert "artifact" not in body
    assert body["size"] == len(json.dumps(artifact, ensure_ascii=False, separators=(",", ":")).encode())
    assert body["limit"] == ARTIFACT_MAX_BYTES
    preview = body["preview"].encode()
    assert ARTIFACT_MAX_BYTES - 4 <= len(preview) <= ARTIFACT_MAX_BYTES
    assert body["preview"].startswith('{\n  "rows": [\n    "éé')


def test_an_artifact_with_an_image_of_a_few_megabytes_comes_back_whole_for_the_card(owner, thread):
    image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"x" * 3_000_000).decode()
    artifact = {"content": [{"type": "image", "mimeType": "image/png", "data": image}], "note": "a chart"}
    call = step_with_call(thread, artifact=artifact)
    body = login(owner).get(url(thread.pk, call.pk)).json()
    assert body["truncated"] is False
    assert body["artifact"] == artifact


def test_login_is_required_and_only_get_is_allowed(owner, thread):
    call = step_with_call(thread, artifact={"x": 1})
    anonymous = Client().get(url(thread.pk, call.pk))
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]
    assert login(owner).post(url(thread.pk, call.pk)).status_code == 405


def snapshot_calls(thread) -> dict[str, bool]:
    snapshot = store.build_snapshot(thread=thread, seq=0, model={})
    return {
        call["id"]: call["has_artifact"] for message in snapshot["messages"] for call in message.get("tool_calls", [])
    }


def test_a_page_loaded_later_is_told_which_calls_stored_an_artifact(owner, thread):
    with_one = step_with_call(thread, call_id="c1", artifact={"rows": [1]})
    without = step_with_call(thread, call_id="c2", artifact=None)

    assert snapshot_calls(thread) == {str(with_one.pk): True, str(without.pk): False}


def test_a_reused_call_id_is_told_by_its_own_steps_answer(owner, thread):
    first = step_with_call(thread, call_id="c1", artifact=None)
    second = step_with_call(thread, call_id="c1", artifact={"rows": [2]})

    assert snapshot_calls(thread) == {str(first.pk): False, str(second.pk): True}


def test_a_chat_without_tool_calls_is_snapshotted_without_reading_tool_answers(owner, thread):
    step = Message.objects.create(thread=thread, order=store.next_order(thread), role=Message.Role.USER, content="hi")
    Message.objects.create(thread=thread, order=step.order + 1, role=Message.Role.ASSISTANT, content="hello")
    with_calls = Thread.objects.create(owner=owner, title="with calls")
    step_with_call(with_calls, artifact={"rows": [1]})

    with CaptureQueriesContext(connection) as plain:
        store.build_snapshot(thread=thread, seq=0, model={})
    with CaptureQueriesContext(connection) as called:
        store.build_snapshot(thread=with_calls, seq=0, model={})

    assert len(plain) == len(called) - 1
