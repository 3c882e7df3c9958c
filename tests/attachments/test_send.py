"""message.send with attachments, through the websocket against the scripted model server: images in each
provider's wire format, text files' and PDFs' text in the context (capped), refusals before anything is written,
InjectedAttachments, and the files going with their thread."""

from __future__ import annotations

import base64
import json

import pytest
from channels.db import database_sync_to_async
from django.core.files.storage import default_storage
from django.test import Client as PageClient

from attachments.models import Attachment
from attachments.services import store_upload
from chat.models import Message, Run, Thread
from tests.attachments.files import pdf, png
from tests.support.model_server import (
    NDJSONResponse,
    SSEResponse,
    anthropic_sse_body,
    ollama_ndjson_body,
    openai_sse_body,
)

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async
PNG64 = base64.b64encode(png()).decode()


@pytest.fixture
def model_server(model_server, settings):
    """tests/conftest.py's, with a model that takes images."""
    settings.AGENTWEB_LLM_SUPPORTS_IMAGES = True
    return model_server


@db
def uploaded(user, name: str, data: bytes) -> str:
    return str(store_upload(owner=user, name=name, data=data).pk)


def last_user_message(request: dict) -> dict:
    return [m for m in request["json"]["messages"] if m["role"] == "user"][-1]


async def test_an_image_reaches_an_openai_compatible_model_as_an_image_url_part(connect, owner, model_server):
    image = await uploaded(owner, "cat.png", png())
    model_server.enqueue(SSEResponse(openai_sse_body(text="A red square.")))
    client = await connect(owner)
    await client.ask("What is this?", attachments=[image])
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert last_user_message(model_server.requests[0])["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
    ]
    row = await db(Attachment.objects.select_related("message").get)(pk=image)
    assert row.thread_id is not None and row.message.role == "user"
    assert row.message.attachments[0]["name"] == "cat.png"


async def test_a_message_of_files_only_is_sent_and_names_its_new_chat(connect, owner, model_server):
    image = await uploaded(owner, "cat.png", png())
    model_server.enqueue(SSEResponse(openai_sse_body(text="A red square.")))
    client = await connect(owner)
    await client.ask("", attachments=[image])
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.completed"
    assert last_user_message(model_server.requests[0])["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
    ]
    assert events[0] == {**events[0], "type": "thread.created", "title": "cat.png"}


async def test_a_message_with_neither_text_nor_files_is_refused(connect, owner, model_server):
    client = await connect(owner)
    await client.ask("", attachments=[])
    error = await client.receive()
    assert (error["type"], error["code"]) == ("error", "bad_frame")
    assert "content" in error["message"]
    assert not await Message.objects.aexists()


async def test_an_image_reaches_anthropic_as_an_image_block(connect, owner, model_server, settings):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "api": "anthropic"}
    image = await uploaded(owner, "cat.png", png())
    model_server.enqueue(SSEResponse(anthropic_sse_body(text="A red square.")))
    client = await connect(owner)
    await client.ask("What is this?", attachments=[image])
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    assert model_server.requests[0]["path"].endswith("/messages")
    assert last_user_message(model_server.requests[0])["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG64}},
        {"type": "text", "text": "What is this?"},
    ]


async def test_an_image_reaches_ollama_in_images(connect, owner, model_server, settings):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "api": "ollama"}
    image = await uploaded(owner, "cat.png", png())
    model_server.enqueue(NDJSONResponse(ollama_ndjson_body(text="A red square.")))
    client = await connect(owner)
    await client.ask("What is this?", attachments=[image])
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    message = last_user_message(model_server.requests[0])
    assert message["content"] == "What is this?" and message["images"] == [PNG64]


async def test_a_text_protocol_says_the_image_is_not_sent(connect, owner, model_server, settings):
    settings.AGENTWEB_LLM = {**settings.AGENTWEB_LLM, "tool_protocol": "hermes"}
    image = await uploaded(owner, "cat.png", png())
    model_server.enqueue(SSEResponse(openai_sse_body(text="I cannot see it.")))
    client = await connect(owner)
    await client.ask("What is this?", attachments=[image])
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    content = last_user_message(model_server.requests[0])["content"]
    assert isinstance(content, str) and "not sent: cat.png" in content and PNG64 not in content


async def test_text_files_and_pdfs_go_into_the_context_capped(connect, owner, model_server, settings):
    settings.AGENTWEB_ATTACHMENT_TEXT_CHARS = 30
    notes = await uploaded(owner, "notes.txt", ("line one\n" * 10).encode())
    report = await uploaded(owner, "report.pdf", pdf("Revenue grew"))
    model_server.enqueue(SSEResponse(openai_sse_body(text="Read them.")))
    client = await connect(owner)
    await client.ask("Summarise", attachments=[notes, report])
    assert (await client.run_to_end())[-1]["type"] == "run.completed"
    content = last_user_message(model_server.requests[0])["content"]
    assert content.startswith("Summarise\n\n--- attached file notes.txt (text/plain, 90 B) ---\n")
    assert "line one\n" * 3 + "lin\n--- end of notes.txt: cut at its first 30 of 90 characters ---" in content
    assert "--- attached file report.pdf (PDF," in content and "Revenue grew\n--- end of report.pdf ---" in content
    # The thread shows the cap: the message's attachments say it.
    message = await db(Message.objects.get)(role="user")
    assert [(a["name"], a["chars"], a["capped_at"]) for a in message.attachments] == [
        ("notes.txt", 90, 30),
        ("report.pdf", 12, None),
    ]


async def test_a_model_without_images_refuses_before_anything_is_written(connect, owner, model_server, settings):
    settings.AGENTWEB_LLM_SUPPORTS_IMAGES = False
    image = await uploaded(owner, "cat.png", png())
    client = await connect(owner)
    await client.ask("What is this?", attachments=[image], ref="r1")
    error = await client.receive()
    assert error["type"] == "error" and error["code"] == "images_not_supported"
    assert "does not take images" in error["message"] and error["ref"] == "r1"
    assert not await db(Thread.objects.exists)()
    assert not await db(Run.objects.exists)()
    assert (await db(Attachment.objects.get)(pk=image)).message_id is None
    assert model_server.requests == []


async def test_someone_elses_upload_or_a_sent_one_is_not_found(connect, owner, stranger, model_server):
    theirs = await uploaded(stranger, "theirs.txt", b"their secret")
    client = await connect(owner)
    await client.ask("Read this", attachments=[theirs])
    error = await client.receive()
    assert error["type"] == "error" and error["code"] == "not_found"
    assert not await db(Message.objects.exists)()

    mine = await uploaded(owner, "mine.txt", b"mine")
    model_server.enqueue(SSEResponse(openai_sse_body(text="ok")))
    await client.ask("Read this", attachments=[mine])
    events = await client.run_to_end()
    thread = next(e for e in events if e["type"] == "thread.created")["thread"]
    await client.ask("And again", thread=thread, attachments=[mine])
    error = await client.receive()
    assert error["type"] == "error" and error["code"] == "not_found"
    assert await db(Message.objects.filter(role="user").count)() == 1
    for bad in (["not-a-uuid"], [mine, mine]):
        await client.ask("x", thread=thread, attachments=bad)
        assert (await client.receive())["code"] == "not_found"


async def test_a_tool_receives_the_messages_attachments(connect, owner, model_server, settings):
    from tools.models import bump_settings_stamp
    from tools.registry import default_registry
    from tools.services import sync_tool_settings

    settings.AGENTWEB_TOOL_MODULES = ["tests.support.tools_for_tests"]
    default_registry.cache_clear()
    await db(sync_tool_settings)()
    await db(bump_settings_stamp)()
    try:
        notes = await uploaded(owner, "notes.txt", b"hello tools")
        image = await uploaded(owner, "cat.png", png())
        model_server.enqueue(
            SSEResponse(openai_sse_body(tool_calls=[{"id": "c1", "name": "describe_attachments", "arguments": {}}])),
            SSEResponse(openai_sse_body(text="Described.")),
        )
        client = await connect(owner)
        await client.ask("Describe", attachments=[notes, image])
        events = await client.run_to_end()
        completed = next(e for e in events if e["type"] == "tool_call.completed")
        assert json.loads(completed["content"]) == [
            {
                "name": "notes.txt",
                "content_type": "text/plain",
                "size": 11,
                "text": "hello tools",
                "head": base64.b64encode(b"hello to").decode(),
            },
            {
                "name": "cat.png",
                "content_type": "image/png",
                "size": len(png()),
                "text": None,
                "head": base64.b64encode(png()[:8]).decode(),
            },
        ]
    finally:
        default_registry.cache_clear()


async def test_deleting_the_thread_deletes_the_files(connect, owner, model_server):
    image = await uploaded(owner, "cat.png", png())
    notes = await uploaded(owner, "notes.txt", b"notes")
    model_server.enqueue(SSEResponse(openai_sse_body(text="ok")))
    client = await connect(owner)
    await client.ask("Look", attachments=[image, notes])
    events = await client.run_to_end()
    thread = next(e for e in events if e["type"] == "thread.created")["thread"]
    paths = await db(lambda: list(Attachment.objects.values_list("path", flat=True)))()
    assert len(paths) == 2 and all(default_storage.exists(p) for p in paths)

    def delete():
        page = PageClient()
        page.force_login(owner)
        return page.post(f"/t/{thread}/delete").status_code

    assert await db(delete)() in (200, 204, 302)
    assert not await db(Attachment.objects.exists)()
    assert not any(default_storage.exists(p) for p in paths)


async def test_the_snapshot_shows_a_messages_attachments(connect, owner, model_server):
    notes = await uploaded(owner, "notes.txt", b"notes")
    model_server.enqueue(SSEResponse(openai_sse_body(text="ok")))
    client = await connect(owner)
    await client.ask("Look", attachments=[notes])
    events = await client.run_to_end()
    thread = next(e for e in events if e["type"] == "thread.created")["thread"]
    await client.send(type="thread.subscribe", thread=thread)
    snapshot = (await client.until("thread.snapshot"))[-1]
    user = next(m for m in snapshot["messages"] if m["role"] == "user")
    assert [(a["id"], a["name"], a["kind"], a["size"]) for a in user["attachments"]] == [
        (notes, "notes.txt", "text", 5)
    ]
