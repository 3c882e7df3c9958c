"""`manage.py triggers`: add prints `<id> <secret>` alone, and refuses without writing; list; remove."""

import io

import pytest
from django.core.management import CommandError, call_command

from hooks.models import Trigger

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("triggers", *args, stdout=out)
    return out.getvalue()


def test_add_prints_the_id_and_the_secret_alone(owner):
    printed = run("add", owner.username, "--prompt", "Hello {name}")
    assert printed.count("\n") == 1
    trigger_id, secret = printed.split()
    row = Trigger.objects.get(pk=trigger_id)
    assert (row.owner, row.secret, row.prompt) == (owner, secret, "Hello {name}")


@pytest.mark.parametrize(
    "args",
    [("nobody", "--prompt", "x"), ("OWNER", "--agent", "nope", "--prompt", "x"), ("OWNER", "--prompt", "{")],
)
def test_add_refuses_and_writes_nothing(owner, args):
    with pytest.raises(CommandError):
        run("add", *(owner.username if arg == "OWNER" else arg for arg in args))
    assert not Trigger.objects.exists()


def test_list_and_remove(owner):
    trigger_id = run("add", owner.username, "--prompt", "x {y}", "--name", "CI").split()[0]
    assert run("list").split("\t")[:4] == [trigger_id, owner.username, "(default)", "CI"]
    run("remove", trigger_id)
    assert not Trigger.objects.exists()
    with pytest.raises(CommandError):
        run("remove", trigger_id)


def test_an_id_never_starts_with_a_dash_so_remove_can_take_it(owner, monkeypatch):
    # token_urlsafe gives a leading "-" once in 64; argparse would read such an id as an option (CI met one).
    drawn = iter(["-dashfirst", "plainid"])
    monkeypatch.setattr("hooks.models.secrets.token_urlsafe", lambda n: next(drawn))
    trigger_id = run("add", owner.username, "--prompt", "x").split()[0]
    assert trigger_id == "plainid"
    run("remove", trigger_id)
    assert not Trigger.objects.exists()


def test_an_older_id_with_a_leading_dash_is_removed_after_a_double_dash(owner):
    Trigger.objects.create(id="-older", owner=owner, prompt="x")
    run("remove", "--", "-older")
    assert not Trigger.objects.exists()
