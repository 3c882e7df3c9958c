"""Every way the rows behind the settings cache are written reaches the next read: the admin, save and delete
(with their signals), QuerySet.update, bulk_create, bulk_update, a queryset's delete, m2m changes from either side,
the import commands and raw SQL. Each case reads an answer as a page or a run does (the settings stamp read now,
the answer kept in the process under it), writes, and reads again."""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents.models import Agent
from agents.services import agent_spec, agents_for_picker
from chat.models import TokenBudget
from chat.usage import budget_for
from mcpservers.models import McpServer
from modelconfig.models import ModelConfiguration
from modelconfig.services import available_models, config_for
from tools.models import AllowedHost, ApprovalRule, HttpTool, ToolSetting
from tools.services import groups_of, settings_stamp, toolset_for_page, toolset_for_user
from tools.settings_cache import SETTINGS_CACHE, WATCHED, drop_triggers, triggers, watched_tables

pytestmark = pytest.mark.django_db

LOOKUP = {"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}


@pytest.fixture(autouse=True)
def empty_cache():
    """Each case starts with nothing kept (another test's answers may sit under the stamp a rollback restored)."""
    SETTINGS_CACHE.clear()
    yield
    SETTINGS_CACHE.clear()


@pytest.fixture
def admin(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="root-password-1"))
    return client


# --- what pages and runs read ----------------------------------------------------------------------------------


def tools(user):
    return toolset_for_page(user)


def calculator_description(user) -> str:
    return tools(user).registry.get("calculator").description


def calculator_disabled(user) -> bool:
    return "calculator" in tools(user).disabled


def tool_names(user) -> set[str]:
    return set(tools(user).registry.names())


def groups(user) -> frozenset[str]:
    return groups_of(user, stamp=settings_stamp())


def model_names(user) -> list[str]:
    return [entry["name"] for entry in available_models(groups=frozenset(), stamp=settings_stamp())]


def agent_name(user) -> str | None:
    spec = agent_spec(Agent.objects.get(slug="maths").pk, stamp=settings_stamp())
    return spec.name if spec is not None else None


def picker_slugs(user) -> list[str]:
    return [entry["slug"] for entry in agents_for_picker(user, stamp=settings_stamp())]


def budget(user) -> int | None:
    return budget_for(user.pk, settings_stamp())


# --- the rows a case starts from ------------------------------------------------------------------------------


def a_group(user) -> Group:
    group = Group.objects.create(name="staff")
    user.groups.add(group)
    return group


def an_http_tool(user) -> None:
    HttpTool.objects.create(
        name="lookup",
        description="Look up an item.",
        parameters=LOOKUP,
        url_template="https://api.example.com/{item_id}",
    )


def a_model(user) -> None:
    ModelConfiguration.objects.create(
        name="Local", api="openai", base_url="http://127.0.0.1:9/v1", model="m", is_default=True
    )


def an_agent(user) -> None:
    Agent.objects.create(slug="maths", name="Maths tutor")


def a_budget(user) -> None:
    TokenBudget.objects.create(user=user, daily_tokens=1000)


def nothing(user) -> None:
    pass


# --- the writes --------------------------------------------------------------------------------------------------


def admin_changes_calculator(user, admin, *_) -> None:
    row = ToolSetting.objects.get(name="calculator")
    data = {"enabled": "on", "description_override": "Arithmetic only.", "allow_approve": "on", "_save": "Save"}
    assert admin.post(f"/admin/tools/toolsetting/{row.pk}/change/", data).status_code == 302


def bulk_update_calculator(user, admin, *_) -> None:
    row = ToolSetting.objects.get(name="calculator")
    row.description_override = "Arithmetic only."
    ToolSetting.objects.bulk_update([row], ["description_override"])


def another_group(user) -> None:
    Group.objects.create(name="others")


def through_rows_give_calculator_a_group(user, *_) -> None:
    through = ToolSetting.groups.through
    calculator, others = ToolSetting.objects.get(name="calculator"), Group.objects.get(name="others")
    through.objects.bulk_create([through(toolsetting=calculator, group=others)])


def admin_renames_model(user, admin, *_) -> None:
    row = ModelConfiguration.objects.get()
    data = {
        "name": "Renamed",
        "api": "openai",
        "base_url": row.base_url,
        "model": row.model,
        "api_key": "",
        "tool_protocol": "native",
        "context_window": "32768",
        "max_output_tokens": "2048",
        "enabled": "on",
        "is_default": "on",
        "_save": "Save",
    }
    response = admin.post(f"/admin/modelconfig/modelconfiguration/{row.pk}/change/", data)
    assert response.status_code == 302, re.findall(r"errorlist.*?</ul>", response.content.decode(), re.S)


def admin_deletes_agents(user, admin, *_) -> None:
    data = {"action": "delete_selected", "_selected_action": [str(Agent.objects.get().pk)], "post": "yes"}
    assert admin.post("/admin/agents/agent/", data).status_code == 302


def raw_sql_renames_agent(user, admin, *_) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Agent._meta.db_table} SET name = %s", ["Renamed"])


def agent_saved(user, admin, *_) -> None:
    agent = Agent.objects.get()
    agent.name = "Renamed"
    agent.save()


def import_agents(user, admin, tmp_path) -> None:
    path = tmp_path / "agents.json"
    path.write_text(json.dumps({"agents": [{"slug": "writer", "name": "Writer", "tools": "all"}]}))
    call_command("agents", "import", str(path))


def import_mcp_server(user, admin, tmp_path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"srv": {"command": "npx", "args": ["srv"], "disabled": True}}}))
    call_command("mcp", "import", str(path), stdout=StringIO())


def mcp_server_disabled(user) -> bool:
    return "srv__add" in tools(user).disabled


@dataclass(frozen=True)
class Case:
    name: str
    start: Callable[[Any], Any]
    read: Callable[[Any], Any]
    write: Callable[..., None]
    after: Any


CASES = [
    Case("tool setting: admin change", nothing, calculator_description, admin_changes_calculator, "Arithmetic only."),
    Case(
        "tool setting: QuerySet.update",
        nothing,
        calculator_disabled,
        lambda u, *_: ToolSetting.objects.filter(name="calculator").update(enabled=False),
        True,
    ),
    Case("tool setting: bulk_update", nothing, calculator_description, bulk_update_calculator, "Arithmetic only."),
    Case(
        "tool setting's groups: m2m add",
        nothing,
        calculator_disabled,
        lambda u, *_: ToolSetting.objects.get(name="calculator").groups.add(Group.objects.create(name="others")),
        True,
    ),
    Case(
        "tool setting's groups: through rows",
        another_group,
        calculator_disabled,
        through_rows_give_calculator_a_group,
        True,
    ),
    Case(
        "HTTP tool: bulk_create",
        nothing,
        tool_names,
        lambda u, *_: HttpTool.objects.bulk_create(
            [HttpTool(name="lookup", description="Look up.", parameters=LOOKUP, url_template="https://e.com/{item_id}")]
        ),
        {"calculator", "current_time", "fetch_url", "forget", "recall", "remember", "search_threads", "lookup"},
    ),
    Case(
        "HTTP tool: QuerySet.delete",
        an_http_tool,
        lambda u: "lookup" in tool_names(u),
        lambda u, *_: HttpTool.objects.all().delete(),
        False,
    ),
    Case(
        "HTTP tool's groups: m2m from the group's side",
        an_http_tool,
        lambda u: "lookup" in tools(u).disabled,
        lambda u, *_: Group.objects.create(name="others").http_tools.add(HttpTool.objects.get()),
        True,
    ),
    Case(
        "approval rule: bulk_create",
        nothing,
        lambda u: tools(u).requirement("calculator", {"expression": "1+1"}) is not None,
        lambda u, *_: ApprovalRule.objects.bulk_create(
            [ApprovalRule(tool_name="calculator", argument="expression", match="prefix", pattern="1", action="ask")]
        ),
        True,
    ),
    Case(
        "allowed host: bulk_create",
        nothing,
        lambda u: "intranet.example" in tools(u).allowed_hosts,
        lambda u, *_: AllowedHost.objects.bulk_create([AllowedHost(host="intranet.example")]),
        True,
    ),
    Case(
        "group: QuerySet.update (renamed)",
        a_group,
        groups,
        lambda u, *_: Group.objects.filter(name="staff").update(name="ops"),
        frozenset({"ops"}),
    ),
    Case("group: QuerySet.delete", a_group, groups, lambda u, *_: Group.objects.all().delete(), frozenset()),
    Case(
        "a person's groups: m2m add",
        nothing,
        groups,
        lambda u, *_: u.groups.add(Group.objects.create(name="staff")),
        frozenset({"staff"}),
    ),
    Case(
        "a person's groups: through rows",
        nothing,
        groups,
        lambda u, *_: get_user_model().groups.through.objects.bulk_create(
            [get_user_model().groups.through(user=u, group=Group.objects.create(name="staff"))]
        ),
        frozenset({"staff"}),
    ),
    Case("model configuration: admin change", a_model, model_names, admin_renames_model, ["Renamed"]),
    Case(
        "model configuration: QuerySet.update",
        a_model,
        lambda u: config_for(str(ModelConfiguration.objects.get().pk), stamp=settings_stamp())[1]["name"],
        lambda u, *_: ModelConfiguration.objects.update(name="Renamed"),
        "Renamed",
    ),
    Case(
        "model configuration: bulk_create",
        a_model,
        model_names,
        lambda u, *_: ModelConfiguration.objects.bulk_create(
            [ModelConfiguration(name="Other", api="openai", base_url="http://127.0.0.1:9/v1", model="o")]
        ),
        ["Local", "Other"],
    ),
    Case("agent: save", an_agent, agent_name, agent_saved, "Renamed"),
    Case(
        "agent: QuerySet.update",
        an_agent,
        agent_name,
        lambda u, *_: Agent.objects.update(name="Renamed"),
        "Renamed",
    ),
    Case("agent: raw SQL", an_agent, agent_name, raw_sql_renames_agent, "Renamed"),
    Case(
        "agent: bulk_create",
        an_agent,
        picker_slugs,
        lambda u, *_: Agent.objects.bulk_create([Agent(slug="writer", name="Writer")]),
        ["maths", "writer"],
    ),
    Case("agent: the admin's delete action", an_agent, picker_slugs, admin_deletes_agents, []),
    Case("agents: manage.py agents import", an_agent, picker_slugs, import_agents, ["maths", "writer"]),
    Case("MCP server: manage.py mcp import", nothing, mcp_server_disabled, import_mcp_server, True),
    Case(
        "MCP server: QuerySet.update",
        lambda u: McpServer.objects.create(name="srv", transport="stdio", command="npx", enabled=True),
        mcp_server_disabled,
        lambda u, *_: McpServer.objects.update(enabled=False),
        True,
    ),
    Case(
        "token budget: bulk_create",
        nothing,
        budget,
        lambda u, *_: TokenBudget.objects.bulk_create([TokenBudget(user=u, daily_tokens=500)]),
        500,
    ),
    Case(
        "token budget: QuerySet.update", a_budget, budget, lambda u, *_: TokenBudget.objects.update(daily_tokens=5), 5
    ),
    Case("token budget: delete", a_budget, budget, lambda u, *_: TokenBudget.objects.get().delete(), None),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_next_read_after_a_write_gives_the_new_answer(case, owner, admin, tmp_path):
    case.start(owner)
    before = case.read(owner)
    assert before != case.after
    assert case.read(owner) == before  # kept under the stamp

    case.write(owner, admin, tmp_path)

    assert case.read(owner) == case.after


def test_every_table_the_kept_answers_are_read_from_is_watched(owner, admin):
    """Every answer the cache keeps, built afresh with every kind of row there, reads only watched tables: a new
    table behind an answer must join tools/settings_cache.py WATCHED."""
    a_group(owner)
    an_http_tool(owner)
    a_model(owner)
    an_agent(owner)
    a_budget(owner)
    McpServer.objects.create(name="srv", transport="stdio", command="npx", enabled=False)
    ApprovalRule.objects.create(tool_name="calculator", argument="expression", match="prefix", pattern="1")
    AllowedHost.objects.create(host="intranet.example")
    with CaptureQueriesContext(connection) as queries:
        toolset_for_user(user=owner)
        groups_of(owner, stamp=None)
        agent_spec(Agent.objects.get().pk)
        agents_for_picker(owner)
        config_for(str(ModelConfiguration.objects.get().pk))
        available_models(groups=frozenset())
        budget_for(owner.pk)
    read = {table for query in queries.captured_queries for table in tables_of(query["sql"])}
    assert read <= set(watched_tables()), read - set(watched_tables())
    assert {Agent._meta.db_table, TokenBudget._meta.db_table, McpServer._meta.db_table, "auth_group"} <= read


def test_every_watched_table_has_its_trigger():
    assert len(watched_tables()) == len(WATCHED)  # every app of the list is installed here
    assert set(watched_tables()) <= triggers()


def test_triggers_lost_are_made_again_after_migrate(owner):
    """A migration that rebuilds a table on SQLite drops its triggers: the next migrate's end puts them back."""
    drop_triggers()
    assert triggers() == set()
    call_command("migrate", verbosity=0)

    assert set(watched_tables()) <= triggers()
    an_agent(owner)
    before = settings_stamp()
    Agent.objects.update(name="Renamed")
    assert settings_stamp() != before


def tables_of(sql: str) -> set[str]:
    return set(re.findall(r'(?:FROM|JOIN)\s+"([a-z_]+)"', sql))
