"""The tool registry in the admin, through the Django test client, as named personas:

- ``superuser``: may do anything;
- ``tool_manager``: staff with the permissions on code tools and HTTP tools;
- ``viewer``: staff who may only view HTTP tools;
- ``staff_without_permission``: staff, no permission on tools;
- ``owner``: a plain user (tests/conftest.py).
"""

import asyncio
import json
import threading

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from tests.tools.test_http_tool import LocalServer
from tools.base import tool
from tools.executor import execute_tool
from tools.models import AllowedHost, HttpTool, ToolSetting
from tools.pool import TOOL_THREADS
from tools.registry import ToolRegistry
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db

SECRET = "sk-live-very-secret-0123456789"
SCHEMA = {"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}


def staff(username: str, *permissions: str):
    user = get_user_model().objects.create_user(username, password=f"{username}-password-1", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="tools", codename__in=permissions))
    return user


@pytest.fixture(autouse=True)
def rows_for_the_code_tools():
    sync_tool_settings()


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", password="root-password-1")


@pytest.fixture
def tool_manager(db):
    return staff(
        "manager",
        "view_toolsetting",
        "change_toolsetting",
        "view_httptool",
        "add_httptool",
        "change_httptool",
    )


@pytest.fixture
def viewer(db):
    return staff("viewer", "view_httptool", "view_toolsetting")


@pytest.fixture
def staff_without_permission(db):
    return staff("nobody")


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def calculator_row() -> ToolSetting:
    return ToolSetting.objects.get(name="calculator")


def saved_http_tool(**fields) -> HttpTool:
    defaults = dict(
        name="lookup",
        description="Look up an item.",
        parameters=SCHEMA,
        url_template="https://api.example.com/items/{item_id}",
        headers={"Authorization": f"Bearer {SECRET}"},
    )
    return HttpTool.objects.create(**{**defaults, **fields})


def http_tool_form(headers: list[tuple[str, str, str]] = (), **fields) -> dict:
    """The add/change form's POST data; ``headers`` rows are (name, original name, value)."""
    data = {
        "name": "lookup",
        "description": "Look up an item.",
        "enabled": "on",
        "method": "GET",
        "url_template": "https://api.example.com/items/{item_id}",
        "body_template": "",
        "timeout": "",
        "parameters": json.dumps(SCHEMA),
        "allow_approve": "on",
        "allow_edit": "on",
        "allow_reject": "on",
        "allow_respond": "on",
        "secret_headers-count": str(len(headers)),
        "_save": "Save",
    }
    for i, (name, original, value) in enumerate(headers):
        data.update({f"secret_headers-{i}-name": name, f"secret_headers-{i}-original": original})
        data[f"secret_headers-{i}-value"] = value
    data.update(fields)
    return data


# --- code tools -------------------------------------------------------------------------


def test_it_lists_the_code_tools(tool_manager):
    response = client_for(tool_manager).get("/admin/tools/toolsetting/")

    assert response.status_code == 200
    assert b"calculator" in response.content
    assert b"current_time" in response.content


def test_it_warns_about_calls_still_running_past_their_timeout(tool_manager):
    release = threading.Event()

    @tool(timeout=0.1)
    def hang() -> str:
        """Block until released."""
        release.wait(30)
        return "released"

    try:
        asyncio.run(execute_tool(ToolRegistry([hang]), "hang", {}))
        page = client_for(tool_manager).get("/admin/tools/toolsetting/").content.decode()
    finally:
        release.set()
        TOOL_THREADS.wait_idle("hang", timeout=30)
    assert "1 call of the tool hang is still running past its timeout of 0.1 s" in page


def test_it_shows_the_change_page_of_a_code_tool_with_its_code_description(tool_manager):
    response = client_for(tool_manager).get(f"/admin/tools/toolsetting/{calculator_row().pk}/change/")

    assert response.status_code == 200
    assert b"Description in the code" in response.content
    assert b"Try it" in response.content


def test_it_saves_a_timeout_and_description_override(tool_manager):
    row = calculator_row()
    data = {
        "enabled": "on",
        "description_override": "Arithmetic only.",
        "allow_approve": "on",
        "allow_reject": "on",
        "timeout": "2.5",
        "_save": "Save",
    }

    client_for(tool_manager).post(f"/admin/tools/toolsetting/{row.pk}/change/", data)

    row.refresh_from_db()
    assert (row.description_override, row.timeout) == ("Arithmetic only.", 2.5)


def test_it_offers_no_add_page_for_code_tools(superuser):
    assert client_for(superuser).get("/admin/tools/toolsetting/add/").status_code == 403


def test_it_refuses_to_delete_a_code_tool_that_exists(superuser):
    response = client_for(superuser).post(f"/admin/tools/toolsetting/{calculator_row().pk}/delete/", {"post": "yes"})

    assert response.status_code == 403
    assert ToolSetting.objects.filter(name="calculator").exists()


def test_it_deletes_the_row_of_a_tool_that_went_missing(superuser):
    gone = ToolSetting.objects.create(name="old_tool", missing=True)

    client_for(superuser).post(f"/admin/tools/toolsetting/{gone.pk}/delete/", {"post": "yes"})

    assert not ToolSetting.objects.filter(name="old_tool").exists()


def test_it_refuses_the_code_tools_list_to_staff_without_permission(staff_without_permission):
    assert client_for(staff_without_permission).get("/admin/tools/toolsetting/").status_code == 403


# --- HTTP tools -------------------------------------------------------------------------


def test_it_creates_an_http_tool_with_its_secret_header(tool_manager):
    client_for(tool_manager).post("/admin/tools/httptool/add/", http_tool_form([("Authorization", "", SECRET)]))

    assert HttpTool.objects.get(name="lookup").headers == {"Authorization": SECRET}


def test_it_reports_an_invalid_json_schema_and_saves_nothing(tool_manager):
    bad = json.dumps({"type": "object", "properties": {"n": {"type": "integr"}}})

    response = client_for(tool_manager).post("/admin/tools/httptool/add/", http_tool_form(parameters=bad))

    assert response.status_code == 200
    assert "Not a valid JSON Schema" in response.context["adminform"].form.errors["parameters"][0]
    assert not HttpTool.objects.exists()


def test_it_reports_a_placeholder_that_is_not_a_parameter(tool_manager):
    form = http_tool_form(url_template="https://api.example.com/items/{id}")

    response = client_for(tool_manager).post("/admin/tools/httptool/add/", form)

    assert "{id}" in response.context["adminform"].form.errors["url_template"][0]
    assert not HttpTool.objects.exists()


def test_it_refuses_the_name_of_a_code_tool(tool_manager):
    response = client_for(tool_manager).post("/admin/tools/httptool/add/", http_tool_form(name="calculator"))

    assert "code-defined tool" in response.context["adminform"].form.errors["name"][0]


def test_it_never_renders_a_secret_header_value_on_the_change_page(tool_manager):
    tool = saved_http_tool()

    response = client_for(tool_manager).get(f"/admin/tools/httptool/{tool.pk}/change/")

    assert response.status_code == 200
    assert SECRET.encode() not in response.content
    assert "•••• (set)".encode() in response.content
    assert b'value="Authorization"' in response.content


def test_the_list_shows_an_older_rows_url_without_its_password(tool_manager):
    tool = saved_http_tool()
    HttpTool.objects.filter(pk=tool.pk).update(url_template="https://bob:pw-old-row-77@api.example.com/items")

    response = client_for(tool_manager).get("/admin/tools/httptool/")

    assert response.status_code == 200
    assert b"https://api.example.com/items" in response.content
    assert b"pw-old-row-77" not in response.content


def test_it_never_renders_a_secret_header_value_to_a_viewer(viewer):
    tool = saved_http_tool()

    response = client_for(viewer).get(f"/admin/tools/httptool/{tool.pk}/change/")

    assert response.status_code == 200
    assert SECRET.encode() not in response.content
    assert b"Authorization" in response.content


def test_it_does_not_render_a_typed_secret_back_when_the_form_has_an_error(tool_manager):
    form = http_tool_form([("X-Api-Key", "", SECRET)], parameters="{not json")

    response = client_for(tool_manager).post("/admin/tools/httptool/add/", form)

    assert response.status_code == 200
    assert SECRET.encode() not in response.content


def test_it_keeps_a_secret_header_left_blank_on_edit(tool_manager):
    tool = saved_http_tool()
    form = http_tool_form([("Authorization", "Authorization", "")], description="Changed.")

    client_for(tool_manager).post(f"/admin/tools/httptool/{tool.pk}/change/", form)

    tool.refresh_from_db()
    assert (tool.description, tool.headers) == ("Changed.", {"Authorization": f"Bearer {SECRET}"})


def test_it_keeps_the_value_of_a_renamed_header(tool_manager):
    tool = saved_http_tool()

    form = http_tool_form([("X-Authorization", "Authorization", "")])
    client_for(tool_manager).post(f"/admin/tools/httptool/{tool.pk}/change/", form)

    tool.refresh_from_db()
    assert tool.headers == {"X-Authorization": f"Bearer {SECRET}"}


def test_it_replaces_a_secret_header_given_a_new_value(tool_manager):
    tool = saved_http_tool()

    form = http_tool_form([("Authorization", "Authorization", "Bearer new-token")])
    client_for(tool_manager).post(f"/admin/tools/httptool/{tool.pk}/change/", form)

    tool.refresh_from_db()
    assert tool.headers == {"Authorization": "Bearer new-token"}


def test_it_removes_a_header_marked_remove(tool_manager):
    tool = saved_http_tool()
    form = http_tool_form([("Authorization", "Authorization", "")])
    form["secret_headers-0-remove"] = "on"

    client_for(tool_manager).post(f"/admin/tools/httptool/{tool.pk}/change/", form)

    tool.refresh_from_db()
    assert tool.headers == {}


def test_it_asks_for_the_value_of_a_new_header(tool_manager):
    response = client_for(tool_manager).post("/admin/tools/httptool/add/", http_tool_form([("X-Api-Key", "", "")]))

    assert "Give a value for the header X-Api-Key." in response.context["adminform"].form.errors["secret_headers"]
    assert not HttpTool.objects.exists()


def test_it_checks_the_schema_on_change_as_on_create(tool_manager):
    tool = saved_http_tool()
    bad = json.dumps({"type": "object", "properties": {"item_id": {"type": 5}}})

    client_for(tool_manager).post(f"/admin/tools/httptool/{tool.pk}/change/", http_tool_form(parameters=bad))

    tool.refresh_from_db()
    assert tool.parameters == SCHEMA


def test_it_refuses_the_add_page_to_staff_without_permission(staff_without_permission):
    response = client_for(staff_without_permission).post("/admin/tools/httptool/add/", http_tool_form())

    assert response.status_code == 403
    assert not HttpTool.objects.exists()


def test_it_refuses_a_change_to_a_viewer(viewer):
    tool = saved_http_tool()

    response = client_for(viewer).post(f"/admin/tools/httptool/{tool.pk}/change/", http_tool_form(description="X"))

    assert response.status_code == 403
    assert HttpTool.objects.get(pk=tool.pk).description == "Look up an item."


# --- try it -----------------------------------------------------------------------------


def try_url(row) -> str:
    return f"/admin/tools/{row._meta.model_name}/{row.pk}/try/"


def test_it_prefills_the_try_page_with_example_arguments(tool_manager):
    response = client_for(tool_manager).get(try_url(calculator_row()))

    assert response.status_code == 200
    assert json.loads(response.context["form"]["arguments"].value()) == {"expression": ""}


def test_it_runs_the_calculator_on_the_try_page(tool_manager):
    response = client_for(tool_manager).post(try_url(calculator_row()), {"arguments": '{"expression": "23*19"}'})

    result = response.context["result"]
    assert (result.status, result.content) == ("success", "437")
    assert b'<pre id="try-content">437</pre>' in response.content
    assert b'id="try-status">success<' in response.content
    assert b'id="try-duration">' in response.content


def test_it_shows_an_argument_error_as_the_tools_error_result(tool_manager):
    response = client_for(tool_manager).post(try_url(calculator_row()), {"arguments": '{"expr": "1"}'})

    assert response.context["result"].status == "error"
    assert b"expression" in response.content


def test_it_reports_arguments_that_are_not_json(tool_manager):
    response = client_for(tool_manager).post(try_url(calculator_row()), {"arguments": "23*19"})

    assert response.context["result"] is None
    assert "Not valid JSON" in response.context["form"].errors["arguments"][0]


def test_it_refuses_the_try_page_to_staff_without_permission(staff_without_permission):
    response = client_for(staff_without_permission).post(try_url(calculator_row()), {"arguments": "{}"})

    assert response.status_code == 403


def test_it_refuses_the_try_page_to_a_viewer(viewer):
    assert client_for(viewer).get(try_url(calculator_row())).status_code == 403


def test_it_sends_a_plain_user_to_the_admin_login_from_the_try_page(owner):
    response = client_for(owner).get(try_url(calculator_row()))

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_it_refuses_a_try_post_without_the_csrf_token(tool_manager):
    client = Client(enforce_csrf_checks=True)
    client.force_login(tool_manager)

    response = client.post(try_url(calculator_row()), {"arguments": '{"expression": "1+1"}'})

    assert response.status_code == 403


def test_it_shows_the_guards_refusal_when_an_http_tool_targets_a_local_host(tool_manager):
    tool = saved_http_tool(url_template="http://127.0.0.1:9/items/{item_id}")

    response = client_for(tool_manager).post(try_url(tool), {"arguments": '{"item_id": "7"}'})

    assert response.context["result"].status == "error"
    assert "Refused" in response.context["result"].content


def test_it_runs_an_http_tool_and_escapes_its_result(tool_manager):
    AllowedHost.objects.create(host="127.0.0.1", note="the test server")
    with LocalServer() as server:
        tool = saved_http_tool(
            method="POST", url_template=server.base_url + "/echo", body_template='{"item": {item_id}}'
        )

        response = client_for(tool_manager).post(try_url(tool), {"arguments": '{"item_id": "<script>x</script>"}'})

    assert response.context["result"].status == "success"
    assert b"&lt;script&gt;x&lt;/script&gt;" in response.content
    assert b"<script>x</script>" not in response.content
    assert SECRET.encode() not in response.content
