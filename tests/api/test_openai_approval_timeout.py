"""A chat completion whose tool call waits for approval longer than AGENTWEB_API_APPROVAL_TIMEOUT: the response ends
with an error naming the thread, while the run itself waits on in the chat (a real server, the official client)."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.support.model_server import SSEResponse, openai_sse_body
from tests.support.processes import manage
from tests.support.served_api import Key, served_api

ASK = {"id": "m1", "name": "send_email", "arguments": {"to": "a@example.com", "subject": "Hi"}}
RUN_STATUS = "from chat.models import Run; print(Run.objects.get(thread_id={thread!r}).status)"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with served_api(
        tmp_path_factory.mktemp("approval-timeout"),
        {"ada": "api-tests-password-1"},
        keys={"ada": Key("ada", "k")},
        AGENTWEB_TOOL_MODULES="tests.support.approval_tools",
        AGENTWEB_SSE_KEEPALIVE="0.2",
        AGENTWEB_API_APPROVAL_TIMEOUT="1",
    ) as app:
        yield app


def last_line(env, code: str) -> str:
    return manage(env, "shell", "-c", code).strip().splitlines()[-1]


def test_a_stream_says_it_waits_then_ends_with_an_error_naming_the_thread(app):
    app["model"].enqueue(SSEResponse(openai_sse_body(tool_calls=[ASK])))
    body = {"model": "model:default", "messages": [{"role": "user", "content": "mail"}], "stream": True}
    headers = {"Authorization": f"Bearer {app['keys']['ada']}"}
    with httpx.stream("POST", f"{app['base_url']}/v1/chat/completions", json=body, headers=headers, timeout=60) as r:
        thread = r.headers["X-Agentweb-Thread"]
        lines = [line for line in r.iter_lines() if line]
    assert ": waiting for approval: send_email" in lines
    error = next(line for line in lines if line.startswith('data: {"error"'))
    assert '"code": "approval_timeout"' in error and thread in error
    assert lines[-1] == "data: [DONE]"
    assert last_line(app["env"], RUN_STATUS.format(thread=thread)) == "waiting"


def test_a_whole_answer_is_a_504_naming_the_thread_and_the_run_waits_on(app):
    app["model"].enqueue(SSEResponse(openai_sse_body(tool_calls=[ASK])))
    client = openai.OpenAI(base_url=f"{app['base_url']}/v1", api_key=app["keys"]["ada"], max_retries=0)
    with pytest.raises(openai.APIStatusError) as refused:
        client.chat.completions.with_raw_response.create(
            model="model:default", messages=[{"role": "user", "content": "mail"}]
        )
    thread = refused.value.response.headers["X-Agentweb-Thread"]
    assert refused.value.status_code == 504
    assert refused.value.body["code"] == "approval_timeout" and thread in refused.value.body["message"]
    assert last_line(app["env"], RUN_STATUS.format(thread=thread)) == "waiting"
