import asyncio

from chat.live.coalesce import DeltaCoalescer


class Frames:
    def __init__(self):
        self.sent = []

    async def __call__(self, key, text):
        self.sent.append((key, text))


async def test_it_sends_the_first_piece_of_a_stream_at_once():
    frames = Frames()
    coalescer = DeltaCoalescer(frames, window=10)
    await coalescer.push("m", "Hel")
    assert frames.sent == [("m", "Hel")]


async def test_it_joins_the_pieces_that_arrive_within_the_window_into_one_frame():
    frames = Frames()
    coalescer = DeltaCoalescer(frames, window=0.05)
    for piece in ["a", "b", "c", "d"]:
        await coalescer.push("m", piece)
    await asyncio.sleep(0.1)
    assert frames.sent == [("m", "a"), ("m", "bcd")]


async def test_a_thousand_tokens_in_a_burst_become_two_frames():
    frames = Frames()
    coalescer = DeltaCoalescer(frames, window=0.05)
    for i in range(1000):
        await coalescer.push("m", f"{i} ")
    await asyncio.sleep(0.1)
    assert len(frames.sent) == 2
    assert "".join(text for _, text in frames.sent) == "".join(f"{i} " for i in range(1000))


async def test_flush_sends_what_is_pending_before_anything_that_follows():
    frames = Frames()
    coalescer = DeltaCoalescer(frames, window=10)
    await coalescer.push("m", "a")
    await coalescer.push("m", "b")
    await coalescer.push("t", "{")
    await coalescer.flush()
    assert frames.sent == [("m", "a"), ("t", "{"), ("m", "b")]
    await asyncio.sleep(0)
    assert len(frames.sent) == 3


async def test_each_stream_has_its_own_first_piece():
    frames = Frames()
    coalescer = DeltaCoalescer(frames, window=10)
    await coalescer.push("message", "x")
    await coalescer.push("tool_call", "{")
    assert frames.sent == [("message", "x"), ("tool_call", "{")]


async def test_empty_pieces_send_nothing():
    frames = Frames()
    coalescer = DeltaCoalescer(frames, window=10)
    await coalescer.push("m", "")
    assert frames.sent == []


class SlowFrames(Frames):
    """A send that returns only when the test lets it (a busy Redis)."""

    def __init__(self):
        super().__init__()
        self.release = asyncio.Event()

    async def __call__(self, key, text):
        self.sent.append((key, text))
        await self.release.wait()


async def test_what_arrives_while_a_frame_is_being_sent_goes_in_the_next_frame():
    frames = SlowFrames()
    coalescer = DeltaCoalescer(frames, window=0)
    first = asyncio.create_task(coalescer.push("m", "a"))
    await asyncio.sleep(0)
    async with asyncio.timeout(5):  # a push that waited for the send would wait for ever
        for piece in ["b", "c", "d"]:
            await coalescer.push("m", piece)  # returns at once: the reader goes on reading
    assert frames.sent == [("m", "a")]

    frames.release.set()
    await first
    await coalescer.flush()
    assert frames.sent == [("m", "a"), ("m", "bcd")]
