"""Approval by argument values: the first matching rule of a tool decides, else the tool's own setting."""

import pytest

from tools.approval_rules import ArgumentRule, decide, host_matches
from tools.models import ApprovalRule, ToolSetting
from tools.services import sync_tool_settings, toolset_for_user

ALLOW_DOCS = ArgumentRule("url", "host", "docs.python.org", "allow")


def test_it_matches_the_host_and_its_subdomains_only():
    assert host_matches("https://docs.python.org/3/", "python.org")
    assert host_matches("https://python.org", "python.org")
    assert not host_matches("https://evilpython.org", "python.org")
    assert not host_matches("https://python.org.evil.com/", "python.org")
    assert not host_matches("not a url", "python.org")


def test_the_first_matching_rule_decides():
    rules = (ALLOW_DOCS, ArgumentRule("url", "regex", "https://.*", "ask"))
    assert decide(rules, {"url": "https://docs.python.org/3/"}) == "allow"
    assert decide(rules, {"url": "https://example.com/"}) == "ask"
    assert decide(rules, {"url": "ftp://example.com/"}) is None
    assert decide(rules, {"other": 1}) is None


@pytest.mark.parametrize(
    ("match", "pattern", "value", "expected"),
    [
        ("equals", "5", 5, True),
        ("equals", "5", 50, False),
        ("prefix", "/tmp/", "/tmp/x", True),
        ("regex", "a+", "aab", False),
    ],
)
def test_each_kind_of_match(match, pattern, value, expected):
    assert ArgumentRule("x", match, pattern, "ask").matches({"x": value}) is expected


@pytest.mark.django_db
def test_an_admin_rule_lets_one_host_through_and_asks_for_the_others(owner):
    sync_tool_settings()
    ToolSetting.objects.filter(name="fetch_url").update(requires_approval=True, allow_respond=False)
    ApprovalRule.objects.create(tool_name="fetch_url", argument="url", match="host", pattern="python.org")
    toolset = toolset_for_user(user=owner)
    assert toolset.requirement("fetch_url", {"url": "https://docs.python.org/3/"}) is None
    offered = toolset.requirement("fetch_url", {"url": "https://example.com/"})
    assert offered == {"approve": True, "edit": True, "reject": True, "respond": False}


@pytest.mark.django_db
def test_an_ask_rule_makes_a_tool_that_never_asks_ask_for_some_values(owner):
    sync_tool_settings()
    ApprovalRule.objects.create(
        tool_name="calculator", argument="expression", match="regex", pattern=".*\\*\\*.*", action="ask"
    )
    toolset = toolset_for_user(user=owner)
    assert toolset.requirement("calculator", {"expression": "2+2"}) is None
    assert toolset.requirement("calculator", {"expression": "2**64"})["approve"] is True


@pytest.mark.django_db
def test_a_disabled_rule_changes_nothing(owner):
    sync_tool_settings()
    ApprovalRule.objects.create(
        tool_name="calculator", argument="expression", match="prefix", pattern="", action="ask", enabled=False
    )
    assert toolset_for_user(user=owner).requirement("calculator", {"expression": "1"}) is None


@pytest.mark.django_db
def test_an_invalid_regular_expression_is_refused_when_saved():
    from django.core.exceptions import ValidationError

    rule = ApprovalRule(tool_name="calculator", argument="expression", match="regex", pattern="([")
    with pytest.raises(ValidationError, match="regular expression"):
        rule.full_clean()
