"""A thread downloads as Markdown and JSON, for its owner only, with nothing secret in it."""

import json
import re

import pytest
from django.urls import reverse

from chat.models import Run, ToolCall

pytestmark = pytest.mark.django_db


def md_url(thread):
    return reverse("sharing:export_md", args=[thread.id])


def json_url(thread):
    return reverse("sharing:export_json", args=[thread.id])


def test_it_exports_json_with_messages_tool_calls_timings_and_runs(as_owner, thread):
    data = json.loads(as_owner.get(json_url(thread)).getvalue())
    assert data["thread"]["title"] == "What is 23*19?"
    assert [(m["role"], m["content"]) for m in data["messages"]] == [
        ("user", "what is 23*19?"),
        ("assistant", "Let me work that out."),
        ("assistant", "23*19 = 437."),
    ]
    assert all(m["status"] == "complete" and m["created_at"] for m in data["messages"])
    call = data["messages"][1]["tool_calls"][0]
    assert (call["name"], call["arguments"], call["status"], call["result"], call["error"]) == (
        "calculator",
        {"expression": "23*19"},
        "success",
        "437",
        None,
    )
    assert call["started_at"].startswith("2025-03-01T12:00:00") and call["duration_ms"] == 12
    assert call["finished_at"].startswith("2025-03-01T12:00:00.012")
    assert data["runs"][0]["status"] == "completed" and data["runs"][0]["model"] == "Demo model"
    assert data["messages"][0]["run"] == data["runs"][0]["id"]


def test_it_exports_the_error_of_a_failed_tool_call(as_owner, thread):
    ToolCall.objects.update(status="error", result="", error="division by zero")
    call = json.loads(as_owner.get(json_url(thread)).getvalue())["messages"][1]["tool_calls"][0]
    assert (call["status"], call["result"], call["error"]) == ("error", None, "division by zero")


def test_it_exports_json_as_an_attachment_named_after_the_title(as_owner, thread):
    response = as_owner.get(json_url(thread))
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="what-is-2319.json"'


def test_it_exports_markdown_with_messages_and_tool_calls(as_owner, thread):
    text = as_owner.get(md_url(thread)).getvalue().decode()
    assert text.startswith("# What is 23*19?\n")
    assert text.index("what is 23*19?") < text.index("Let me work that out.") < text.index("23*19 = 437.")
    assert "### Tool call `calculator` — success, 12 ms" in text
    assert '```json\n{\n  "expression": "23*19"\n}\n```' in text
    assert "Result:\n\n```\n437\n```" in text
    assert "- Run " in text and "completed (done)" in text


def test_its_markdown_gives_times_to_the_second_in_utc_as_a_person_reads_them(as_owner, thread):
    text = as_owner.get(md_url(thread)).getvalue().decode()
    assert "- Started: 2025-03-01 12:00:00 UTC; finished: 2025-03-01 12:00:00 UTC" in text
    assert re.search(r"^- Created: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$", text, re.MULTILINE)
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d", text)  # no fractions of a second anywhere
    assert "+00:00" not in text


def test_it_exports_arguments_that_could_not_be_read_as_the_model_wrote_them(as_owner, thread):
    ToolCall.objects.update(args='{"expression": "23*', status="error", result="", error="not valid JSON")
    text = as_owner.get(md_url(thread)).getvalue().decode()
    assert 'Arguments:\n\n```\n{"expression": "23*\n```' in text


def test_it_fences_a_result_that_holds_a_fence_so_it_cannot_close_the_block(as_owner, thread):
    ToolCall.objects.update(result="before\n```\nafter")
    text = as_owner.get(md_url(thread)).getvalue().decode()
    assert "````\nbefore\n```\nafter\n````" in text


def test_it_exports_markdown_as_an_attachment_named_after_the_title(as_owner, thread):
    response = as_owner.get(md_url(thread))
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="what-is-2319.md"'


def test_it_names_the_file_after_the_id_when_the_title_has_no_letters(as_owner, thread):
    thread.title = "???"
    thread.save()
    assert f'filename="thread-{str(thread.id)[:8]}.md"' in as_owner.get(md_url(thread))["Content-Disposition"]


def test_it_404s_for_a_stranger(as_stranger, thread):
    assert as_stranger.get(md_url(thread)).status_code == 404
    assert as_stranger.get(json_url(thread)).status_code == 404


def test_it_sends_an_anonymous_visitor_to_the_login_page(anonymous, thread):
    assert anonymous.get(json_url(thread)).status_code == 302


def test_it_never_includes_a_model_api_key(as_owner, thread):
    from modelconfig.models import ModelConfiguration

    config = ModelConfiguration.objects.create(name="Work model", model="m", api_key="sk-secret-model-key")
    thread.model_choice = str(config.pk)
    thread.save()
    for url in (md_url(thread), json_url(thread)):
        assert "sk-secret-model-key" not in as_owner.get(url).getvalue().decode()


def test_it_never_includes_an_http_tool_header_value(as_owner, thread):
    from tools.models import HttpTool

    HttpTool.objects.create(
        name="calculator",
        description="Calculates remotely.",
        parameters={"type": "object", "properties": {}},
        url_template="https://calc.example.com/",
        headers={"Authorization": "Bearer hdr-secret-value"},
    )
    for url in (md_url(thread), json_url(thread)):
        assert "hdr-secret-value" not in as_owner.get(url).getvalue().decode()


def test_it_leaves_out_url_credentials_that_runs_recorded_before_they_were_kept_out(as_owner, thread):
    url = "http://alice:pa55-w0rd@models.internal/v1"
    Run.objects.filter(thread=thread).update(model_label=f"qwen3 · {url}", error=f"The model server at {url} failed.")
    data = json.loads(as_owner.get(json_url(thread)).getvalue())
    assert data["runs"][0]["model"] == "qwen3 · http://models.internal/v1"
    assert data["runs"][0]["error"] == "The model server at http://models.internal/v1 failed."
    assert "pa55-w0rd" not in as_owner.get(md_url(thread)).getvalue().decode()


@pytest.mark.parametrize("messages", [0, 1, 7])
def test_the_json_export_streams_in_batches_the_same_bytes_as_one_document(owner, monkeypatch, messages):
    """A long thread's export is read and sent a few messages at a time (its memory stays flat, bench/data), and the
    file is the very document json.dumps writes of the whole thread."""
    from chat.models import Message, Thread
    from sharing import export

    monkeypatch.setattr(export, "EXPORT_BATCH", 3)
    thread = Thread.objects.create(owner=owner, title="long")
    for order in range(1, messages + 1):
        role = Message.Role.USER if order % 2 else Message.Role.ASSISTANT
        Message.objects.create(thread=thread, order=order, role=role, content=f'line {order} "quoted"\nnext é')
    chunks = list(export.export_json_chunks(thread))
    whole = json.loads("".join(chunks))
    assert [m["content"] for m in whole["messages"]] == [f'line {n} "quoted"\nnext é' for n in range(1, messages + 1)]
    expected = json.dumps({**whole}, indent=2, ensure_ascii=False) + "\n"
    assert "".join(chunks) == expected
    assert len(chunks) == max(1, -(-messages // 3) + 1)
