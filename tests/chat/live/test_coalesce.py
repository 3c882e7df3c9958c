import asyncio

import pytest

from chat.live.coalesce import DeltaCoalescer


class Outbox:
    """The event log's queue as the coalescer meets it: frames queued in order, each taking its text when it goes
    out (`go_out`, or at once when `at_once`: a log with nothing in flight)."""

    def __init__(self, *, at_once: bool = False):
        self.at_once = at_once
        self.queued = []
        self.sent = []

    def __call__(self, key, take):
        future = asyncio.get_running_loop().create_future()
        self.queued.append((key, take, future))
        if self.at_once:
            self.go_out()
        return future

    def go_out(self, error: Exception | None = None):
        queued, self.queued = self.queued, []
        for key, take, future in queued:
            text = take()
            if text:
                self.sent.append((key, text))
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(None)


async def test_it_sends_the_first_piece_of_a_stream_at_once():
    outbox = Outbox()
    coalescer = DeltaCoalescer(outbox, window=10)
    await coalescer.push("m", "Hel")
    outbox.go_out()
    assert outbox.sent == [("m", "Hel")]


async def test_what_arrives_while_a_frame_waits_to_go_out_joins_it():
    outbox = Outbox()
    coalescer = DeltaCoalescer(outbox, window=0)
    async with asyncio.timeout(5):  # the reader never waits for a send
        for piece in ["a", "b", "c", "d"]:
            await coalescer.push("m", piece)
    outbox.go_out()
    assert outbox.sent == [("m", "abcd")]


async def test_after_a_frame_went_out_the_next_waits_for_the_window():
    outbox = Outbox(at_once=True)
    coalescer = DeltaCoalescer(outbox, window=0.05)
    for piece in ["a", "b", "c", "d"]:
        await coalescer.push("m", piece)
    assert outbox.sent == [("m", "a")]
    await asyncio.sleep(0.1)
    assert outbox.sent == [("m", "a"), ("m", "bcd")]


async def test_a_thousand_tokens_in_a_burst_become_two_frames():
    outbox = Outbox(at_once=True)
    coalescer = DeltaCoalescer(outbox, window=0.05)
    for i in range(1000):
        await coalescer.push("m", f"{i} ")
    await asyncio.sleep(0.1)
    assert len(outbox.sent) == 2
    assert "".join(text for _, text in outbox.sent) == "".join(f"{i} " for i in range(1000))


async def test_flush_sends_what_is_pending_before_anything_that_follows():
    outbox = Outbox(at_once=True)
    coalescer = DeltaCoalescer(outbox, window=10)
    await coalescer.push("m", "a")
    await coalescer.push("m", "b")
    await coalescer.push("t", "{")
    await coalescer.flush()
    assert outbox.sent == [("m", "a"), ("t", "{"), ("m", "b")]
    await asyncio.sleep(0)
    assert len(outbox.sent) == 3


async def test_flush_returns_only_once_the_queued_frames_have_gone_out():
    outbox = Outbox()
    coalescer = DeltaCoalescer(outbox, window=10)
    await coalescer.push("m", "a")
    flushing = asyncio.ensure_future(coalescer.flush())
    await asyncio.sleep(0.01)
    assert not flushing.done()

    outbox.go_out()
    await asyncio.wait_for(flushing, 5)
    assert outbox.sent == [("m", "a")]


async def test_each_stream_has_its_own_first_piece():
    outbox = Outbox(at_once=True)
    coalescer = DeltaCoalescer(outbox, window=10)
    await coalescer.push("message", "x")
    await coalescer.push("tool_call", "{")
    assert outbox.sent == [("message", "x"), ("tool_call", "{")]


async def test_empty_pieces_send_nothing():
    outbox = Outbox(at_once=True)
    coalescer = DeltaCoalescer(outbox, window=10)
    await coalescer.push("m", "")
    assert outbox.sent == []
    assert outbox.queued == []


async def test_a_frame_that_failed_to_go_out_fails_the_streams_next_piece():
    outbox = Outbox()
    coalescer = DeltaCoalescer(outbox, window=0)
    await coalescer.push("m", "a")
    outbox.go_out(ConnectionError("Redis is gone"))
    await asyncio.sleep(0)

    with pytest.raises(ConnectionError, match="Redis is gone"):
        await coalescer.push("m", "b")


async def test_a_piece_after_close_is_refused_rather_than_sent():
    outbox = Outbox(at_once=True)
    coalescer = DeltaCoalescer(outbox, window=10)
    await coalescer.push("m", "Hel")
    coalescer.close()
    with pytest.raises(RuntimeError, match="closed"):
        await coalescer.push("n", "lo")
    assert outbox.sent == [("m", "Hel")]
