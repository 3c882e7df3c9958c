"""The owner's share links: create, list, update the snapshot, revoke. A stranger gets 404 and writes nothing."""

import hashlib
import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from chat.models import Thread
from sharing.models import ShareLink

pytestmark = pytest.mark.django_db


def create_url(thread):
    return reverse("sharing:create", args=[thread.id])


def token_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[1]


def test_it_stores_only_the_hash_of_the_token(as_owner, thread):
    response = as_owner.post(create_url(thread), HTTP_ACCEPT="application/json")
    assert response.status_code == 201
    token = token_of(response.json()["url"])
    link = ShareLink.objects.get()
    assert link.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in json.dumps(list(ShareLink.objects.values()), default=str)


def test_it_answers_the_form_without_javascript_with_a_page_showing_the_link(as_owner, thread):
    response = as_owner.post(create_url(thread), {"hide_system_prompt": "on"})
    assert response.status_code == 201
    assert "/s/" in response.content.decode()
    assert "no-cache" in response["Cache-Control"]


def test_it_stores_the_options_the_owner_chose(as_owner, owner, thread):
    from agents.models import Agent

    thread.agent = Agent.objects.create(slug="mine", name="Mine", owner=owner, system_prompt="Be brief.")
    thread.save()
    as_owner.post(create_url(thread), {"display_name": "Grace", "hide_tool_details": "on"})
    link = ShareLink.objects.get()
    assert (link.display_name, link.hide_tool_details, link.hide_system_prompt) == ("Grace", True, False)


def test_it_names_the_owner_by_their_first_name_by_default(as_owner, owner, thread):
    owner.first_name = "Ada"
    owner.save()
    as_owner.post(create_url(thread), {"display_name": ""})
    assert ShareLink.objects.get().display_name == "Ada"


def test_it_names_an_owner_without_a_first_name_a_user(as_owner, thread):
    as_owner.post(create_url(thread), {"display_name": "  "})
    assert ShareLink.objects.get().display_name == "A user"


def test_it_refuses_a_create_without_the_csrf_token(owner, thread):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post(create_url(thread)).status_code == 403
    assert not ShareLink.objects.exists()


def test_it_lists_all_the_owners_links_without_their_tokens(as_owner, share):
    first, first_token = share()
    second, second_token = share(display_name="Someone")
    first.revoke()
    page = as_owner.get(reverse("sharing:list")).content.decode()
    assert str(first.id) in page and str(second.id) in page
    assert first_token not in page and second_token not in page
    assert "revoked" in page


def test_it_revokes_a_link(as_owner, share):
    link, _ = share()
    response = as_owner.post(reverse("sharing:revoke", args=[link.id]))
    assert response.status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None


def test_the_list_says_whether_each_links_files_are_shared(as_owner, share):
    with_files, _ = share(share_attachments=True)
    without, _ = share()
    page = as_owner.get(reverse("sharing:list")).content.decode()
    items = {item.split('"', 1)[0]: item for item in page.split('data-link-id="')[1:]}
    assert "files shared" in items[str(with_files.id)] and "files not shared" not in items[str(with_files.id)]
    assert "files not shared" in items[str(without.id)]


def test_revoke_asks_first_and_the_answer_revokes(as_owner, share):
    link, _ = share()
    revoke_url = reverse("sharing:revoke", args=[link.id])
    listing = as_owner.get(reverse("sharing:list")).content.decode()
    assert f'href="{revoke_url}"' in listing  # a way to the question, not a button that revokes at once
    assert f'action="{revoke_url}"' not in listing
    question = as_owner.get(revoke_url)
    assert question.status_code == 200
    page = question.content.decode()
    assert "What is 23*19?" in page and "cannot be undone" in page
    assert f'<form method="post" action="{revoke_url}">' in page
    link.refresh_from_db()
    assert link.revoked_at is None  # asking changed nothing
    assert as_owner.post(revoke_url).status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None


def test_the_revoke_question_is_the_owners_only_and_only_for_a_live_link(as_owner, as_stranger, share):
    link, _ = share()
    revoke_url = reverse("sharing:revoke", args=[link.id])
    assert as_stranger.get(revoke_url).status_code == 404
    link.revoke()
    assert as_owner.get(revoke_url).status_code == 404


def test_it_updates_the_snapshot_and_keeps_the_token(as_owner, share, thread):
    from tests.sharing.conftest import add_message

    link, token = share()
    add_message(thread, "user", "and 437/19?")
    as_owner.post(reverse("sharing:update", args=[link.id]))
    link.refresh_from_db()
    assert link.snapshot["messages"][-1]["content"] == "and 437/19?"
    assert link.was_updated
    assert ShareLink.objects.get(token_hash=hashlib.sha256(token.encode()).hexdigest()) == link


def test_it_does_not_update_a_revoked_link(as_owner, share):
    link, _ = share()
    link.revoke()
    assert as_owner.post(reverse("sharing:update", args=[link.id])).status_code == 404


def test_it_404s_when_a_stranger_shares_the_owners_thread(as_stranger, thread):
    assert as_stranger.post(create_url(thread), HTTP_ACCEPT="application/json").status_code == 404
    assert not ShareLink.objects.exists()


def test_it_404s_when_a_stranger_revokes_the_owners_link(as_stranger, share):
    link, _ = share()
    assert as_stranger.post(reverse("sharing:revoke", args=[link.id])).status_code == 404
    link.refresh_from_db()
    assert link.revoked_at is None


def test_it_404s_when_a_stranger_updates_the_owners_link(as_stranger, share, thread):
    from tests.sharing.conftest import add_message

    link, _ = share()
    before = link.snapshot
    add_message(thread, "user", "a later message")
    assert as_stranger.post(reverse("sharing:update", args=[link.id])).status_code == 404
    link.refresh_from_db()
    assert (link.snapshot, link.was_updated) == (before, False)


def test_it_shows_a_stranger_none_of_the_owners_links(as_stranger, share):
    link, _ = share()
    page = as_stranger.get(reverse("sharing:list")).content.decode()
    assert str(link.id) not in page
    assert "What is 23*19?" not in page


def test_it_404s_for_a_link_id_that_does_not_exist(as_owner):
    assert as_owner.post(reverse("sharing:revoke", args=[uuid.uuid4()])).status_code == 404
    assert as_owner.post(reverse("sharing:update", args=[uuid.uuid4()])).status_code == 404


def test_it_404s_for_a_thread_id_that_does_not_exist(as_owner):
    assert as_owner.post(reverse("sharing:create", args=[uuid.uuid4()])).status_code == 404
    assert not ShareLink.objects.exists()


def test_it_sends_an_anonymous_visitor_of_the_list_to_the_login_page(anonymous):
    response = anonymous.get(reverse("sharing:list"))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def give_agent(thread, prompt="Internal escalation codes: 4242.", owner=None, slug="ops"):
    from agents.models import Agent

    thread.agent = Agent.objects.create(slug=slug, name=slug.title(), owner=owner, system_prompt=prompt)
    thread.save()
    return thread


def share_form(client, thread) -> str:
    page = client.get(reverse("chat:thread", args=[thread.id])).content.decode()
    return page.split('id="share-form"', 1)[1].split("</form>", 1)[0]


def visible(form: str, element_id: str) -> bool:
    """Whether the element with that id is drawn (no `hidden` attribute in its opening tag)."""
    tag = form.split(f'id="{element_id}"', 1)
    assert len(tag) == 2, element_id
    before, after = tag[0].rsplit("<", 1)[1], tag[1].split(">", 1)[0]
    return " hidden" not in before + after


def test_the_share_form_does_not_offer_to_show_a_prompt_its_author_cannot_read(as_owner, thread):
    give_agent(thread)  # an admin's agent: the chat page never shows the person its prompt
    form = share_form(as_owner, thread)
    assert not visible(form, "share-prompt-choice") and visible(form, "share-prompt-not-shared")
    assert "The system prompt is not shared." in form
    options = as_owner.get(reverse("sharing:options", args=[thread.id]))
    assert options.json() == {"shares_system_prompt": False}


def test_the_share_form_offers_to_show_the_prompt_of_the_owners_own_agent(as_owner, owner, thread):
    give_agent(thread, prompt="Be brief.", owner=owner, slug="mine")
    form = share_form(as_owner, thread)
    assert visible(form, "share-prompt-choice") and not visible(form, "share-prompt-not-shared")
    assert as_owner.get(reverse("sharing:options", args=[thread.id])).json() == {"shares_system_prompt": True}


def test_a_strangers_thread_has_no_share_options(as_stranger, thread):
    assert as_stranger.get(reverse("sharing:options", args=[thread.id])).status_code == 404


def test_the_list_says_what_the_shared_page_shows_of_the_prompt_not_what_an_older_link_asked(as_owner, owner, thread):
    from sharing.models import hash_token

    give_agent(thread)
    snapshot = {"version": 1, "title": "t", "agent": None, "system_prompt": "Internal escalation codes: 4242."}
    older = ShareLink.objects.create(
        thread=thread, token_hash=hash_token("old"), snapshot=snapshot, hide_system_prompt=False, display_name="A"
    )
    mine = give_agent(Thread.objects.create(owner=owner, title="Mine"), prompt="Be brief.", owner=owner, slug="mine")
    own = ShareLink.objects.create(
        thread=mine,
        token_hash=hash_token("own"),
        snapshot={**snapshot, "system_prompt": "Be brief."},
        hide_system_prompt=False,
        display_name="A",
    )
    page = as_owner.get(reverse("sharing:list")).content.decode()
    items = {item.split('"', 1)[0]: item for item in page.split('data-link-id="')[1:]}
    assert "system prompt not shown" in items[str(older.id)] and "system prompt shown" not in items[str(older.id)]
    assert "system prompt shown" in items[str(own.id)]
