"""What a user gets from the registry: rows kept in step with the code, overrides, groups, HTTP tools."""

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tools.base import tool
from tools.builtin.calculator import calculator
from tools.builtin.fetch_url import allowed_hosts as fetch_url_allowed_hosts
from tools.models import AllowedHost, HttpTool, ToolSetting
from tools.registry import ToolRegistry
from tools.services import allowed_hosts, sync_tool_settings, tool_for_setting, toolset_for_page, toolset_for_user

pytestmark = pytest.mark.django_db


@tool(requires_approval=True, timeout=5)
def delete_everything(confirm: bool) -> str:
    """Delete everything.

    Args:
        confirm: Really.
    """
    return "gone"


CODE = ToolRegistry([calculator, delete_everything])


@pytest.fixture(autouse=True)
def no_rows_from_migrate():
    """Start from an empty table: migrate's sync made rows for the real code tools, or a flush removed them."""
    ToolSetting.objects.all().delete()


@pytest.fixture
def synced():
    sync_tool_settings(registry=CODE)


def http_tool(**fields) -> HttpTool:
    defaults = dict(
        name="lookup",
        description="Look up an item.",
        parameters={"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]},
        url_template="https://api.example.com/items/{item_id}",
        headers={"Authorization": "Bearer sk-test-secret-value"},
    )
    return HttpTool.objects.create(**{**defaults, **fields})


# --- sync -------------------------------------------------------------------------------


def test_it_creates_a_row_per_code_tool_with_the_tools_own_approval_default():
    sync_tool_settings(registry=CODE)

    rows = dict(ToolSetting.objects.values_list("name", "requires_approval"))
    assert rows == {"calculator": False, "delete_everything": True}


def test_it_keeps_the_row_of_a_vanished_tool_marked_missing(synced):
    report = sync_tool_settings(registry=ToolRegistry([calculator]))

    row = ToolSetting.objects.get(name="delete_everything")
    assert (row.missing, report.missing) == (True, ["delete_everything"])


def test_it_unmarks_a_missing_row_when_its_tool_comes_back(synced):
    sync_tool_settings(registry=ToolRegistry([calculator]))

    report = sync_tool_settings(registry=CODE)

    assert (ToolSetting.objects.get(name="delete_everything").missing, report.returned) == (
        False,
        ["delete_everything"],
    )


def test_it_keeps_the_admins_choices_on_a_second_sync(synced):
    ToolSetting.objects.filter(name="calculator").update(enabled=False, timeout=3)

    sync_tool_settings(registry=CODE)

    assert ToolSetting.objects.filter(name="calculator", enabled=False, timeout=3).exists()


# --- toolset_for_user -------------------------------------------------------------------


def test_it_gives_every_enabled_code_tool(owner, synced):
    toolset = toolset_for_user(user=owner, registry=CODE)

    assert (toolset.registry.names(), toolset.disabled) == (["calculator", "delete_everything"], frozenset())


def test_it_leaves_a_disabled_tool_out_and_names_it_disabled(owner, synced):
    ToolSetting.objects.filter(name="calculator").update(enabled=False)

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert ("calculator" in toolset.registry, toolset.disabled) == (False, frozenset({"calculator"}))


def test_it_gives_a_group_restricted_tool_to_a_member(owner, synced):
    finance = Group.objects.create(name="finance")
    ToolSetting.objects.get(name="calculator").groups.add(finance)
    owner.groups.add(finance)

    assert "calculator" in toolset_for_user(user=owner, registry=CODE).registry


def test_it_treats_a_group_restricted_tool_as_disabled_for_a_non_member(owner, stranger, synced):
    finance = Group.objects.create(name="finance")
    ToolSetting.objects.get(name="calculator").groups.add(finance)
    owner.groups.add(finance)

    toolset = toolset_for_user(user=stranger, registry=CODE)

    assert ("calculator" in toolset.registry, "calculator" in toolset.disabled) == (False, True)


def test_it_applies_the_description_override(owner, synced):
    ToolSetting.objects.filter(name="calculator").update(description_override="Arithmetic only.")

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert toolset.registry.get("calculator").description == "Arithmetic only."


def test_it_applies_the_timeout_override(owner, synced):
    ToolSetting.objects.filter(name="calculator").update(timeout=2.5)

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert toolset.registry.get("calculator").timeout == 2.5


def test_it_leaves_the_shared_code_tool_unchanged_by_an_override(owner, synced):
    ToolSetting.objects.filter(name="calculator").update(description_override="Changed.", timeout=1)

    toolset_for_user(user=owner, registry=CODE)

    assert (CODE.get("calculator").description, CODE.get("calculator").timeout) != ("Changed.", 1)


def test_it_applies_the_approval_override(owner, synced):
    ToolSetting.objects.filter(name="calculator").update(requires_approval=True)

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert toolset.registry.get("calculator").requires_approval is True


def test_it_lists_the_approval_choices_of_the_tools_that_require_approval(owner, synced):
    ToolSetting.objects.filter(name="delete_everything").update(allow_edit=False, allow_respond=False)

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert toolset.approval == {"delete_everything": {"approve": True, "edit": False, "reject": True, "respond": False}}


def test_it_uses_the_code_settings_of_a_tool_without_a_row(owner):
    toolset = toolset_for_user(user=owner, registry=CODE)

    assert toolset.registry.get("delete_everything") is delete_everything


def test_it_adds_an_enabled_http_tool(owner, synced):
    http_tool()

    assert "lookup" in toolset_for_user(user=owner, registry=CODE).registry


def test_it_treats_a_disabled_http_tool_as_disabled(owner, synced):
    http_tool(enabled=False)

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert ("lookup" in toolset.registry, "lookup" in toolset.disabled) == (False, True)


def test_it_gives_a_group_restricted_http_tool_only_to_members(owner, stranger, synced):
    support = Group.objects.create(name="support")
    http_tool().groups.add(support)
    owner.groups.add(support)

    got = ["lookup" in toolset_for_user(user=person, registry=CODE).registry for person in (owner, stranger)]

    assert got == [True, False]


def test_it_lists_the_approval_choices_of_an_http_tool(owner, synced):
    http_tool(requires_approval=True, allow_reject=False)

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert toolset.approval["lookup"] == {"approve": True, "edit": True, "reject": False, "respond": True}


def test_it_carries_the_users_groups_for_the_tool_context(owner):
    owner.groups.add(Group.objects.create(name="finance"))

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert toolset.tool_user().groups == frozenset({"finance"})


def test_it_lists_the_allowed_hosts(settings):
    settings.AGENTWEB_FETCH_ALLOWED_HOSTS = []
    AllowedHost.objects.create(host="intranet.example.com", note="the wiki")

    assert allowed_hosts() == {"intranet.example.com"}


def test_it_builds_the_tool_of_a_setting_for_a_trial_even_when_disabled(synced):
    setting = ToolSetting.objects.get(name="calculator")
    setting.enabled = False

    assert tool_for_setting(setting=setting).name == "calculator"


def test_it_words_the_error_of_a_call_to_a_disabled_tool(owner, synced):
    ToolSetting.objects.filter(name="calculator").update(enabled=False)

    toolset = toolset_for_user(user=owner, registry=CODE)

    assert (toolset.disabled_message("calculator"), toolset.disabled_message("nope")) == (
        "Tool 'calculator' is disabled.",
        None,
    )


def test_it_hands_fetch_url_the_admins_allowed_hosts(settings):
    settings.AGENTWEB_FETCH_ALLOWED_HOSTS = ["wiki.internal"]
    AllowedHost.objects.create(host="intranet.example.com")

    assert async_to_sync(fetch_url_allowed_hosts)() == {"intranet.example.com", "wiki.internal"}


@pytest.mark.django_db
def test_the_tools_kept_for_a_stamp_are_built_afresh_once_a_setting_changes(django_user_model):
    from tools.models import SettingsStamp
    from tools.services import toolset_for_stamp

    user = django_user_model.objects.create_user("stamped", password="x")
    staff = Group.objects.create(name="staff")
    sync_tool_settings()

    def stamp():
        return SettingsStamp.objects.get(pk=1).stamp

    first = toolset_for_stamp(user=user, groups=frozenset(), stamp=stamp())
    assert toolset_for_stamp(user=user, groups=frozenset(), stamp=stamp()) is first  # kept while the stamp stays

    before = stamp()
    row = ToolSetting.objects.get(name="calculator")
    row.enabled = False
    row.save()
    assert stamp() != before
    assert "calculator" in toolset_for_stamp(user=user, groups=frozenset(), stamp=stamp()).disabled

    before = stamp()
    row.enabled = True
    row.save()
    row.groups.add(staff)  # only the staff group may use it now
    assert stamp() != before
    assert "calculator" in toolset_for_stamp(user=user, groups=frozenset(), stamp=stamp()).disabled
    assert "calculator" not in toolset_for_stamp(user=user, groups=frozenset({"staff"}), stamp=stamp()).disabled

    before = stamp()
    AllowedHost.objects.create(host="intranet.example")
    assert stamp() != before
    assert "intranet.example" in toolset_for_stamp(user=user, groups=frozenset(), stamp=stamp()).allowed_hosts

    other = django_user_model.objects.create_user("other", password="x")
    theirs = toolset_for_stamp(user=other, groups=frozenset(), stamp=stamp())
    assert (theirs.user_id, theirs.username) == (other.pk, "other")


# toolset_for_page: what a page shows of a person's tools, built once per settings stamp.


def test_a_second_page_does_not_build_the_tools_again(owner):
    sync_tool_settings()
    toolset_for_page(owner)
    with CaptureQueriesContext(connection) as built:
        toolset_for_user(user=owner)

    with CaptureQueriesContext(connection) as cached:
        again = toolset_for_page(owner)

    assert len(cached) == 1 < len(built)  # the settings' stamp (the person's groups are kept under it)
    assert set(again.registry.names()) == set(toolset_for_user(user=owner).registry.names())


def test_a_tool_the_admin_turns_off_leaves_the_next_pages_tools(owner):
    sync_tool_settings()
    assert "calculator" in toolset_for_page(owner).registry.names()
    setting = ToolSetting.objects.get(name="calculator")
    setting.enabled = False
    setting.save()

    assert "calculator" not in toolset_for_page(owner).registry.names()


def test_a_group_the_admin_gives_a_person_reaches_their_next_page(owner):
    sync_tool_settings()
    staff = Group.objects.create(name="staff")
    setting = ToolSetting.objects.get(name="calculator")
    setting.groups.add(staff)  # only the staff group may use it
    assert "calculator" not in toolset_for_page(owner).registry.names()

    owner.groups.add(staff)
    assert "calculator" in toolset_for_page(owner).registry.names()

    staff.user_set.remove(owner)  # from the group's side
    assert "calculator" not in toolset_for_page(owner).registry.names()
