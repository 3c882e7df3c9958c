"""A long conversation still opens: its snapshot, over Daphne's default 1 MiB message limit, reaches the page."""

import asyncio

import pytest

from tests.support.processes import app_environment, daphne, log_in, manage
from tests.support.sockets import ChatSocket

ANSWER_CHARS = 1_500_000

SEED = f"""
from django.contrib.auth.models import User
from chat.models import Message, Thread
user = User.objects.create_user('ada', password='lovelace-1815')
thread = Thread.objects.create(owner=user, title='A long answer')
Message.objects.create(thread=thread, order=1, role='user', content='write a lot')
Message.objects.create(thread=thread, order=2, role='assistant', content='x' * {ANSWER_CHARS}, status='complete')
print(thread.pk)
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    env = app_environment(tmp_path_factory.mktemp("large"))
    manage(env, "migrate", "--noinput")
    thread = manage(env, "shell", "-c", SEED).strip().splitlines()[-1]
    with daphne(env) as base_url:
        yield base_url, thread


def test_a_thread_whose_snapshot_is_over_a_mebibyte_opens(app):
    base_url, thread = app

    async def open_thread():
        async with ChatSocket(base_url, log_in(base_url, "ada", "lovelace-1815")) as socket:
            await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
            return (await socket.until("thread.snapshot"))[-1]

    snapshot = asyncio.run(open_thread())

    assert len(snapshot["messages"][1]["content"]) == ANSWER_CHARS
