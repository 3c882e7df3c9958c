"""The admin as a superuser sees it: titled for agentweb, no Add where the app writes the rows itself (messages, tool
calls, runs), and no red ✖ in a column where False is the fine, normal case (a tool the code still defines, a token
count the server sent)."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chat.models import Message, Run, Thread, ToolCall, Usage
from tools.models import ToolSetting

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    user = get_user_model().objects.create_superuser("root", password="root-password-1")
    client = Client()
    client.force_login(user)
    return client, user


def test_the_admin_is_titled_for_agentweb(admin_client):
    client, _ = admin_client
    page = client.get("/admin/").content.decode()
    assert "agentweb administration" in page
    assert "<title>Models, agents, tools and chats | agentweb admin</title>" in page
    assert "Django administration" not in page


@pytest.mark.parametrize("model", ["message", "toolcall", "run"])
def test_rows_the_app_writes_have_no_add(admin_client, model):
    client, _ = admin_client
    assert client.get(f"/admin/chat/{model}/add/").status_code == 403
    listing = client.get(f"/admin/chat/{model}/").content.decode()
    assert f'href="/admin/chat/{model}/add/"' not in listing
    index = client.get("/admin/").content.decode()
    assert f'href="/admin/chat/{model}/add/"' not in index
    assert 'href="/admin/chat/thread/add/"' in index  # a chat can still be made for someone


def test_a_thread_page_offers_no_empty_message_rows(admin_client):
    client, user = admin_client
    thread = Thread.objects.create(owner=user, title="A chat")
    Message.objects.create(thread=thread, order=1, role="user", content="hi")
    page = client.get(f"/admin/chat/thread/{thread.pk}/change/").content.decode()
    # The inline's "Add another" row shows only below its maximum of forms, which is the rows there are.
    assert 'name="messages-MAX_NUM_FORMS" value="0"' in page


def test_fine_rows_show_no_red_cross(admin_client):
    client, user = admin_client
    ToolSetting.objects.create(name="gone_from_code", missing=True)
    Usage.objects.create(user=user, model_label="Exact", input_tokens=10, output_tokens=2)
    Usage.objects.create(user=user, model_label="Guessed", input_tokens=10, output_tokens=2, estimated=True)
    tools = client.get("/admin/tools/toolsetting/").content.decode()
    usage = client.get("/admin/chat/usage/").content.decode()
    # The "missing" and "estimated" columns: a word on the unusual row only, never the boolean icons.
    tools_rows = tools.split('id="result_list"')[1].split("</table>")[0]
    usage_rows = usage.split('id="result_list"')[1].split("</table>")[0]
    assert tools_rows.count(">missing</span>") == 1  # the code's own tools (synced on the page) are blank
    assert usage_rows.count(">estimated</span>") == 1
    assert "icon-no.svg" not in usage_rows
    assert '<td class="field-missing_flag">-</td>' in tools_rows  # a tool still in the code: the admin's dash


def test_run_and_tool_call_pages_still_open(admin_client):
    client, user = admin_client
    thread = Thread.objects.create(owner=user, title="A chat")
    message = Message.objects.create(thread=thread, order=1, role="assistant", content="")
    call = ToolCall.objects.create(message=message, index=0, call_id="c1", name="calculator", args={})
    run = Run.objects.create(thread=thread)
    assert client.get(f"/admin/chat/toolcall/{call.pk}/change/").status_code == 200
    assert client.get(f"/admin/chat/run/{run.pk}/change/").status_code == 200
