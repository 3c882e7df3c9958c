"""What recovery reads back from a thread's log when a run's process died (chat/runs/recovery.py): the text its tabs
were shown of the answer, from the answer's message.started on."""

import json
import uuid

from chat.live import events
from chat.runs.recovery import answer_text
from delivery.log import MemoryLog
from tests.delivery.test_log import Seeds


async def test_the_answer_s_text_is_its_deltas_in_the_log_s_tail():
    seeds = Seeds()
    log, thread = MemoryLog(seeds, seeds.record, keep=50), uuid.uuid4()
    await log.publish(thread, [events.message_started(7), events.message_delta(7, "Hel")])
    await log.publish(thread, [events.message_delta(8, "another answer's"), events.message_delta(7, 'lo, "you"')])

    tail = await log.read_from_last(thread, "message.started")

    assert answer_text(tail) == {7: 'Hello, "you"'}


def test_an_event_is_read_by_what_it_holds_not_by_how_its_text_begins():
    spelt_otherwise = [
        json.dumps({"seq": 3, "type": "message.started", "message": {"id": 7, "role": "assistant"}}),
        json.dumps({"seq": 4, "type": "message.delta", "message": 7, "text": "Hel"}, separators=(",", ":")),
        json.dumps({"message": 7, "text": "lo", "type": "message.delta"}),
    ]

    assert answer_text(spelt_otherwise) == {7: "Hello"}


def test_what_is_not_an_event_s_json_object_is_passed_over():
    started = json.dumps({"type": "message.started", "message": {"id": 7}})
    delta = json.dumps({"type": "message.delta", "message": 7, "text": "Hello"})
    not_events = ["{not json", "[1, 2]", '"message.delta"', '{"text": "no type"}']

    assert answer_text([started, *not_events, delta]) == {7: "Hello"}
    assert answer_text([*not_events, delta]) == {}  # no message.started to begin from
    assert answer_text([]) == {}
