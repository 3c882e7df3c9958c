"""pydantic models as parameter types, without making pydantic a dependency.

pydantic is never imported here: a program that defines a model or a ``Field`` has already imported it, so
looking it up in ``sys.modules`` is enough, and costs nothing for the many tools that do not use it.
"""

import sys
from typing import Any

__all__ = ["field_info_description", "is_pydantic_model", "pydantic_model_schema"]

# Keywords whose values are data, not schemas: a default {"title": ...} must survive the title stripping.
_DATA_KEYWORDS = {"default", "enum", "const", "examples"}
# Keywords whose values map names to schemas: the names are not keywords and are kept as they are.
_NAMED_SCHEMAS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}


def is_pydantic_model(value: Any) -> bool:
    """True for a pydantic BaseModel subclass (not an instance)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, type) and issubclass(value, pydantic.BaseModel)


def pydantic_model_schema(hint: Any) -> dict | None:
    """The model's JSON Schema inlined (no ``$ref``) and without ``title`` keys, or None for other hints.

    The providers want the same shape the rest of tools/schema.py produces: nested objects inline, as
    LangChain's ``convert_to_openai_function`` sends them.
    """
    if not is_pydantic_model(hint):
        return None
    schema = hint.model_json_schema()
    definitions = schema.pop("$defs", {})
    return _clean(schema, definitions, frozenset())


def field_info_description(meta: Any) -> str | None:
    """The description of a pydantic ``Field(...)`` found in ``Annotated`` metadata."""
    pydantic_fields = sys.modules.get("pydantic.fields")
    if pydantic_fields is None or not isinstance(meta, pydantic_fields.FieldInfo):
        return None
    return meta.description


def _clean(schema: dict, definitions: dict, seen: frozenset) -> dict:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        # A recursive model would inline forever: its inner occurrence becomes a plain object.
        target = {"type": "object"} if name in seen else _clean(definitions[name], definitions, seen | {name})
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        return {**target, **_clean(siblings, definitions, seen)}
    cleaned: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in _DATA_KEYWORDS:
            cleaned[key] = value
        elif key in _NAMED_SCHEMAS and isinstance(value, dict):
            cleaned[key] = {name: _clean(sub, definitions, seen) for name, sub in value.items()}
        elif isinstance(value, dict):
            cleaned[key] = _clean(value, definitions, seen)
        elif isinstance(value, list):
            cleaned[key] = [_clean(item, definitions, seen) if isinstance(item, dict) else item for item in value]
        else:
            cleaned[key] = value
    return cleaned
