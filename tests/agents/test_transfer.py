"""manage.py agents import / export: a file round-trips; a bad file is refused whole, naming the entry and the
reason, and changes nothing."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from agents.models import Agent
from modelconfig.models import ModelConfiguration

pytestmark = pytest.mark.django_db

GOOD = {
    "agents": [
        {
            "slug": "maths",
            "name": "Maths tutor",
            "description": "Sums, step by step.",
            "starter_prompts": ["What is 17% of 2,340?", "Explain long division with 144 / 12."],
            "system_prompt": "You are {agent}. Today is {date}.",
            "tools": ["calculator"],
            "step_limit": 5,
            "approvals": {"calculator": "require"},
            "temperature": 0.2,
            "top_p": 0.9,
            "max_output_tokens": 500,
            "default": True,
        },
        {"slug": "everything", "name": "Everything", "tools": "all", "owner": "owner"},
    ]
}


def write(tmp_path, name, document) -> str:
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(document))
    else:
        import yaml

        path.write_text(yaml.safe_dump(document))
    return str(path)


def test_export_then_import_round_trips_json_and_yaml(tmp_path, owner):
    ModelConfiguration.objects.create(name="Local", api="openai", base_url="http://localhost:1/v1", model="m")
    GOOD["agents"][1]["model"] = "Local"
    call_command("agents", "import", write(tmp_path, "in.json", GOOD))
    for name in ("out.json", "out.yaml"):
        out = str(tmp_path / name)
        call_command("agents", "export", out)
        Agent.objects.all().delete()
        call_command("agents", "import", out)
        call_command("agents", "export", str(tmp_path / ("again." + name.split(".")[1])))
        assert (tmp_path / name).read_text() == (tmp_path / ("again." + name.split(".")[1])).read_text()
    maths = Agent.objects.get(slug="maths")
    assert (maths.all_tools, maths.tools, maths.step_limit, maths.is_default) == (False, ["calculator"], 5, True)
    assert (maths.temperature, maths.top_p, maths.max_output_tokens) == (0.2, 0.9, 500)
    assert maths.starter_prompts == ["What is 17% of 2,340?", "Explain long division with 144 / 12."]
    assert Agent.objects.get(slug="everything").starter_prompts == []
    everything = Agent.objects.get(slug="everything")
    assert (everything.all_tools, everything.owner, everything.model.name) == (True, owner, "Local")
    del GOOD["agents"][1]["model"]


def test_an_import_updates_by_slug(tmp_path, owner):
    call_command("agents", "import", write(tmp_path, "a.json", GOOD))
    changed = {"agents": [{**GOOD["agents"][0], "name": "Renamed"}]}
    call_command("agents", "import", write(tmp_path, "b.json", changed))
    assert Agent.objects.get(slug="maths").name == "Renamed"
    assert Agent.objects.count() == 2


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"tools": ["calculator", "no_such_tool"]}, "entry 2 ('bad'): tools: No tool is named 'no_such_tool'."),
        ({"model": "No such model"}, "entry 2 ('bad'): no model configuration is named 'No such model'."),
        ({"colour": "blue"}, "entry 2 ('bad'): unknown field 'colour'"),
        ({"owner": "nobody"}, "entry 2 ('bad'): no user is named 'nobody'."),
        ({"approvals": {"calculator": "sometimes"}}, "entry 2 ('bad'): approvals: 'calculator': 'sometimes'"),
        ({"top_p": 3}, "entry 2 ('bad'): top_p:"),
        ({"starter_prompts": "hi"}, "entry 2 ('bad'): starter_prompts: A list of short texts."),
        (
            {"starter_prompts": ["a", "b", "c", "d", "e"]},
            "entry 2 ('bad'): starter_prompts: At most 4 prompts (5 given).",
        ),
        ({"starter_prompts": ["ok", " "]}, "entry 2 ('bad'): starter_prompts: Prompt 2 is empty."),
        ({"starter_prompts": ["x" * 201]}, "entry 2 ('bad'): starter_prompts: Prompt 1 is longer than 200 characters."),
        ({"slug": "maths"}, "entry 2 ('maths'): the slug is also that of entry 1 ('maths')."),
    ],
)
def test_a_bad_entry_refuses_the_whole_file_and_changes_nothing(tmp_path, owner, change, says):
    Agent.objects.create(slug="maths", name="Before")
    bad = {"slug": "bad", "name": "Bad", **change}
    path = write(tmp_path, "bad.yaml", {"agents": [GOOD["agents"][0], bad]})
    with pytest.raises(CommandError) as refused:
        call_command("agents", "import", path)
    assert says in str(refused.value)
    assert list(Agent.objects.values_list("slug", "name")) == [("maths", "Before")]


def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(CommandError, match="cannot be read as JSON"):
        call_command("agents", "import", str(path))


def test_the_admins_form_refuses_an_unknown_tool(db):
    agent = Agent(slug="x", name="X", all_tools=False, tools=["calculator", "nope"])
    with pytest.raises(ValidationError) as refused:
        agent.full_clean()
    assert refused.value.message_dict["tools"] == ["No tool is named 'nope'."]


def test_the_admins_form_takes_starting_prompts_one_per_line(admin_client):
    from agents.forms import AgentAdminForm

    data = {"name": "Tutor", "slug": "tutor", "all_tools": "on", "tools": "[]", "approvals": "{}"}
    data.update(context_strategy="{}", starter_prompts="What is 2+2?\n\n  Explain fractions.  \n")
    form = AgentAdminForm(data=data)
    assert form.is_valid(), form.errors
    assert form.save().starter_prompts == ["What is 2+2?", "Explain fractions."]
    shown = AgentAdminForm(instance=Agent.objects.get(slug="tutor"))["starter_prompts"].value()
    assert shown == "What is 2+2?\nExplain fractions."
    too_many = AgentAdminForm(data={**data, "slug": "t2", "starter_prompts": "a\nb\nc\nd\ne"})
    assert not too_many.is_valid()
    assert too_many.errors["starter_prompts"] == ["At most 4 prompts (5 given)."]


BILLION_LAUGHS = """agents:
  - slug: laughs
    name: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
    description: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
    system_prompt: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
    tools: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
    approvals: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
    starter_prompts: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
    top_p: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
    temperature: [*g, *g, *g, *g, *g, *g, *g, *g, *g]
"""


def test_a_yaml_file_with_aliases_is_refused_before_they_are_expanded(tmp_path):
    """Expanded, this 600-byte file is 9**8 (43 million) strings: an import that follows its aliases runs out of
    memory; refused, it costs nothing and changes nothing."""
    path = tmp_path / "laughs.yaml"
    path.write_text(BILLION_LAUGHS)
    with pytest.raises(CommandError) as refused:
        call_command("agents", "import", str(path))
    assert "anchors and aliases (&name, *name) are not accepted" in str(refused.value)
    assert "nothing changed" in str(refused.value)
    assert not Agent.objects.exists()


def test_a_yaml_file_with_one_anchor_is_refused_even_unused(tmp_path):
    path = tmp_path / "anchor.yaml"
    path.write_text("agents:\n  - &first {slug: one, name: One}\n")
    with pytest.raises(CommandError, match="anchors and aliases"):
        call_command("agents", "import", str(path))
    assert not Agent.objects.exists()


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    from agents import transfer

    monkeypatch.setattr(transfer, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"agents": [{"slug": f"a{i}", "name": "A"} for i in range(100)]}))
    with pytest.raises(CommandError, match="larger than"):
        call_command("agents", "import", str(path))
    assert not Agent.objects.exists()


def test_an_import_keeps_each_owners_slugs_apart(tmp_path, owner, stranger):
    Agent.objects.create(slug="notes", name="Stranger's notes", owner=stranger)
    entries = [
        {"slug": "notes", "name": "Shared notes"},
        {"slug": "notes", "name": "Owner's notes", "owner": "owner"},
    ]

    call_command("agents", "import", write(tmp_path, "notes.json", {"agents": entries}))

    assert set(Agent.objects.filter(slug="notes").values_list("owner__username", "name")) == {
        (None, "Shared notes"),
        ("owner", "Owner's notes"),
        ("stranger", "Stranger's notes"),
    }
