"""What the server sends fits what docs/protocol.md says, through the one definition of each shape
(chat/live/views.py): the doc's tables against the declared shapes, and every frame of real turns against them (the
tests' websocket client checks every frame it receives: tests/chat/conftest.py)."""

from __future__ import annotations

import copy
import json
import re
import types
import uuid
from pathlib import Path
from typing import Any, Union, get_args, get_origin, is_typeddict

import pytest
from channels.db import database_sync_to_async

from chat import live, store
from chat.live import views
from chat.models import Message, Thread
from chat.runs.subscribe import _snapshot, rebuild
from tests.support.model_server import SSEResponse, openai_sse_body
from tests.support.views import check_frame, frame_problems, keys_of, problems

PROTOCOL = (Path(__file__).resolve().parents[3] / "docs" / "protocol.md").read_text()
PROSE = re.sub(r"```.*?```", "", PROTOCOL, flags=re.S)  # without the code blocks, whose backticks pair otherwise
EVERY_EVENT = {**views.THREAD_EVENTS, **views.LIST_EVENTS, **views.ANSWERS, "thread.snapshot": views.SnapshotView}


# --- reading the doc ------------------------------------------------------------------------------------------------


def server_rows() -> list[tuple[str, str, bool]]:
    """(event type, fields cell, whether in the v1 table) of every row of the doc's server → client tables: the
    tables of two columns whose first cell is an event type."""
    rows, v1 = [], False
    for line in PROTOCOL.splitlines():
        if line.startswith("#"):
            v1 = line.strip() == "## Server → client"
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")] if line.startswith("| `") else []
        if len(cells) == 2 and re.fullmatch(r"`[a-z_]+(\.[a-z_]+)?`", cells[0]):
            rows.append((cells[0].strip("`"), cells[1], v1))
    return rows


def names_in(text: str) -> set[str]:
    """The field names a text mentions: `name`, `a.b` (both), and the members of `{a, b}`."""
    found = set()
    for quoted in re.findall(r"`([^`]+)`", text):
        if re.fullmatch(r"[a-z_]+(\.[a-z_]+)*", quoted):
            found.update(quoted.split("."))
        elif re.fullmatch(r"\{[a-z_, ]+\}", quoted):
            found.update(name.strip() for name in quoted.strip("{}").split(","))
    return found


def without_parentheses(text: str) -> str:
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", "", text)
    return text


def snapshot_example() -> dict[str, Any]:
    section = PROTOCOL.split("### `thread.snapshot`", 1)[1]
    return json.loads(section.split("```json", 1)[1].split("```", 1)[0])


def shape_of(hint: Any) -> type | None:
    """The TypedDict a field holds (itself, in a list, or or null), else None."""
    if is_typeddict(hint):
        return hint
    if get_origin(hint) in (list, Union, types.UnionType):
        return next((found for arm in get_args(hint) if (found := shape_of(arm)) is not None), None)
    return None


def every_shape() -> set[type]:
    """Every TypedDict a client is sent, the events' and the snapshot's, and those they hold."""
    found: set[type] = set()
    todo = list(EVERY_EVENT.values())
    while todo:
        shape = todo.pop()
        if shape in found:
            continue
        found.add(shape)
        todo += [inner for hint in keys_of(shape)[0].values() if (inner := shape_of(hint)) is not None]
    return found


ENVELOPE = {"type", "thread", "seq"}


# --- the doc against the declared shapes ----------------------------------------------------------------------------


def test_every_event_type_the_doc_lists_is_declared_and_every_declared_one_is_documented():
    documented = {kind for kind, _, _ in server_rows()}
    assert documented == set(EVERY_EVENT)


@pytest.mark.parametrize("kind", sorted(EVERY_EVENT))
def test_every_field_an_event_has_is_documented_for_it(kind):
    said = set().union(*(names_in(cells) for found, cells, _ in server_rows() if found == kind))
    if kind == "thread.snapshot":  # its section's example shows the fields its tables do not name
        said |= set(snapshot_example())
    fields = set(keys_of(EVERY_EVENT[kind])[0]) - ENVELOPE
    assert fields - said == set(), f"{kind}: fields sent that docs/protocol.md does not name for it"


def test_the_v1_tables_fields_are_fields_of_the_declared_shapes():
    """The fields each v1 row lists, and the keys it lists in parentheses after one (`run` (`id`, `status`)), are
    keys of the declared shape, which the server always sends."""
    checked = 0
    for kind, cells, v1 in server_rows():
        if not v1:
            continue
        declared, _ = keys_of(EVERY_EVENT[kind])
        for name in re.findall(r"`([a-z_]+)`", without_parentheses(cells)):
            assert name in declared.keys() | ENVELOPE, (kind, name)
            checked += 1
        for name, listed in re.findall(r"`([a-z_]+)` \(((?:`[a-z_]+`, )*`[a-z_]+`)\)", cells):
            inner, _ = keys_of(shape_of(declared[name]))
            assert set(re.findall(r"[a-z_]+", listed)) <= set(inner), (kind, name)
            checked += 1
    assert checked >= 30


def test_the_snapshot_example_fits_the_snapshot_view():
    example = snapshot_example()
    call = example["messages"][1]["tool_calls"][0]
    assert "A tool call's `id` is a string (a UUID)" in PROTOCOL  # the note under the example: its 7 stands for one
    call["id"] = str(call["id"])
    assert problems(example, views.SnapshotView, "snapshot", partial=True) == []
    assert {"tool_calls", "usage", "finish_reason"} <= set(example["messages"][1])


def test_every_key_of_every_shape_is_named_in_the_doc():
    said = names_in(PROSE)
    example = snapshot_example()
    said |= set(example) | set(example["model"]) | set(example["run"])
    said |= {key for message in example["messages"] for key in message}
    said |= set(example["messages"][1]["tool_calls"][0]) | set(example["messages"][1]["usage"])
    for shape in every_shape():
        assert set(keys_of(shape)[0]) - said == set(), shape.__name__


def test_the_objects_the_doc_spells_out_have_the_declared_keys():
    """Wherever the doc spells out the keys of a field's object (`allow` (`{approve, edit, reject, respond}`),
    `decision` (`decision`, `by`, `message`, `at`)), they are the keys of a shape a field of that name holds."""
    holders: dict[str, list[set[str]]] = {}
    for shape in every_shape():
        for name, hint in keys_of(shape)[0].items():
            if (inner := shape_of(hint)) is not None:
                holders.setdefault(name, []).append(set(keys_of(inner)[0]))
    spelled = re.findall(r"`([a-z_]+)`[^`]{0,60}?`\{([a-z_, ]+)\}`", PROSE)
    spelled += re.findall(r"`([a-z_]+)` \(((?:`[a-z_]+`, )+`[a-z_]+`)\)", PROSE)
    checked = 0
    for name, listed in spelled:
        if name not in holders:
            continue
        keys = set(re.findall(r"[a-z_]+", listed))
        assert any(keys <= declared for declared in holders[name]), (name, keys)
        checked += 1
    assert checked >= 12


# --- what real turns send -------------------------------------------------------------------------------------------


def streamed(text="", tool_calls=()):
    body = openai_sse_body(text=text, tool_calls=[{"id": i, "name": n, "arguments": a} for i, n, a in tool_calls])
    return SSEResponse(body, pieces=[f"{event}\n\n".encode() for event in body.split("\n\n") if event], delay=0.002)


@pytest.mark.django_db(transaction=True)
async def test_the_frames_of_a_turn_with_approvals_and_versions_fit_their_shapes(
    connect, owner, model_server, calculator_needs_approval, settings
):
    settings.AGENTWEB_COALESCE_WINDOW = 0.001
    both = [("c1", "calculator", {"expression": "1+1"}), ("c2", "calculator", {"expression": "2+2"})]
    model_server.enqueue(
        streamed("<think>Two sums.</think>Both need you. ", both),
        streamed("So it is 30, and the other one you declined."),
        streamed("Another answer, the second version."),
    )
    client = await connect(owner)
    await client.ask("two sums, please")
    sent = await client.until("run.waiting")
    thread = sent[0]["thread"]
    first, second = sent[-1]["tool_calls"]
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)  # a snapshot while calls wait
    sent += await client.until("thread.snapshot")
    await client.send(type="tool_call.decide", tool_call=first, decision="edit", args={"expression": "5*6"})
    sent += await client.until("tool_call.decided")
    await client.send(type="tool_call.decide", tool_call=second, decision="reject", message="not this one")
    sent += await client.run_to_end()
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)  # the decisions shown
    sent += await client.until("thread.snapshot")
    await client.send(type="run.regenerate", thread=thread)
    sent += await client.run_to_end()
    await client.send(type="thread.subscribe", thread=thread, after_seq=None)  # the versions shown
    sent += await client.until("thread.snapshot")
    await client.send(type="ping")
    sent += await client.until("pong")

    # The snapshot a tab gets when the run streams in another process: the last answer rebuilt from the log's tail.
    tail = await live.read_from_last(uuid.UUID(thread), "message.started")
    rebuilt = rebuild(await database_sync_to_async(_snapshot)(await Thread.objects.aget(pk=thread), 0), tail)
    sent += [check_frame(json.loads(text)) for text in rebuilt]

    told = {event["type"] for event in sent}
    assert told >= {
        "thread.created",
        "run.started",
        "message.started",
        "message.delta",
        "message.reasoning_delta",
        "tool_call.started",
        "tool_call.args_delta",
        "tool_call.requested",
        "tool_call.awaiting_approval",
        "run.waiting",
        "tool_call.decided",
        "tool_call.running",
        "tool_call.completed",
        "message.completed",
        "run.completed",
        "thread.rewound",
        "thread.branch_changed",
        "thread.snapshot",
        "pong",
    }
    snapshots = [event for event in sent if event["type"] == "thread.snapshot"]
    calls = [call for snapshot in snapshots for m in snapshot["messages"] for call in m.get("tool_calls", ())]
    assert any(call["allow"] for call in calls) and any(call["decision"] for call in calls)
    assert any("versions" in message for message in snapshots[2]["messages"])
    assert json.loads(rebuilt[0])["messages"][-1]["content"] == ""


@pytest.mark.django_db(transaction=True)
async def test_a_snapshot_taken_while_an_answer_streams_fits_its_shape(connect, owner, settings):
    """The database's state with the streaming message rebuilt from the log (chat/runs/subscribe.py rebuild)."""
    settings.AGENTWEB_DEMO_DELAY = 0.005
    first = await connect(owner)
    await first.ask("hello there, tell me something")
    opening = await first.until("message.delta")
    second = await connect(owner)
    await second.send(type="thread.subscribe", thread=opening[0]["thread"], after_seq=None)
    snapshot = await second.receive()
    await first.run_to_end()

    assert snapshot["type"] == "thread.snapshot" and snapshot["messages"][-1]["status"] == "streaming"


# --- the check has teeth --------------------------------------------------------------------------------------------


SNAPSHOT = {
    "type": "thread.snapshot",
    "thread": "6d1c1f2e-0000-4000-8000-000000000000",
    "seq": 3,
    "title": "sums",
    "model": {
        "id": "default",
        "name": "m",
        "label": "m",
        "is_demo": False,
        "help": "",
        "context_window": None,
        "supports_images": False,
    },
    "messages": [
        {"id": 1, "role": "user", "content": "1+1?", "status": "complete"},
        {
            "id": 2,
            "role": "assistant",
            "content": "",
            "status": "complete",
            "finish_reason": "tool_calls",
            "reasoning": None,
            "usage": {"input_tokens": 3, "output_tokens": 2, "estimated": False, "cost": None},
            "tool_calls": [
                {
                    "id": "7",
                    "call_id": "c1",
                    "name": "calculator",
                    "args": {"expression": "1+1"},
                    "status": "success",
                    "content": "2",
                    "has_artifact": False,
                    "images": 0,
                    "duration_ms": 1,
                    "allow": None,
                    "original_args": None,
                    "decision": None,
                }
            ],
        },
    ],
    "run": {"id": 1, "status": "completed", "reason": "done", "error": None, "steps": 2, "notes": [], "usage": None},
    "agent": None,
    "disabled_tools": [],
}


def test_a_snapshot_that_fits_passes():
    assert frame_problems(SNAPSHOT) == []


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda s: s["messages"][1]["tool_calls"][0].pop("decision"), "decision: missing"),
        (lambda s: s["messages"][1]["tool_calls"][0].update(status="done"), "is not one of"),
        (lambda s: s["messages"][0].update(id="1"), "is not int"),
        (lambda s: s["run"].update(extra=1), "extra: not a key of RunView"),
        (lambda s: s.update(seq=True), "seq: True is not int"),
        (lambda s: s["messages"][1]["usage"].update(cost=0.5), "cost"),
    ],
)
def test_a_snapshot_that_does_not_fit_is_told(change, said):
    snapshot = copy.deepcopy(SNAPSHOT)
    change(snapshot)
    assert any(said in problem for problem in frame_problems(snapshot)), frame_problems(snapshot)


def test_an_event_with_a_field_it_does_not_declare_or_without_its_number_is_told():
    delta = {"type": "message.delta", "thread": "t", "seq": 4, "message": 2, "text": "hi"}
    assert frame_problems(delta) == []
    assert frame_problems({**delta, "shown": 1}) == ["message.delta.shown: not a key of MessageDelta"]
    assert frame_problems({key: v for key, v in delta.items() if key != "seq"}) == ["message.delta: `seq` missing"]
    assert frame_problems({"type": "message.deltas"}) == [
        "'message.deltas': not an event type chat/live/views.py declares"
    ]


def test_the_check_runs_on_what_the_store_builds(db, owner):
    """build_snapshot's own output, of a thread with a message (no socket)."""
    thread = Thread.objects.create(owner=owner, title="t")
    Message.objects.create(thread=thread, order=1, role="user", content="hi", status="complete")
    snapshot = store.build_snapshot(thread=thread, seq=0, model=store.thread_model_info(thread))
    assert frame_problems(json.loads(json.dumps(snapshot))) == []
