"""`manage.py apikeys`: `create` prints the key and nothing else on standard output (what it says goes to standard
error); `revoke` by the key's shown prefix, its whole self, or a person's key name; a wrong user or number of days
is an error, and nothing is written."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from api.auth import KeyRefused, authenticate
from api.management.commands.apikeys import Command
from api.models import ApiKey
from tests.api.test_auth import request_as

pytestmark = pytest.mark.django_db


def apikeys(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("apikeys", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_prints_exactly_the_key_and_it_works(owner):
    out, err = apikeys("create", "owner", "--name", "cron job")
    key = out.removesuffix("\n")
    assert out == key + "\n" and "\n" not in key and key.startswith("aw-")
    assert authenticate(request_as(Authorization=f"Bearer {key}")).user == owner
    row = ApiKey.objects.get()
    assert (row.name, row.expires_at) == ("cron job", None)
    assert key not in err and row.shown in err and "only this once" in err


def test_create_with_an_expiry(owner):
    apikeys("create", "owner", "--name", "month", "--expires", "30")
    row = ApiKey.objects.get()
    assert row.expires_at - timezone.now() == pytest.approx(timedelta(days=30), abs=timedelta(seconds=5))


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["create", "nobody", "--name", "x"], "No user is called 'nobody'"),
        (["create", "owner", "--name", "x", "--expires", "0"], "--expires"),
        (["create", "owner", "--name", "x", "--expires", "3651"], "--expires"),
        (["create", "owner", "--name", "x", "--expires", "soon"], "invalid int value"),
        (["create", "owner", "--name", "   "], "--name"),
        (["create", "owner", "--name", "x" * 101], "--name"),
        (["create", "owner"], "--name"),
    ],
)
def test_create_refuses_a_wrong_user_or_days_and_writes_nothing(owner, args, said):
    with pytest.raises(CommandError, match=said):
        apikeys(*args)
    assert not ApiKey.objects.exists()


def test_create_refuses_a_deactivated_person(owner):
    owner.is_active = False
    owner.save()
    with pytest.raises(CommandError, match="deactivated"):
        apikeys("create", "owner", "--name", "x")
    assert not ApiKey.objects.exists()


@pytest.mark.parametrize("named", ["shown", "shown without dots", "lookup", "whole key"])
def test_revoke_by_what_the_lists_show_or_the_key_itself(owner, named):
    row, key = ApiKey.issue(owner, "laptop")
    other, _ = ApiKey.issue(owner, "desktop")
    target = {
        "shown": row.shown,
        "shown without dots": row.shown.rstrip("…"),
        "lookup": row.lookup,
        "whole key": key,
    }[named]
    _out, err = apikeys("revoke", target)
    assert row.shown in err and key not in err
    assert ApiKey.objects.get(pk=row.pk).revoked_at is not None
    assert ApiKey.objects.get(pk=other.pk).revoked_at is None
    with pytest.raises(KeyRefused, match="revoked"):
        authenticate(request_as(Authorization=f"Bearer {key}"))


def test_revoke_by_user_and_name_revokes_that_persons_keys_of_that_name(owner, stranger):
    first, _ = ApiKey.issue(owner, "laptop")
    second, _ = ApiKey.issue(owner, "laptop")
    kept, _ = ApiKey.issue(owner, "desktop")
    theirs, _ = ApiKey.issue(stranger, "laptop")
    apikeys("revoke", "owner", "--name", "laptop")
    revoked = set(ApiKey.objects.filter(revoked_at__isnull=False).values_list("pk", flat=True))
    assert revoked == {first.pk, second.pk}
    assert kept.pk not in revoked and theirs.pk not in revoked


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["revoke", "aw-nothing0"], "No key is"),
        (["revoke", "aw-short"], "No key is"),
        (["revoke", "nobody", "--name", "laptop"], "No user is called"),
        (["revoke", "owner", "--name", "no such name"], "no key called"),
    ],
)
def test_revoke_refuses_what_names_no_key_and_revokes_nothing(owner, args, said):
    row, _key = ApiKey.issue(owner, "laptop")
    with pytest.raises(CommandError, match=said):
        apikeys(*args)
    assert ApiKey.objects.get(pk=row.pk).revoked_at is None


def test_revoke_refuses_a_whole_key_that_is_wrong_even_if_it_begins_like_one(owner):
    row, key = ApiKey.issue(owner, "laptop")
    with pytest.raises(CommandError, match="No key is"):
        apikeys("revoke", key[:-3] + "zzz" if not key.endswith("zzz") else key[:-3] + "yyy")
    assert ApiKey.objects.get(pk=row.pk).revoked_at is None


def test_the_help_says_both_ways_to_name_a_key_to_revoke():
    text = " ".join(Command().create_parser("manage.py", "apikeys").format_help().split())
    assert "'apikeys revoke KEY'" in text and "aw-AbCdEfGh" in text
    assert "'apikeys revoke USERNAME --name NAME'" in text
    assert "alone on standard output" in text
