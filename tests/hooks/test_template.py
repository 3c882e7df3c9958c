"""A trigger's prompt template: placeholders filled from the payload, nothing evaluated, a missing field named."""

import pytest

from hooks import template


def test_fields_and_nested_fields_are_filled_from_the_payload():
    payload = {"repo": {"name": "agentweb"}, "n": 3, "tags": ["a", "b"], "ok": True}
    out = template.render("{repo.name}: {n} {tags.1} {ok} {tags}", payload)
    assert out == 'agentweb: 3 b true ["a", "b"]'


def test_a_missing_field_is_named():
    with pytest.raises(template.MissingField) as raised:
        template.render("Issue {issue.title}", {"issue": {"body": "x"}})
    assert raised.value.field == "issue.title"


def test_nothing_is_evaluated_and_doubled_braces_write_a_brace():
    assert template.render("{{x}} {a}", {"a": "{__class__}"}) == "{x} {__class__}"
    with pytest.raises(template.BadTemplate):
        template.parse("{a.__class__.__mro__[1]}")
    with pytest.raises(template.BadTemplate):
        template.parse("{0!r:>10}")


@pytest.mark.parametrize("bad", ["{", "}", "{}", "a {b", "{a b}"])
def test_a_stray_brace_is_refused_when_the_trigger_is_made(bad):
    with pytest.raises(template.BadTemplate):
        template.parse(bad)


def test_fields_lists_each_placeholder_once():
    assert template.fields("{a} {b.c} {a}") == ["a", "b.c"]


def test_a_dunder_name_is_only_ever_a_key_of_the_payload():
    with pytest.raises(template.MissingField):
        template.render("{a.__class__}", {"a": {}})
    assert template.render("{a.__class__}", {"a": {"__class__": "just a key"}}) == "just a key"
