import random

import pytest

from providers.sse import SSEDecoder, SSEEvent
from tests.support import vectors

VECTORS = vectors.cases("openai_chat_completions_sse.json")
SEEDS = [1, 2, 3, 4, 5]


def decode(pieces: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for piece in pieces:
        events += decoder.feed(piece)
    return events + decoder.close()


def random_pieces(data: bytes, seed: int, max_piece: int = 40) -> list[bytes]:
    rng = random.Random(seed)
    pieces, start = [], 0
    while start < len(data):
        end = start + rng.randint(1, max_piece)
        pieces.append(data[start:end])
        start = end
    return pieces


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


@pytest.mark.parametrize("vector", VECTORS)
def test_vector_bodies_decode_the_same_however_split(vector):
    body = "\n".join(vector["input"]).encode()
    # Every vector has one data line per event: the payloads are exactly the data lines, in order.
    expected = [SSEEvent(None, line[len("data: ") :]) for line in vector["input"] if line.startswith("data: ")]
    assert decode([body]) == expected
    assert decode(bytewise(body)) == expected
    for seed in SEEDS:
        assert decode(random_pieces(body, seed)) == expected, f"seed {seed}"


@pytest.mark.parametrize("vector", VECTORS)
def test_vector_bodies_with_crlf_and_cr_line_endings(vector):
    expected = decode(["\n".join(vector["input"]).encode()])
    for ending in ("\r\n", "\r"):
        body = ending.join(vector["input"]).encode()
        assert decode([body]) == expected
        for seed in SEEDS[:2]:
            assert decode(random_pieces(body, seed, max_piece=7)) == expected


def test_crlf_split_between_cr_and_lf_is_one_line_ending():
    # Were the \n taken as a second (blank) line, "a" and "b" would be two events.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r") == []
    assert decoder.feed(b"\n\r") == [SSEEvent(None, "a\nb")]
    assert decoder.feed(b"\n") == []
    assert decoder.close() == []


def test_lone_cr_then_crlf_is_two_line_endings():
    assert decode([b"data: a\r", b"\r\n"]) == [SSEEvent(None, "a")]
    assert decode([b"data: a\r\r\ndata: b\n\n"]) == [SSEEvent(None, "a"), SSEEvent(None, "b")]


def test_multiple_data_lines_are_joined_with_newline():
    body = b'data: {"a":\ndata: 1}\ndata:\n\n'
    assert decode([body]) == decode(bytewise(body)) == [SSEEvent(None, '{"a":\n1}\n')]


def test_optional_space_after_colon():
    events = decode([b"data:x\n\ndata: y\n\ndata:  z\n\ndata\n\n"])
    assert events == [SSEEvent(None, "x"), SSEEvent(None, "y"), SSEEvent(None, " z"), SSEEvent(None, "")]


def test_comments_are_ignored():
    body = b": keep-alive\n\n:\ndata: a\n: in the middle\ndata: b\n\n: OPENROUTER PROCESSING\n\n"
    assert decode([body]) == decode(bytewise(body)) == [SSEEvent(None, "a\nb")]


def test_event_field_and_its_reset_after_dispatch():
    body = (
        b"event: message_start\ndata: {}\n\ndata: plain\n\nevent:ping\n\nevent: content_block_delta\r\ndata: x\r\n\r\n"
    )
    expected = [SSEEvent("message_start", "{}"), SSEEvent(None, "plain"), SSEEvent("content_block_delta", "x")]
    assert decode([body]) == decode(bytewise(body)) == expected


def test_unknown_fields_id_and_retry_are_ignored():
    assert decode([b"id: 7\nretry: 100\nfoo: bar\ndata: a\n\n"]) == [SSEEvent(None, "a")]


def test_split_inside_utf8_character_and_field_name():
    text = 'data: {"content":"héllo wörld 🎉 日本語"}\n\n'
    data = text.encode()
    expected = [SSEEvent(None, text[len("data: ") : -2])]
    assert decode(bytewise(data)) == expected
    emoji_start = data.index("🎉".encode())
    pieces = [data[:2], data[2 : emoji_start + 1], data[emoji_start + 1 : emoji_start + 3], data[emoji_start + 3 :]]
    assert decode(pieces) == expected
    assert decode([data[:2], data[2 : emoji_start + 2], data[emoji_start + 2 :]]) == expected


def test_close_flushes_a_last_event_without_blank_line():
    assert decode([b"data: a\n\ndata: b\n"]) == [SSEEvent(None, "a"), SSEEvent(None, "b")]
    assert decode([b"data: a\n\ndata: [DONE]"]) == [SSEEvent(None, "a"), SSEEvent(None, "[DONE]")]
    assert decode([b"data: a\r"]) == [SSEEvent(None, "a")]


def test_events_come_out_as_soon_as_their_blank_line_arrives():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n") == []
    assert decoder.feed(b"\nda") == [SSEEvent(None, "a")]
    assert decoder.feed(b"ta: b\n\n") == [SSEEvent(None, "b")]
    assert decoder.close() == []


def test_byte_order_mark_at_start_is_dropped():
    assert decode([b"\xef\xbb", b"\xbfdata: a\n\n"]) == [SSEEvent(None, "a")]


def test_invalid_utf8_does_not_stop_the_stream():
    assert decode([b"data: a\xff\n\ndata: b\n\n"]) == [SSEEvent(None, "a\ufffd"), SSEEvent(None, "b")]


def test_a_long_line_fed_byte_by_byte_arrives_whole():
    payload = "x" * 300_000
    data = f"data: {payload}\n\n".encode()
    events = decode(bytewise(data))
    assert events == [SSEEvent(None, payload)]


def test_many_events_in_random_pieces_all_arrive():
    body = b'data: {"choices":[{"index":0,"delta":{"content":"ab"}}]}\n\n' * 20_000
    events = decode(random_pieces(body, 7, max_piece=200))
    assert len(events) == 20_000


def test_byte_order_mark_split_across_pieces_is_dropped_and_a_short_stream_is_not_one():
    assert decode([b"\xef", b"\xbb", b"\xbfdata: x\n\n"]) == [SSEEvent(None, "x")]
    assert decode([b"\xef\xbb"]) == []  # two bytes and no line: nothing to dispatch
    # Not a BOM after all: the stray byte (U+FFFD) makes the field name "\ufffddata", which is ignored.
    assert decode([b"\xef", b"data: x\n\ndata: y\n\n"]) == [SSEEvent(None, "y")]


def test_invalid_utf8_split_at_a_line_end_decodes_as_whole_input_would():
    body = b"data: \xe2\x82\n\ndata: \xe2\x82\xac\n\ndata: \xff"
    expected = [SSEEvent(None, "\ufffd"), SSEEvent(None, "€"), SSEEvent(None, "\ufffd")]
    assert decode([body]) == expected
    assert decode(bytewise(body)) == expected


def test_whole_event_chunks_keep_what_earlier_chunks_started():
    assert decode([b"event: x\n", b"data: a\n\n", b"data: b\n\n"]) == [SSEEvent("x", "a"), SSEEvent(None, "b")]
    assert decode([b"data: a\n", b"data: b\n\n"]) == [SSEEvent(None, "a\nb")]
    assert decode([b"data: a\r", b"\ndata: b\n\n"]) == [SSEEvent(None, "a\nb")]
    assert decode([b"da", b"ta: a\n\n", b"data: b\n\n"]) == [SSEEvent(None, "a"), SSEEvent(None, "b")]
    assert decode([b"data: a\n\ndata: b\n\n", b"data: \n\n"]) == [
        SSEEvent(None, "a"),
        SSEEvent(None, "b"),
        SSEEvent(None, ""),
    ]
