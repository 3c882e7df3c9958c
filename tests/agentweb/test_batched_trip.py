"""Calls to the database thread made while one is in flight go together in the next trip (agentweb/batched_trip.py)."""

import asyncio
import threading

import pytest

from agentweb.batched_trip import BatchedTrip

# channels' database_sync_to_async closes the thread's old connections around each trip: database access.
pytestmark = pytest.mark.django_db


class Doubler:
    """read_all: doubles each number, counts its trips, and can be held on the database thread."""

    def __init__(self):
        self.trips: list[list[int]] = []
        self.release = threading.Event()
        self.release.set()

    def __call__(self, calls):
        self.release.wait(5)
        self.trips.append([n for (n,) in calls])
        return [ValueError(f"odd {n}") if n % 2 else n * 2 for (n,) in calls]


async def test_calls_made_during_a_trip_go_together_in_the_next_each_with_its_own_answer():
    doubler = Doubler()
    doubler.release.clear()
    trip = BatchedTrip(doubler)
    first = asyncio.ensure_future(trip(2))
    await asyncio.sleep(0.05)  # the first trip is on the database thread, held
    rest = [asyncio.ensure_future(trip(n)) for n in (4, 6, 8)]
    await asyncio.sleep(0.01)
    doubler.release.set()

    assert await first == 4
    assert await asyncio.gather(*rest) == [8, 12, 16]
    assert doubler.trips == [[2], [4, 6, 8]]


async def test_an_error_for_one_call_is_raised_to_that_caller_only():
    trip = BatchedTrip(Doubler())

    answers = await asyncio.gather(trip(2), trip(3), trip(4), return_exceptions=True)

    assert answers[0] == 4 and answers[2] == 8
    assert isinstance(answers[1], ValueError) and str(answers[1]) == "odd 3"


async def test_a_trip_that_fails_is_raised_to_each_of_its_callers_and_the_next_trip_goes():
    def broken(calls):
        raise ConnectionError("database out of reach")

    trip = BatchedTrip(broken)
    answers = await asyncio.gather(trip(1), trip(2), return_exceptions=True)
    assert [type(a) for a in answers] == [ConnectionError, ConnectionError]

    with pytest.raises(ConnectionError):
        await trip(3)


async def test_a_caller_that_goes_away_leaves_the_others_their_answers():
    doubler = Doubler()
    doubler.release.clear()
    trip = BatchedTrip(doubler)
    first = asyncio.ensure_future(trip(2))
    await asyncio.sleep(0.05)
    gone, staying = asyncio.ensure_future(trip(4)), asyncio.ensure_future(trip(6))
    await asyncio.sleep(0.01)
    gone.cancel()
    doubler.release.set()

    assert (await first, await staying) == (4, 12)
    assert gone.cancelled()
