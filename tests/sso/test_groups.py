"""The groups claim is read within bounds before anything is written, and only provider-managed groups move."""

import pytest
from django.contrib.auth.models import Group

from sso.groups import MAX_GROUPS, ClaimError, claimed_groups, sync_groups
from sso.models import ManagedGroup


def test_a_list_of_names_is_read_in_order_each_once():
    assert claimed_groups({"groups": ["b", "a", "b"]}, "groups") == ["b", "a"]


def test_one_name_as_a_string_and_no_claim_at_all_are_read_too():
    assert claimed_groups({"roles": "admin"}, "roles") == ["admin"]
    assert claimed_groups({}, "groups") == []


@pytest.mark.parametrize(
    "value",
    [{"a": 1}, 7, ["ok", 3], ["ok", ""], ["x" * 151], [f"g{i}" for i in range(MAX_GROUPS + 1)]],
    ids=["object", "number", "a number inside", "empty name", "name too long", "too many"],
)
def test_a_claim_that_is_not_a_list_of_group_names_is_refused(value):
    with pytest.raises(ClaimError):
        claimed_groups({"groups": value}, "groups")


def test_sync_moves_only_managed_groups(owner):
    own = Group.objects.create(name="admins-own")
    owner.groups.add(own)

    sync_groups(owner, ["new-at-the-provider", "admins-own"])
    assert set(owner.groups.values_list("name", flat=True)) == {"admins-own", "new-at-the-provider"}
    assert not ManagedGroup.objects.filter(group=own).exists()

    sync_groups(owner, [])
    assert set(owner.groups.values_list("name", flat=True)) == {"admins-own"}
