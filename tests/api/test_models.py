"""An API key: made with a name and an optional expiry, shown once (only its hash is stored), found again from the key
alone, refused once revoked, expired or its person deactivated, and its use written at most once a minute."""

from datetime import timedelta

import pytest
from django.utils import timezone

from api.models import KEY_PREFIX, LAST_USED_EVERY, ApiKey, digest

pytestmark = pytest.mark.django_db


def test_a_key_is_shown_once_and_only_its_hash_is_kept(owner):
    row, key = ApiKey.issue(owner, "notebook")
    assert key.startswith(KEY_PREFIX) and len(key) > 40
    stored = ApiKey.objects.get(pk=row.pk)
    assert stored.hashed == digest(key) != key
    assert key not in repr(vars(stored)) and key not in str(stored)
    assert stored.shown == f"{KEY_PREFIX}{key[3:11]}…" and stored.shown in str(stored)
    assert (stored.name, stored.user, stored.expires_at, stored.revoked_at) == ("notebook", owner, None, None)


def test_two_keys_differ_and_each_finds_only_its_own_row(owner, stranger):
    mine, my_key = ApiKey.issue(owner, "one")
    theirs, their_key = ApiKey.issue(stranger, "two")
    assert my_key != their_key
    assert ApiKey.matching(my_key) == mine and ApiKey.matching(my_key).user == owner
    assert ApiKey.matching(their_key) == theirs


def test_a_key_that_only_begins_like_one_finds_nothing(owner):
    _row, key = ApiKey.issue(owner, "one")
    assert ApiKey.matching(key[:-1] + ("A" if key[-1] != "A" else "B")) is None  # same lookup, wrong secret
    assert ApiKey.matching(key[3:]) is None  # without its prefix
    assert ApiKey.matching(key + "x" * 300) is None  # far too long: not hashed
    assert ApiKey.matching("") is None


def test_a_usable_key_has_no_refusal_until_revoked(owner):
    row, _key = ApiKey.issue(owner, "one", expires_in_days=30)
    assert row.expires_at - timezone.now() == pytest.approx(timedelta(days=30), abs=timedelta(seconds=5))
    assert row.refusal() is None
    row.revoke()
    assert "revoked" in ApiKey.objects.get(pk=row.pk).refusal()
    first = ApiKey.objects.get(pk=row.pk).revoked_at
    row.revoke()  # twice: the first revocation's time stays
    assert ApiKey.objects.get(pk=row.pk).revoked_at == first


def test_an_expired_key_is_refused(owner):
    row, _key = ApiKey.issue(owner, "one", expires_in_days=1)
    assert row.refusal(now=timezone.now() + timedelta(hours=23)) is None
    assert "expired" in row.refusal(now=timezone.now() + timedelta(days=1, seconds=1))


def test_a_deactivated_persons_key_is_refused(owner):
    _row, key = ApiKey.issue(owner, "one")
    owner.is_active = False
    owner.save()
    assert "deactivated" in ApiKey.matching(key).refusal()


def test_last_use_is_written_at_most_once_a_minute(owner):
    row, _key = ApiKey.issue(owner, "one")
    start = timezone.now()
    row.note_use(now=start)
    assert ApiKey.objects.get(pk=row.pk).last_used_at == start
    row.note_use(now=start + timedelta(seconds=59))
    assert ApiKey.objects.get(pk=row.pk).last_used_at == start
    later = start + LAST_USED_EVERY
    row.note_use(now=later)
    assert ApiKey.objects.get(pk=row.pk).last_used_at == later


def test_last_use_within_the_minute_costs_no_query(owner, django_assert_num_queries):
    row, _key = ApiKey.issue(owner, "one")
    row.note_use()
    with django_assert_num_queries(0):
        row.note_use()
