"""The fast path for plain text chunks (`PlainTextChunks`) gives exactly what parsing each chunk in full gives."""

import dataclasses
import json
import random

import pytest

from providers.openai import OpenAIProvider, PlainTextChunks
from providers.types import ModelError, TextDelta
from tests.support import vectors

VECTORS = vectors.cases("openai_chat_completions_sse.json")

HEAD = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
TAIL = ',"logprobs":null,"finish_reason":null}]}'


def text_chunk(text_json: str, head: str = HEAD, tail: str = TAIL) -> str:
    return f'{head}{{"content":{text_json}}}{tail}'


def body(*datas: str) -> bytes:
    return "".join(f"data: {d}\n\n" for d in datas).encode()


async def run(data: bytes, *, fast: bool, monkeypatch, pieces: int = 1):
    """The events (call ids generated here made comparable) and the error message, if any."""
    rng = random.Random(pieces)
    cuts = sorted(rng.sample(range(1, len(data)), min(pieces - 1, len(data) - 1))) if pieces > 1 else []

    async def chunks():
        start = 0
        for end in [*cuts, len(data)]:
            yield data[start:end]
            start = end

    provider = OpenAIProvider(base_url="http://model.test/v1", model="m")
    events, error = [], None
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(PlainTextChunks, "LEARN_LIMIT", 0)
        try:
            async for event in provider.read_events(chunks(), []):
                if getattr(event, "id", "").startswith("call_") and len(event.id) == 29:
                    event = dataclasses.replace(event, id="call_*")
                events.append(event)
        except ModelError as exc:
            error = str(exc)
    return events, error


async def same_both_ways(data: bytes, monkeypatch, pieces: int = 1):
    fast = await run(data, fast=True, monkeypatch=monkeypatch, pieces=pieces)
    assert fast == await run(data, fast=False, monkeypatch=monkeypatch, pieces=pieces)
    return fast


@pytest.mark.parametrize("vector", VECTORS)
@pytest.mark.parametrize("pieces", [1, 7])
async def test_vectors_read_the_same_with_and_without_the_fast_path(vector, pieces, monkeypatch):
    await same_both_ways("\n".join(vector["input"]).encode(), monkeypatch, pieces)


async def test_a_stream_of_text_chunks_takes_the_fast_path_and_reads_the_same(monkeypatch):
    texts = ["Hello", "", " wörld", "\\u00a7 \\ud83d\\ude00", '\\"q\\"', "\\\\", "</tool", "_call>"]
    datas = [text_chunk(json.dumps(t) if i % 2 else f'"{t}"') for i, t in enumerate(texts)]
    datas.append('{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}')
    events, error = await same_both_ways(body(*datas, "[DONE]"), monkeypatch)
    assert error is None
    assert events[0] == TextDelta("Hello")

    chunks = PlainTextChunks()
    chunks.learn(datas[0], json.loads(datas[0]))
    assert chunks.text(datas[2]) == " wörld"
    assert chunks.text(datas[-1]) is None  # the finish chunk goes the full way


@pytest.mark.parametrize(
    "second",
    [
        text_chunk('"a\tb"'),  # a raw control character: not JSON
        text_chunk('"unterminated'),
        text_chunk('"a" "b"'),
        text_chunk('"a",'),
        text_chunk('"\\x"'),  # an unknown escape
        text_chunk('"ok"', tail=TAIL.replace("null}]}", '"stop"}]}')),
        text_chunk('"ok"', tail=TAIL + " "),
        text_chunk('"ok"', head=HEAD.replace('"index":0', '"index":1')),
        text_chunk('"ok"', tail=',"usage":{"prompt_tokens":1,"completion_tokens":2}' + TAIL),
        text_chunk('"ok"', tail=TAIL[:-1] + ',"usage":{"prompt_tokens":1,"completion_tokens":2}}'),
        '{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}',  # usage alone, as the last chunk
        '{"choices":[{"index":0}]}',  # no delta at all
        '{"error":{"message":"boom"}}',
        "not json",
    ],
)
async def test_chunks_that_differ_from_the_learned_one_are_read_in_full(second, monkeypatch):
    data = body(text_chunk('"first"'), second, text_chunk('"third"'))
    await same_both_ways(data, monkeypatch)


@pytest.mark.parametrize(
    "first",
    [
        # The content key twice: the last one counts, so the first string is not the content.
        '{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}',
        # A look-alike inside another string, before the real one.
        '{"id":"\\"content\\":\\"x\\"","choices":[{"index":0,"delta":{"content":"b"}}]}',
        # A content key in an ignored object, before the real one.
        '{"x":{"content":"a"},"choices":[{"index":0,"delta":{"content":"b"}}]}',
        '{"choices":[{"index":0,"delta":{"content" : "b"}}]}',
        '{"choices":[{"index":0,"delta":{"content":"b","reasoning_content":"r"}}]}',
        '{"choices":[{"index":0,"delta":{"content":"b","tool_calls":[]}}]}',
        '{"choices":[{"index":0,"delta":{"content":"b","refusal":null}}]}',
        '{"choices":[{"delta":{"content":"b"}}]}',
        # Usage in the same chunk, or a second choice: each is more than text.
        '{"choices":[{"index":0,"delta":{"content":"b"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}',
        '{"choices":[{"index":0,"delta":{"content":"b"}},{"index":1,"delta":{"content":"a"}}]}',
    ],
)
async def test_look_alikes_are_not_taken_for_the_content(first, monkeypatch):
    variant = first.replace('"b"', '"c"')
    _, error = await same_both_ways(body(first, variant, variant.replace('"a"', '"z"'), "[DONE]"), monkeypatch)
    assert error is None


async def test_a_learned_template_reads_what_full_parsing_reads_for_random_strings(monkeypatch):
    rng = random.Random(5)
    alphabet = ["a", " ", '\\"', "\\\\", "\\n", "\\u00e9", "\\ud83d\\ude00", "é", "<", "\\/", '"', "\t", "\\u12"]
    datas = [text_chunk('"start"')]
    for _ in range(300):
        datas.append(text_chunk('"' + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) + '"'))
    for data in datas[1:]:  # each on its own after the learned one: a broken one ends the stream
        await same_both_ways(body(datas[0], data, "[DONE]"), monkeypatch)


async def test_learning_stops_after_its_limit(monkeypatch):
    chunks = PlainTextChunks()
    for number in range(PlainTextChunks.LEARN_LIMIT + 3):
        data = text_chunk('"x"', tail=f',"n":{number}{TAIL}')
        chunks.learn(data, json.loads(data))
    assert chunks._learns == PlainTextChunks.LEARN_LIMIT


@pytest.mark.parametrize("streamed", [True, False])
@pytest.mark.parametrize("encoding", [None, "identity", "gzip"])
async def test_a_body_is_read_raw_or_decoded_by_its_content_encoding(encoding, streamed):
    import gzip

    import httpx

    from providers.types import ChatMessage, Finish

    data = body(text_chunk('"Hi"'), text_chunk('" there"'), "[DONE]")
    headers = {"content-type": "text/event-stream"}
    if encoding:
        headers["content-encoding"] = encoding
    sent = gzip.compress(data) if encoding == "gzip" else data

    class Body(httpx.AsyncByteStream):
        async def __aiter__(self):
            for start in range(0, len(sent), 50):
                yield sent[start : start + 50]

    def handler(request):
        # A streamed body when streamed (read raw unless encoded), else one already read.
        return httpx.Response(200, headers=headers, **({"stream": Body()} if streamed else {"content": sent}))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = OpenAIProvider(base_url="http://model.test/v1", model="m", client=client)
        events = [event async for event in provider.stream([ChatMessage(role="user", content="hi")], [])]
    assert events == [TextDelta("Hi"), TextDelta(" there"), Finish("stop")]
