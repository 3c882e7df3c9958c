"""The total deadline over a response body (`_until`): one timer for the body, not one per chunk."""

import asyncio

import pytest

from providers.http_provider import _until


async def paced(delays):
    """Chunks b"0", b"1", … each after its delay (0: without suspending)."""
    for number, delay in enumerate(delays):
        if delay:
            await asyncio.sleep(delay)
        yield str(number).encode()


def deadline_in(seconds):
    return asyncio.get_running_loop().time() + seconds


async def test_chunks_pass_through_without_a_deadline():
    assert [chunk async for chunk in _until(paced([0, 0, 0.01]), None)] == [b"0", b"1", b"2"]


async def test_chunks_pass_through_before_the_deadline():
    assert [chunk async for chunk in _until(paced([0, 0.01, 0]), deadline_in(5))] == [b"0", b"1", b"2"]


async def test_deadline_passing_during_a_read_raises_timeout_and_leaves_the_task_uncancelled():
    seen = []
    with pytest.raises(TimeoutError):
        async for chunk in _until(paced([0, 0, 10]), deadline_in(0.05)):
            seen.append(chunk)
    assert seen == [b"0", b"1"]
    assert asyncio.current_task().cancelling() == 0
    await asyncio.sleep(0)  # no cancellation left pending for this task


async def test_deadline_passing_while_the_caller_is_busy_stops_the_next_read():
    seen = []
    with pytest.raises(TimeoutError):
        async for chunk in _until(paced([0, 0, 0]), deadline_in(0.02)):
            seen.append(chunk)
            await asyncio.sleep(0.05)  # the caller, not the server, is slow
    assert seen == [b"0"]
    assert asyncio.current_task().cancelling() == 0


async def test_a_cancellation_from_outside_is_not_turned_into_a_timeout():
    async def consume():
        return [chunk async for chunk in _until(paced([0, 10]), deadline_in(5))]

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_timer_is_cancelled_when_the_body_ends():
    loop = asyncio.get_running_loop()
    before = len(loop._scheduled)
    assert [chunk async for chunk in _until(paced([0]), deadline_in(5))] == [b"0"]
    assert len([h for h in loop._scheduled if not h.cancelled()]) <= before
