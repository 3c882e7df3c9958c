"""The run API's request and response bodies (/api/v1/, docs/api.md): pydantic schemas, which django-ninja checks
requests against and writes into the OpenAPI schema.

A thread as read (GET /threads/{id}) is not declared here: it is the websocket's own `thread.snapshot`
(chat/live/views.py SnapshotView, docs/protocol.md), one representation for tabs and programs."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from ninja import Field, Schema

#: A message's text as the chat takes it; a longer one is refused (413) before anything is written.
CONTENT_FIELD = Field(..., description="The message's text (Markdown), as typed in the chat.")


class ErrorDetail(Schema):
    code: str = Field(..., description="The websocket's `error` codes (docs/protocol.md), plus the API's own.")
    message: str


class ErrorBody(Schema):
    """Every refusal: `{"error": {"code", "message"}}`, with a 4xx status."""

    error: ErrorDetail


class AgentRef(Schema):
    slug: str
    name: str


class ThreadItem(Schema):
    """A thread as a list shows it."""

    id: uuid.UUID
    title: str
    source: Literal["chat", "api"] = Field(..., description="Where its first message came from.")
    agent: AgentRef | None
    pinned: bool
    archived: bool
    created_at: datetime
    updated_at: datetime


class ThreadPage(Schema):
    threads: list[ThreadItem]
    next_offset: int | None = Field(..., description="Pass as `offset` for the next page; null: this was the last.")


class MessageIn(Schema):
    """A person's message, as the chat's `message.send` carries it."""

    content: str = CONTENT_FIELD
    client_msg_id: uuid.UUID | None = Field(
        None, description="Makes the send idempotent: the same id again does nothing more (a new one if omitted)."
    )
    model: str | None = Field(None, description="A model id the person may pick (GET /v1/models); the thread keeps it.")
    agent: str | None = Field(None, description="An agent's slug, for a new thread only (an existing one keeps its).")


class NewThreadIn(MessageIn):
    """A new thread starts with its first message (as in the chat); `title` replaces the one made from it."""

    content: str = CONTENT_FIELD
    title: str | None = Field(None, max_length=200)


class EditIn(Schema):
    """A message's new version (the chat's `message.edit`)."""

    content: str = CONTENT_FIELD
    client_msg_id: uuid.UUID | None = Field(None, description="Makes the edit idempotent (a new one if omitted).")


class TurnOut(Schema):
    """What a send (or a retry, continue) started: follow it with GET /threads/{thread}/events."""

    thread: uuid.UUID
    message: int | None = Field(..., description="The person's message (null for a retry or a continue).")
    run: int | None = Field(..., description="The run answering; null when the same client_msg_id was sent already.")
    created_thread: bool


class ContinueIn(Schema):
    steps: int | None = Field(None, ge=1, le=200, description="Steps the run may take more (default: the agent's).")


class DecideIn(Schema):
    """A person's decision on a tool call that waits for approval (the chat's `tool_call.decide`)."""

    decision: Literal["approve", "edit", "reject", "respond", "reply"] = Field(
        ..., description="As the chat offers them; `reply` is another name for `respond` (the model is told `message`)."
    )
    args: dict[str, Any] | None = Field(None, description="`edit`: the arguments the call runs with instead.")
    message: str = Field("", max_length=4000, description="`reject`/`reply`: what the model is told.")
    for_thread: bool = Field(False, description="`approve`: approve this tool for the rest of the thread.")


class DecideOut(Schema):
    resumed: bool = Field(..., description="This decision was the last the paused step waited for: the run goes on.")


class InputIn(Schema):
    """An answer to a running tool's request for input (the chat's `tool_call.input`)."""

    tool_call: str
    request: str
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class InputOut(Schema):
    answered: bool = Field(..., description="The tool took the answer (false: not confirmed in time; it may still).")


class SwitchIn(Schema):
    to: int = Field(..., description="The id of the version to show (a message's `versions.ids`).")


class StoppedOut(Schema):
    stopped: bool


class Snapshot(Schema):
    """The websocket's `thread.snapshot` event (docs/protocol.md): title, model, agent, messages with their tool
    calls and versions, the latest run. Its fields are not repeated here: chat/live/views.py is their one definition."""

    model_config = {"extra": "allow", "json_schema_extra": {"additionalProperties": True}}

    type: Literal["thread.snapshot"]
    thread: uuid.UUID
    seq: int
