"""An HTTP tool's secret headers stay with the server they were typed for: pointing its URL elsewhere (another
scheme, host or port) clears them, through the admin, a QuerySet or bulk_update, unless they are typed again."""

import pytest

from tests.tools import test_admin
from tests.tools.local_http import LocalServer, Reply
from tests.tools.test_admin import SECRET, client_for, http_tool_form, saved_http_tool, try_url
from tools.models import AllowedHost, HttpTool

pytestmark = pytest.mark.django_db

# test_admin's fixtures, for this module only (pytest_plugins would make its autouse fixture everyone's)
tool_manager = test_admin.tool_manager
rows_for_the_code_tools = test_admin.rows_for_the_code_tools


def change(tool) -> str:
    return f"/admin/tools/httptool/{tool.pk}/change/"


@pytest.fixture
def their_server(db):
    """A server of the staff member who edits the tool, on loopback (allowed): it records what it is sent."""
    AllowedHost.objects.create(host="127.0.0.1", note="the test server")
    with LocalServer({"/items/7": Reply(200, b"ok")}) as server:
        yield server


def test_staff_who_point_a_tool_at_their_server_are_not_sent_its_headers(tool_manager, their_server):
    tool = saved_http_tool()
    client = client_for(tool_manager)
    form = http_tool_form([("Authorization", "Authorization", "")], url_template=their_server.url("/items/{item_id}"))
    page = client.post(change(tool), form, follow=True).content.decode()
    assert "now points at another server" in page and "its stored header Authorization." in page

    result = client.post(try_url(tool), {"arguments": '{"item_id": "7"}'}).context["result"]
    assert result.status == "success"
    [(_, path, headers)] = their_server.requests
    assert path == "/items/7" and "Authorization" not in headers
    tool.refresh_from_db()
    assert tool.headers == {}


def test_a_header_typed_again_with_the_new_url_is_sent_there(tool_manager, their_server):
    tool = saved_http_tool()
    client = client_for(tool_manager)
    url = their_server.url("/items/{item_id}")
    form = http_tool_form([("Authorization", "Authorization", f"Bearer {SECRET}")], url_template=url)
    page = client.post(change(tool), form, follow=True).content.decode()
    assert "now points at another server" not in page
    client.post(try_url(tool), {"arguments": '{"item_id": "7"}'})
    assert their_server.requests[0][2]["Authorization"] == f"Bearer {SECRET}"


def test_another_path_on_the_same_server_keeps_the_headers(tool_manager):
    tool = saved_http_tool()
    form = http_tool_form(
        [("Authorization", "Authorization", "")], url_template="https://API.example.com:443/v2/{item_id}"
    )
    client_for(tool_manager).post(change(tool), form)
    tool.refresh_from_db()
    assert (tool.url_template, tool.headers) == (
        "https://API.example.com:443/v2/{item_id}",
        {"Authorization": f"Bearer {SECRET}"},
    )


def test_an_update_or_bulk_update_that_moves_a_tool_clears_its_headers():
    tool = saved_http_tool()
    HttpTool.objects.filter(pk=tool.pk).update(url_template="http://api.example.com/items/{item_id}")  # http now
    assert HttpTool.objects.get(pk=tool.pk).headers == {}

    tool = HttpTool.objects.get(pk=saved_http_tool(name="other").pk)
    tool.url_template = "https://attacker.example/items/{item_id}"
    HttpTool.objects.bulk_update([tool], ["url_template"])
    assert HttpTool.objects.get(pk=tool.pk).headers == {}
