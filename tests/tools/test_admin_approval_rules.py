"""Approval rules in the admin: a rule must name a tool that exists (and an argument it has), or the form says so.

The ``rule_manager`` persona is staff with the permissions on approval rules only.
"""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from tools.models import ApprovalRule, HttpTool, ToolSetting
from tools.services import sync_tool_settings

pytestmark = pytest.mark.django_db

ADD = "/admin/tools/approvalrule/add/"


@pytest.fixture(autouse=True)
def rows_for_the_code_tools():
    sync_tool_settings()


@pytest.fixture
def rule_manager(db):
    user = get_user_model().objects.create_user("rules", password="rules-password-1", is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="tools",
            codename__in=["view_approvalrule", "add_approvalrule", "change_approvalrule"],
        )
    )
    client = Client()
    client.force_login(user)
    return client


def rule_form(**fields) -> dict:
    form = {
        "tool_name": "fetch_url",
        "argument": "url",
        "match": "host",
        "pattern": "docs.python.org",
        "action": "allow",
        "position": "0",
        "enabled": "on",
        "note": "",
    }
    form.update(fields)
    return form


def errors(response) -> dict:
    assert response.status_code == 200, "the form was saved"
    return response.context["adminform"].form.errors


def test_a_rule_for_a_tool_that_does_not_exist_is_refused_with_the_likely_name(rule_manager):
    response = rule_manager.post(ADD, rule_form(tool_name="fetch_ur"))

    message = errors(response)["tool_name"][0]
    assert "No tool is called 'fetch_ur'" in message
    assert "Did you mean 'fetch_url'?" in message
    assert not ApprovalRule.objects.exists()


def test_a_rule_without_a_tool_name_gets_the_required_field_message_only(rule_manager):
    response = rule_manager.post(ADD, rule_form(tool_name=""))

    assert errors(response)["tool_name"] == ["This field is required."]


def test_a_rule_for_a_code_tool_is_saved(rule_manager):
    rule_manager.post(ADD, rule_form())

    assert ApprovalRule.objects.get().tool_name == "fetch_url"


def test_a_rule_for_an_http_tool_is_saved(rule_manager):
    HttpTool.objects.create(
        name="lookup",
        description="Look up an item.",
        parameters={"type": "object", "properties": {"item_id": {"type": "string"}}},
        url_template="https://api.example.com/items/{item_id}",
    )

    rule_manager.post(ADD, rule_form(tool_name="lookup", argument="item_id", match="equals", pattern="42"))

    assert ApprovalRule.objects.get().tool_name == "lookup"


def test_a_rule_for_a_tool_only_another_process_loads_is_saved(rule_manager):
    # A worker started with more AGENTWEB_TOOL_MODULES than this process made the row when it synced.
    ToolSetting.objects.create(name="sales_report")

    rule_manager.post(ADD, rule_form(tool_name="sales_report", argument="region", match="equals", pattern="north"))

    assert ApprovalRule.objects.get().tool_name == "sales_report"


def test_a_rule_on_an_argument_the_tool_does_not_have_is_refused(rule_manager):
    response = rule_manager.post(ADD, rule_form(tool_name="calculator", argument="expr", match="prefix", pattern="2"))

    message = errors(response)["argument"][0]
    assert "calculator has no argument 'expr'" in message
    assert "expression" in message
    assert not ApprovalRule.objects.exists()


def test_a_rule_whose_tool_has_gone_can_still_be_switched_off(rule_manager):
    rule = ApprovalRule.objects.create(tool_name="retired_tool", argument="x", match="equals", pattern="1")

    response = rule_manager.post(f"/admin/tools/approvalrule/{rule.pk}/change/", rule_form(**_fields(rule), enabled=""))

    assert response.status_code == 302, response.context["adminform"].form.errors
    rule.refresh_from_db()
    assert rule.enabled is False


def test_a_saved_rule_given_a_tool_that_does_not_exist_is_refused(rule_manager):
    rule = ApprovalRule.objects.create(tool_name="calculator", argument="expression", match="equals", pattern="1")

    response = rule_manager.post(f"/admin/tools/approvalrule/{rule.pk}/change/", rule_form(tool_name="calculater"))

    assert "Did you mean 'calculator'?" in errors(response)["tool_name"][0]
    rule.refresh_from_db()
    assert rule.tool_name == "calculator"


def test_the_list_marks_a_rule_whose_tool_does_not_exist(rule_manager):
    ApprovalRule.objects.create(tool_name="retired_tool", argument="x", match="equals", pattern="1")
    ApprovalRule.objects.create(tool_name="calculator", argument="expression", match="equals", pattern="1")

    response = rule_manager.get("/admin/tools/approvalrule/")

    known = {rule.tool_name: rule.tool_known for rule in response.context["cl"].result_list}
    assert known == {"retired_tool": False, "calculator": True}


def _fields(rule: ApprovalRule) -> dict:
    return {
        "tool_name": rule.tool_name,
        "argument": rule.argument,
        "match": rule.match,
        "pattern": rule.pattern,
        "position": str(rule.position),
    }
