"""function_schema / parse_docstring against the shared conformance vectors (../shared/vectors).

The vectors live outside this repository, so the tests skip when the folder is absent. Vectors where the
project deliberately differs are listed in DIFFERENCES with the reason, and show up as skipped.
"""

import ast
import copy
import typing
from functools import cache

import pydantic
import pytest

from tests.support import vectors
from tools.base import Tool, tool
from tools.docstring import parse_docstring
from tools.injection import InjectedArg, InjectedToolCallId
from tools.pydantic_schema import is_pydantic_model
from tools.schema import function_schema, type_schema

FILES = ("langchain_function_schema.json", "ollama_python_function_schema.json")

# Every function → schema vector of both files, except the docstring-only ones below.
FUNCTION_VECTORS = [f"lc-schema-{n:03}" for n in [*range(1, 13), *range(19, 31)]] + [
    f"ollama-schema-00{n}" for n in range(1, 8)
]
DOCSTRING_VECTORS = [f"lc-schema-0{n}" for n in range(13, 19)]
_STRICT = "OpenAI strict mode (additionalProperties false everywhere, every property required) is a provider option"
_RAW_DOCSTRING = "LangChain's @tool without parse_docstring keeps the whole docstring and ignores Args; we always parse"
_LENIENT = "the docstring reader is lenient on purpose (tools/docstring.py): a docstring never fails a tool"
DIFFERENCES = {
    "lc-schema-006": _STRICT + " the providers do not use yet",
    "lc-schema-007": _STRICT + "; QUIRK: LangChain even keeps pydantic titles inside anyOf",
    "lc-schema-008": _STRICT + " the providers do not use yet",
    "lc-schema-009": "'required' is always present, as an empty list when there are no parameters",
    "lc-schema-011": _STRICT + " the providers do not use yet",
    "lc-schema-012": _STRICT + " the providers do not use yet",
    "lc-schema-019": _RAW_DOCSTRING,
    "lc-schema-022": _LENIENT,
    "lc-schema-023": _LENIENT,
    "lc-schema-024": _LENIENT + "; a documented name that is not a parameter is ignored",
    "lc-schema-025": _RAW_DOCSTRING + ": the description is the summary, without the Returns section",
    "ollama-schema-002": "QUIRK: 'v: int | str | None' without a default stays required (LangChain/pydantic semantics)",
    "ollama-schema-005": "without a docstring the 'description' key is left out instead of set to ''",
    "ollama-schema-006": "an unannotated parameter is {} (any value), not 'string'",
}
# Targets that compare pydantic's model_json_schema(): its 'title' keys are not compared, since this project
# never emits them (no provider reads them); what remains must match.
_WITH_TITLES = (
    "tool(fn).args_schema.model_json_schema()",
    "tool(fn, parse_docstring=True).args_schema",
    "tool(fn).args",
)


@cache
def _vectors() -> dict[str, dict]:
    return {entry["id"]: entry for entry in vectors.load(*FILES)}


def _params(ids: list[str]) -> list:
    return [pytest.param(i, marks=pytest.mark.skip(reason=DIFFERENCES[i])) if i in DIFFERENCES else i for i in ids]


def _vector(vector_id: str) -> dict:
    vectors.require(*FILES)
    return _vectors()[vector_id]


def _langchain_tool(*args, parse_docstring=False, **kwargs):
    """LangChain's ``tool`` signature mapped onto ours (we always parse the docstring)."""
    return tool(*args, **kwargs)


def _object_from_source(source: str):
    """Execute the vector's source and return its last definition (a class's first method for plain classes)."""
    namespace = {name: getattr(typing, name) for name in ("Annotated", "Any", "Dict", "List", "Literal", "Union")}
    namespace.update(BaseModel=pydantic.BaseModel, Field=pydantic.Field)
    namespace.update(InjectedToolArg=InjectedArg, InjectedToolCallId=InjectedToolCallId, tool=_langchain_tool)
    exec(source, namespace)
    node = ast.parse(source).body[-1]
    found = namespace[node.name]
    if isinstance(node, ast.ClassDef) and not is_pydantic_model(found):
        method = next(item for item in node.body if isinstance(item, ast.FunctionDef))
        return getattr(found, method.name)
    return found


def _as_openai_function(obj) -> dict:
    if isinstance(obj, Tool):
        return {"name": obj.name, "description": obj.description, "parameters": obj.parameters}
    if is_pydantic_model(obj):  # a model as the whole tool, as convert_to_openai_function accepts
        parameters = type_schema(obj)
        description = parameters.pop("description", "")
        return {"name": obj.__name__, "description": description, "parameters": parameters}
    description, parameters = function_schema(obj)
    return {"name": obj.__name__, "description": description, "parameters": parameters}


def _actual(vector: dict) -> dict:
    function = _as_openai_function(_object_from_source(vector["input"]))
    target = vector["target"]
    if target.endswith(".args"):
        return function["parameters"]["properties"]
    if target.startswith(_WITH_TITLES):
        return {"description": function["description"], **function["parameters"]}
    if target.startswith("convert_to_openai_tool"):
        return {"type": "function", "function": function}
    return function


def _without_titles(schema):
    """A pydantic schema without its 'title' keywords (property names called "title" are kept)."""
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: (
            {name: _without_titles(sub) for name, sub in value.items()}
            if key == "properties"
            else _without_titles(value)
        )
        for key, value in schema.items()
        if key != "title"
    }


def _lookup(data: dict, dotted: str):
    for key in dotted.split("."):
        data = data[key]
    return data


def _subset(actual, expected) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _subset(actual[key], v) for key, v in expected.items()
        )
    return actual == expected


@pytest.mark.parametrize("vector_id", _params(FUNCTION_VECTORS))
def test_it_matches_the_function_schema_vector(vector_id):
    vector = _vector(vector_id)
    actual = _actual(vector)
    expected = copy.deepcopy(vector["expected"])
    if vector["target"].startswith(_WITH_TITLES):
        expected = _without_titles(expected)

    if vector["match"] == "exact":
        assert actual == expected
    elif vector["match"] == "subset":
        assert _subset(actual, expected)
    else:  # dotted paths in OpenAI tool format: {"type": "function", "function": {...}}
        wrapped = {"type": "function", "function": actual}
        for path, value in expected.items():
            assert _lookup(wrapped, path) == value, path


def test_it_names_a_reason_for_every_difference():
    assert set(DIFFERENCES) <= set(FUNCTION_VECTORS) and all(reason for reason in DIFFERENCES.values())


@pytest.mark.parametrize("vector_id", _params(DOCSTRING_VECTORS))
def test_it_matches_the_docstring_vector(vector_id):
    vector = _vector(vector_id)
    expected = vector["expected"]
    args = parse_docstring(vector["input"]["docstring"]).args

    if "keys" in expected:
        assert sorted(args) == sorted(expected["keys"])
    for name, text in expected.get("equals", {}).items():
        assert args[name] == text
    for name, text in expected.get("equals_some", {}).items():
        assert args[name] == text
    for name, parts in expected.get("contains", {}).items():
        for part in [parts] if isinstance(parts, str) else parts:
            assert part in args[name]
