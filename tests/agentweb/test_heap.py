import gc
import weakref

import pytest

from agentweb.heap import UNFREEZE_EVERY_S, HeapFreezer


class Cycle:
    """An object the collector must find: in a reference cycle, as an exception's traceback is."""

    def __init__(self):
        self.me = self


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def freezer(clock):
    gc.unfreeze()
    yield HeapFreezer(clock)
    gc.unfreeze()  # what a test froze goes back to the collector


def frozen_garbage(freezer: HeapFreezer) -> weakref.ref:
    """A cycle alive at a freeze that then dies: a full collection kept it, the check froze it, and it was dropped."""
    cycle = Cycle()
    gc.collect()
    freezer.check()
    return weakref.ref(cycle)


def test_what_a_full_collection_kept_is_frozen(freezer):
    kept = [Cycle() for _ in range(10)]
    gc.collect()

    freezer.check()

    assert gc.get_freeze_count() >= len(kept)


def test_nothing_is_frozen_without_a_full_collection_since(freezer):
    freezer.check()

    assert gc.get_freeze_count() == 0


def test_a_cycle_that_dies_frozen_is_held_for_up_to_an_hour(freezer, clock):
    cycle = frozen_garbage(freezer)
    clock.now += UNFREEZE_EVERY_S - 1

    freezer.check()
    gc.collect()

    assert cycle() is not None  # no collection walks it yet


def test_after_an_hour_the_next_full_collection_frees_what_a_freeze_held(freezer, clock):
    cycle = frozen_garbage(freezer)
    clock.now += UNFREEZE_EVERY_S

    freezer.check()
    gc.collect()

    assert cycle() is None


def test_what_that_collection_kept_is_frozen_again(freezer, clock):
    frozen_garbage(freezer)
    kept = [Cycle() for _ in range(10)]
    clock.now += UNFREEZE_EVERY_S
    freezer.check()
    gc.collect()

    freezer.check()

    assert gc.get_freeze_count() >= len(kept)


def test_a_full_collection_before_the_hourly_unfreeze_does_not_freeze_it_all_again(freezer, clock):
    cycle = frozen_garbage(freezer)
    gc.collect()  # a collection the freezer has not seen yet, of what was not frozen
    clock.now += UNFREEZE_EVERY_S

    freezer.check()

    assert gc.get_freeze_count() == 0  # so the next full collection still walks everything and frees the cycle
    gc.collect()
    assert cycle() is None
