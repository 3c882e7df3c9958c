"""A shared agent kept for a group: in its members' pickers only, unknown to anyone else who names it, never a
default for someone outside; a person's own agent is theirs whatever its groups; an import file cannot give an
agent to a group that does not exist, nor a person a model the admin kept from them."""

import json

import pytest
from django.core.management import CommandError, call_command

from agents.models import Agent, visible_to
from agents.services import (
    AgentNotAllowed,
    AgentSpec,
    UnknownAgent,
    agent_for_new_thread,
    agent_spec,
    agents_for_picker,
    pick_by_slug,
)
from modelconfig.models import ModelConfiguration
from tools.services import groups_of, settings_stamp

pytestmark = pytest.mark.django_db


@pytest.fixture
def lab(research):
    agent = Agent.objects.create(slug="lab", name="Lab assistant")
    agent.groups.add(research)
    return agent


def test_the_picker_lists_a_groups_agent_for_its_members_only(owner, member, lab):
    Agent.objects.create(slug="helper", name="Helper")
    stamp = settings_stamp()
    assert [a["slug"] for a in agents_for_picker(member, stamp=stamp)] == ["helper", "lab"]
    assert [a["slug"] for a in agents_for_picker(owner, stamp=stamp)] == ["helper"]


def test_naming_a_groups_agent_outside_it_is_as_if_it_did_not_exist(owner, member, lab):
    assert pick_by_slug(owner, "lab") is None
    with pytest.raises(UnknownAgent):
        agent_for_new_thread(owner, "lab")
    assert agent_for_new_thread(member, "lab") == lab


def test_the_sql_filter_and_the_rule_agree_for_every_persona(owner, stranger, member, staff, research, lab):
    own = Agent.objects.create(slug="mine", name="Mine", owner=owner)
    own.groups.add(research)  # ignored: a person's own agent is theirs
    Agent.objects.create(slug="open", name="Open")
    both = Agent.objects.create(slug="both", name="Both")
    both.groups.add(research, research.__class__.objects.create(name="sales"))
    for person in (owner, stranger, member, staff):
        groups = groups_of(person, stamp=None)
        by_sql = set(visible_to(person).values_list("slug", flat=True))
        rows = Agent.objects.filter(owner__isnull=True) | Agent.objects.filter(owner=person)
        by_rule = {agent.slug for agent in rows if agent.may_use(person.pk, groups)}
        assert by_sql == by_rule, person
        spec_rule = {agent.slug for agent in rows if AgentSpec.of(agent).may_use(person.pk, groups)}
        assert spec_rule == by_rule
    assert set(visible_to(member).values_list("slug", flat=True)) == {"lab", "open", "both"}
    assert set(visible_to(owner).values_list("slug", flat=True)) == {"mine", "open"}


def test_a_groups_default_agent_is_no_default_for_anyone_outside(owner, member, lab):
    lab.is_default = True
    lab.save()
    assert agent_for_new_thread(owner, None) is None
    assert agent_for_new_thread(member, None) == lab


def test_a_run_of_a_groups_agent_is_refused_with_a_clear_error_once_the_person_leaves(member, research, lab):
    spec = agent_spec(lab.pk)
    spec.check(member.pk, groups_of(member, stamp=None))
    member.groups.remove(research)
    with pytest.raises(AgentNotAllowed, match="'Lab assistant' is not available to you"):
        agent_spec(lab.pk).check(member.pk, groups_of(member, stamp=None))


def write(tmp_path, entries) -> str:
    path = tmp_path / "agents.json"
    path.write_text(json.dumps({"agents": entries}))
    return str(path)


def test_an_import_file_sets_and_exports_a_shared_agents_groups(tmp_path, research):
    call_command("agents", "import", write(tmp_path, [{"slug": "lab", "name": "Lab", "groups": ["research"]}]))
    assert Agent.objects.get(slug="lab").group_names() == frozenset({"research"})
    out = tmp_path / "out.json"
    call_command("agents", "export", str(out))
    [entry] = json.loads(out.read_text())["agents"]
    assert entry["groups"] == ["research"]


@pytest.mark.parametrize(
    "entry, problem",
    [
        ({"slug": "lab", "name": "Lab", "groups": ["nobody"]}, "no group is named 'nobody'"),
        ({"slug": "lab", "name": "Lab", "groups": "research"}, "'groups' is a list of group names"),
        ({"slug": "lab", "name": "Lab", "owner": "owner", "groups": ["research"]}, "'groups' are for shared agents"),
        ({"slug": "lab", "name": "Lab", "owner": "owner", "model": "Kept"}, "'owner' may not use the model 'Kept'"),
    ],
)
def test_an_import_file_cannot_reach_past_the_groups(tmp_path, owner, research, entry, problem):
    ModelConfiguration.objects.create(name="Kept", api="demo").groups.add(research)
    with pytest.raises(CommandError, match=problem):
        call_command("agents", "import", write(tmp_path, [entry]))
    assert not Agent.objects.exists()


def test_an_import_file_may_give_a_member_their_groups_model(tmp_path, member, research):
    ModelConfiguration.objects.create(name="Kept", api="demo").groups.add(research)
    call_command(
        "agents", "import", write(tmp_path, [{"slug": "lab", "name": "Lab", "owner": "member", "model": "Kept"}])
    )
    assert Agent.objects.get(slug="lab").owner == member
