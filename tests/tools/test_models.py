"""The registry rows' own checks: what the admin form reports, whoever saves the row."""

import pytest
from django.core.exceptions import ValidationError

from tools.models import AllowedHost, HttpTool, ToolSetting

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {"item_id": {"type": "string"}, "note": {"type": "string"}}}


def http_tool(**fields) -> HttpTool:
    defaults = dict(
        name="lookup",
        description="Look up an item.",
        parameters=SCHEMA,
        url_template="https://api.example.com/items/{item_id}",
    )
    return HttpTool(**{**defaults, **fields})


def problems(row) -> dict[str, list[str]]:
    try:
        row.full_clean()
    except ValidationError as error:
        return error.message_dict
    return {}


def test_it_accepts_a_complete_http_tool():
    assert problems(http_tool(method="POST", body_template='{"note": {note}}')) == {}


def test_it_refuses_a_schema_that_is_not_a_valid_json_schema():
    bad = {"type": "object", "properties": {"n": {"type": "integr"}}}

    assert "Not a valid JSON Schema" in problems(http_tool(parameters=bad))["parameters"][0]


def test_it_refuses_parameters_that_are_not_an_object_schema():
    assert "type" in problems(http_tool(parameters={"type": "string"}))["parameters"][0]


def test_it_refuses_a_name_that_providers_reject():
    assert "name" in problems(http_tool(name="look up"))


def test_it_refuses_a_placeholder_in_the_host():
    assert "host is fixed" in problems(http_tool(url_template="https://{item_id}.example.com/"))["url_template"][0]


def test_it_refuses_a_user_name_and_password_in_the_url():
    problem = problems(http_tool(url_template="https://bob:pw@api.example.com/items/{item_id}"))["url_template"][0]
    assert "Authorization header" in problem


def test_it_refuses_a_url_that_is_not_http():
    assert "url_template" in problems(http_tool(url_template="file:///etc/passwd"))


def test_it_refuses_a_body_template_that_is_not_json():
    row = http_tool(method="POST", body_template='{"note": {note}')

    assert "not valid JSON" in problems(row)["body_template"][0]


def test_it_refuses_a_body_on_a_get():
    assert "no body" in problems(http_tool(body_template='{"note": {note}}'))["body_template"][0]


def test_it_refuses_a_header_value_on_two_lines():
    row = http_tool(headers={"X-Api-Key": "abc\r\nX-Other: injected"})

    assert "one line" in problems(row)["headers"][0]


def test_it_refuses_approval_without_any_choice():
    none = dict(allow_approve=False, allow_edit=False, allow_reject=False, allow_respond=False)
    row = http_tool(requires_approval=True, **none)

    assert "at least one choice" in problems(row)["__all__"][0]


def test_it_lets_a_tool_that_needs_no_approval_offer_no_choice():
    none = dict(allow_approve=False, allow_edit=False, allow_reject=False, allow_respond=False)
    row = ToolSetting(name="a_new_tool", **none)

    assert problems(row) == {}


def test_it_stores_an_allowed_host_in_lower_case_without_brackets():
    host = AllowedHost(host="[::1]")
    host.full_clean()

    assert host.host == "::1"


def test_it_refuses_an_allowed_host_with_a_scheme_or_port():
    assert "host" in problems(AllowedHost(host="http://intranet:8080"))
