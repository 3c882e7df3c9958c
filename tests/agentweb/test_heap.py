import gc
import weakref

import pytest

from agentweb.heap import FEWEST_CLOSED_TO_UNFREEZE, ConnectionFreezer


class Socket:
    """A connection's state as the collector meets it: an object in a reference cycle."""

    def __init__(self):
        self.me = self


@pytest.fixture
def freezer():
    gc.unfreeze()
    yield ConnectionFreezer()
    gc.unfreeze()  # what a test froze goes back to the collector


def open_connections(count: int) -> dict:
    return {Socket(): {} for _ in range(count)}


def close(freezer: ConnectionFreezer, connections: dict, count: int) -> list[weakref.ref]:
    gone = []
    for socket in list(connections)[:count]:
        gone.append(weakref.ref(socket))
        freezer.closed(connections.pop(socket))
    return gone


def test_what_a_full_collection_kept_is_frozen(freezer):
    connections = open_connections(10)
    gc.collect()

    freezer.check(connections)

    assert gc.get_freeze_count() >= len(connections)
    assert all(details["frozen"] for details in connections.values())


def test_nothing_is_frozen_without_a_full_collection_since(freezer):
    freezer.check(open_connections(10))

    assert gc.get_freeze_count() == 0


def test_closed_connections_stay_frozen_until_a_quarter_have_closed(freezer):
    connections = open_connections(8 * FEWEST_CLOSED_TO_UNFREEZE)
    gc.collect()
    freezer.check(connections)

    gone = close(freezer, connections, len(connections) // 4 - 1)
    gc.collect()

    assert gc.get_freeze_count() > 0
    assert all(ref() is not None for ref in gone)  # held by the freeze: a cycle no collection walks


def test_once_a_quarter_have_closed_the_next_full_collection_frees_them(freezer):
    connections = open_connections(8 * FEWEST_CLOSED_TO_UNFREEZE)
    gc.collect()
    freezer.check(connections)

    gone = close(freezer, connections, len(connections) // 4)
    gc.collect()

    assert all(ref() is None for ref in gone)
    freezer.check(connections)  # and what that collection kept is frozen again
    assert gc.get_freeze_count() >= len(connections)


def test_a_few_closed_connections_do_not_unfreeze(freezer):
    connections = open_connections(8)
    gc.collect()
    freezer.check(connections)

    close(freezer, connections, 8)

    assert gc.get_freeze_count() > 0


def test_connections_opened_after_the_freeze_do_not_count(freezer):
    frozen = open_connections(4 * FEWEST_CLOSED_TO_UNFREEZE)
    gc.collect()
    freezer.check(frozen)
    later = open_connections(4 * FEWEST_CLOSED_TO_UNFREEZE)

    close(freezer, later, len(later))

    assert gc.get_freeze_count() > 0
