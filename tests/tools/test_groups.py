"""The one rule of who may use what (tools/groups.py): no group named, everyone; else a member of any named group."""

from tools.groups import EVERYONE, allowed_by, may_use


def test_a_thing_naming_no_group_is_everyones():
    assert may_use(frozenset(), frozenset())
    assert may_use(frozenset(), frozenset({"research"}))
    assert allowed_by(frozenset(), frozenset({"research"})) == [EVERYONE]


def test_a_thing_naming_groups_is_for_the_members_of_any_of_them():
    allowed = frozenset({"research", "sales"})
    assert may_use(allowed, frozenset({"sales"}))
    assert may_use(allowed, ["research", "ops"])
    assert not may_use(allowed, frozenset())
    assert not may_use(allowed, frozenset({"ops"}))
    assert allowed_by(allowed, frozenset({"sales", "research", "ops"})) == ["research", "sales"]
    assert allowed_by(allowed, frozenset({"ops"})) == []


def test_group_names_are_matched_exactly():
    assert not may_use(frozenset({"Research"}), frozenset({"research"}))
    assert not may_use(frozenset({"research"}), frozenset({"research "}))
