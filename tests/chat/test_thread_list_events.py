"""A person's other tabs learn of threads created, renamed and deleted; nobody else's tabs do."""

import pytest
from asgiref.sync import sync_to_async
from django.test import Client as HttpClient

from chat.models import Thread

pytestmark = pytest.mark.django_db(transaction=True)


async def post_as(user, path: str, data: dict) -> int:
    def post():
        http = HttpClient()
        http.force_login(user)
        return http.post(path, data, content_type="application/json").status_code

    return await sync_to_async(post)()


async def nothing_more(client) -> bool:
    return await client.communicator.receive_nothing(timeout=0.3)


async def test_a_thread_created_in_one_tab_is_listed_in_the_others(connect, owner, stranger):
    writing, other_tab, someone_else = await connect(owner), await connect(owner), await connect(stranger)

    await writing.ask("hello")
    events = await writing.run_to_end()

    thread = events[0]["thread"]
    assert await other_tab.receive() == {
        "type": "thread.listed",
        "thread": thread,
        "title": events[0]["title"],
        "agent": None,
        "source": "chat",
    }
    assert "thread.listed" not in [e["type"] for e in events]  # the writing tab knows already
    assert await nothing_more(someone_else)


async def test_a_rename_reaches_every_tab_of_the_owner_and_no_one_else(connect, owner, stranger):
    first = await connect(owner)
    await first.ask("hello")
    thread = (await first.run_to_end())[0]["thread"]
    other_tab, someone_else = await connect(owner), await connect(stranger)

    assert await post_as(owner, f"/t/{thread}/rename", {"title": "Renamed"}) == 200

    assert await other_tab.receive() == {"type": "thread.renamed", "thread": thread, "title": "Renamed"}
    assert await first.receive() == {"type": "thread.renamed", "thread": thread, "title": "Renamed"}
    assert await nothing_more(someone_else)


async def test_a_delete_reaches_every_tab_of_the_owner(connect, owner):
    first = await connect(owner)
    await first.ask("hello")
    thread = (await first.run_to_end())[0]["thread"]
    other_tab = await connect(owner)

    assert await post_as(owner, f"/t/{thread}/delete", {}) == 200

    assert await other_tab.receive() == {"type": "thread.deleted", "thread": thread}


async def test_another_users_rename_attempt_tells_no_one(connect, owner, stranger):
    first = await connect(owner)
    await first.ask("hello")
    thread = (await first.run_to_end())[0]["thread"]

    assert await post_as(stranger, f"/t/{thread}/rename", {"title": "Mine now"}) == 404

    assert await nothing_more(first)


async def test_a_pin_and_an_archive_reach_every_tab_of_the_owner_and_no_one_else(connect, owner, stranger):
    writing = await connect(owner)
    await writing.ask("hello")
    thread = (await writing.run_to_end())[0]["thread"]
    other_tab, someone_else = await connect(owner), await connect(stranger)

    assert await post_as(owner, f"/t/{thread}/pin", {"pinned": True}) == 200
    assert await other_tab.receive() == {"type": "thread.pinned", "thread": thread, "pinned": True}
    assert await post_as(owner, f"/t/{thread}/archive", {"archived": True}) == 200
    assert await other_tab.receive() == {"type": "thread.archived", "thread": thread, "archived": True}
    assert await post_as(owner, f"/t/{thread}/archive", {"archived": False}) == 200
    assert await other_tab.receive() == {"type": "thread.archived", "thread": thread, "archived": False}
    assert await nothing_more(someone_else)


async def test_a_message_sent_in_an_archived_chat_takes_it_out_of_the_archive_in_every_tab(connect, owner):
    writing = await connect(owner)
    await writing.ask("hello")
    thread = (await writing.run_to_end())[0]["thread"]
    assert await post_as(owner, f"/t/{thread}/archive", {"archived": True}) == 200
    other_tab = await connect(owner)

    await writing.ask("back to this one", thread=thread)

    assert await other_tab.receive() == {"type": "thread.archived", "thread": thread, "archived": False}
    assert (await Thread.objects.aget(pk=thread)).archived_at is None
