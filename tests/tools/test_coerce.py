import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tools.coerce import coerce, validation_problems

INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
STR = {"type": "string"}


def _obj(**properties):
    return {"type": "object", "properties": properties, "required": list(properties)}


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        ("5", INT, 5),
        (" -12 ", INT, -12),
        ("2.5", NUM, 2.5),
        ("5", NUM, 5),
        ("1e3", NUM, 1000.0),
        ("true", BOOL, True),
        ("False", BOOL, False),
        ('{"a": 1}', {"type": "object"}, {"a": 1}),
        ("[1, 2]", {"type": "array", "items": INT}, [1, 2]),
        ("7", {"anyOf": [INT, {"type": "null"}]}, 7),
        ("3", {"type": ["integer", "null"]}, 3),
    ],
    ids=["int", "int-spaces", "number", "int-as-number", "exponent", "true", "False", "object", "array", "optional",
         "type-list"],
)  # fmt: skip
def test_it_converts_text_the_schema_wants_as_another_type(value, schema, expected):
    assert coerce(value, schema) == expected


@pytest.mark.parametrize(
    ("value", "schema"),
    [
        (5, STR),  # no int → str
        (2.5, INT),  # no float → int truncation
        ("2.5", INT),
        ("yes", BOOL),
        ("1", BOOL),
        ("١٢", INT),  # digits of another script
        ("nan", NUM),
        ("inf", NUM),
        ("[1]", {"type": "object"}),  # JSON of the wrong kind
        ("{broken", {"type": "object"}),
        ("5", {"enum": [5, 6]}),  # no "type": the schema does not say it wants a number
    ],
    ids=["int-to-str", "float-to-int", "text-float-to-int", "yes", "one", "arabic-digits", "nan", "inf",
         "wrong-json-kind", "broken-json", "untyped-enum"],
)  # fmt: skip
def test_it_leaves_everything_else_alone(value, schema):
    assert coerce(value, schema) == value


def test_it_coerces_inside_objects_and_arrays():
    schema = _obj(points={"type": "array", "items": _obj(x=INT, visible=BOOL)}, scale=NUM)

    coerced = coerce({"points": [{"x": "1", "visible": "true"}, {"x": 2, "visible": False}], "scale": "0.5"}, schema)

    assert coerced == {"points": [{"x": 1, "visible": True}, {"x": 2, "visible": False}], "scale": 0.5}


def test_it_coerces_inside_an_object_that_arrived_as_a_json_string():
    assert coerce('{"n": "4"}', _obj(n=INT)) == {"n": 4}


def test_it_coerces_additional_properties_and_tuple_positions():
    schema = {
        "type": "object",
        "properties": {"pair": {"type": "array", "prefixItems": [INT, BOOL]}},
        "additionalProperties": NUM,
    }

    assert coerce({"pair": ["1", "false"], "extra": "2.5"}, schema) == {"pair": [1, False], "extra": 2.5}


def test_it_keeps_a_union_member_that_is_already_valid():
    assert coerce("5", {"anyOf": [INT, STR]}) == "5"


def test_it_follows_refs_of_a_hand_written_schema():
    schema = {"$defs": {"n": INT}, "type": "object", "properties": {"n": {"$ref": "#/$defs/n"}}}

    assert not validation_problems(coerce({"n": 5}, schema), schema)


def test_it_refuses_integers_too_long_to_convert():
    text = "9" * 5000

    assert coerce(text, INT) == text


def test_it_lists_each_remaining_problem_with_its_path():
    schema = _obj(points={"type": "array", "items": _obj(x=INT)}, title=STR)

    problems = validation_problems({"points": [{"x": 1}, {"x": "far"}]}, schema)

    assert problems == ["'title' is a required property", "points[1].x: 'far' is not of type 'integer'"]


# Property tests: schemas made of the shapes tool signatures produce, and values for them.

_SCALARS = [INT, NUM, BOOL, STR, {"type": "null"}]
schemas = st.recursive(
    st.sampled_from(_SCALARS),
    lambda inner: st.one_of(
        st.builds(lambda item: {"type": "array", "items": item}, inner),
        st.dictionaries(st.sampled_from("abcd"), inner, max_size=3).map(
            lambda props: {"type": "object", "properties": props, "required": sorted(props)}
        ),
        st.lists(inner, min_size=2, max_size=3).map(lambda options: {"anyOf": options}),
    ),
    max_leaves=6,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abcd"), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def valid_instances(draw, schema):
    """A value valid for one of our generated schemas."""
    if "anyOf" in schema:
        return draw(valid_instances(draw(st.sampled_from(schema["anyOf"]))))
    kind = schema["type"]
    if kind == "array":
        return draw(st.lists(valid_instances(schema["items"]), max_size=3))
    if kind == "object":
        return {name: draw(valid_instances(sub)) for name, sub in schema["properties"].items()}
    scalars = {
        "integer": st.integers(),
        "number": st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
        "boolean": st.booleans(),
        "string": st.text(max_size=8),
        "null": st.none(),
    }
    return draw(scalars[kind])


@given(st.data())
def test_property_coercing_valid_arguments_is_the_identity(data):
    schema = data.draw(schemas)
    value = data.draw(valid_instances(schema))

    coerced = coerce(value, schema)

    assert coerced == value and json.dumps(coerced) == json.dumps(value)  # equal and of the same JSON types


@given(schemas, json_values)
def test_property_coercion_never_makes_a_valid_value_invalid(schema, value):
    validator = Draft202012Validator(schema)

    if validator.is_valid(value):
        assert validator.is_valid(coerce(value, schema))


@given(json_values, schemas)
def test_property_coercion_never_breaks_validation_it_then_reports(value, schema):
    # Whatever comes out, validation afterwards answers without raising, listing problems as text.
    assert all(isinstance(problem, str) for problem in validation_problems(coerce(value, schema), schema))


@given(st.integers())
def test_property_stringified_integers_round_trip(number):
    assert coerce(str(number), INT) == number


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_property_stringified_numbers_round_trip(number):
    assert coerce(repr(number), NUM) == number


@given(st.booleans())
def test_property_stringified_booleans_round_trip(flag):
    assert coerce(json.dumps(flag), BOOL) is flag


@given(st.dictionaries(st.text(max_size=5), json_values, max_size=4))
def test_property_stringified_objects_round_trip(value):
    assert coerce(json.dumps(value), {"type": "object"}) == value


@given(st.lists(st.integers(), max_size=5))
def test_property_stringified_arrays_of_stringified_integers_round_trip(numbers):
    schema = {"type": "array", "items": INT}

    assert coerce(json.dumps([str(n) for n in numbers]), schema) == numbers
