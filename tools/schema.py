"""Turn a Python function's signature and Google-style docstring into a JSON Schema for the model.

The output follows the shape OpenAI-compatible APIs and LangChain produce (no ``title`` keys, inline nested
objects, ``anyOf`` with ``{"type": "null"}`` for optionals), so every provider can send it unchanged.
"""

import collections.abc as cabc
import dataclasses
import enum
import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin, is_typeddict

from tools.docstring import parse_docstring
from tools.injection import InjectedArg, injection_marker
from tools.pydantic_schema import field_info_description, pydantic_model_schema

__all__ = ["InjectedArg", "function_schema", "is_injected", "type_hints", "type_schema"]


_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARRAYS = {list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection}
_SETS = {set, frozenset, cabc.Set, cabc.MutableSet}
_MAPPINGS = {dict, cabc.Mapping, cabc.MutableMapping}
_NULL = {"type": "null"}
_NO_DEFAULT = object()


def function_schema(func: Callable[..., Any]) -> tuple[str, dict]:
    """Return ``(description, parameters)`` for ``func``; parameters is a JSON Schema ``object``."""
    doc = parse_docstring(inspect.getdoc(func))
    hints = type_hints(func)
    properties: dict[str, dict] = {}
    required: list[str] = []
    for param in _model_params(func):
        hint = hints.get(param.name, param.annotation)
        if is_injected(hint):
            continue
        properties[param.name] = _param_schema(func, param, hint, doc.args.get(param.name))
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    return doc.summary, {"type": "object", "properties": properties, "required": required}


def _param_schema(func: Callable[..., Any], param: inspect.Parameter, hint: Any, doc_description: str | None) -> dict:
    try:
        schema = type_schema(hint)
    except TypeError as exc:
        raise TypeError(f"Parameter '{param.name}' of {func.__name__}: {exc}") from None
    # An Annotated[T, "..."] description sits next to the parameter, so it wins over the docstring.
    if doc_description and "description" not in schema:
        schema["description"] = doc_description
    default = _json_default(param.default)
    if default is not _NO_DEFAULT:
        schema["default"] = default
    return schema


def is_injected(hint: Any) -> bool:
    """True for ``Annotated[T, InjectedArg]`` or one of its subclasses (the class or an instance as metadata)."""
    return injection_marker(hint) is not None


def type_schema(hint: Any, _seen: frozenset = frozenset()) -> dict:
    """JSON Schema for one type hint. Raises TypeError for hints that have no JSON meaning."""
    if hint is inspect.Parameter.empty or hint is Any:
        return {}
    if hint is None or hint is type(None):
        return dict(_NULL)
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        return _annotated_schema(hint, _seen)
    if origin in (Required, NotRequired):
        return type_schema(args[0], _seen)
    if origin is Literal:
        return _enum_values_schema([v.value if isinstance(v, enum.Enum) else v for v in args])
    if origin in (Union, types.UnionType):
        return _union_schema(args, _seen)
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_values_schema([member.value for member in hint])
    if is_typeddict(hint) or (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        return _object_schema(hint, _seen)
    model_schema = pydantic_model_schema(hint)
    if model_schema is not None:
        return model_schema
    return _container_schema(hint, origin or hint, args, _seen)


def _container_schema(hint: Any, container: Any, args: tuple, seen: frozenset) -> dict:
    if container in _ARRAYS:
        return _array_schema(args[0] if args else Any, seen)
    if container in _SETS:
        return {**_array_schema(args[0] if args else Any, seen), "uniqueItems": True}
    if container is tuple:
        return _tuple_schema(args, seen)
    if container in _MAPPINGS:
        return _mapping_schema(args, seen)
    raise TypeError(f"unsupported type hint {hint!r}")


def _annotated_schema(hint: Any, seen: frozenset) -> dict:
    schema = dict(type_schema(hint.__origin__, seen))
    # The first plain string in the metadata is the description: Annotated[int, "how many results"];
    # pydantic's Annotated[int, Field(description=...)] is read too.
    description = next((meta for meta in hint.__metadata__ if isinstance(meta, str)), None)
    description = description or next(filter(None, map(field_info_description, hint.__metadata__)), None)
    if description:
        schema["description"] = description
    return schema


def _union_schema(args: tuple, seen: frozenset) -> dict:
    options = [type_schema(arg, seen) for arg in args if arg is not type(None)]
    if any(option == {} for option in options):
        return {}  # Any already admits everything, null included.
    if type(None) in args:
        options.append(dict(_NULL))
    return {"anyOf": options}


def _enum_values_schema(values: list) -> dict:
    schema: dict[str, Any] = {"enum": list(values)}
    kinds = {_json_type(value) for value in values}
    if len(kinds) == 1 and None not in kinds:
        schema["type"] = kinds.pop()
    return schema


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else None


def _array_schema(item: Any, seen: frozenset) -> dict:
    items = type_schema(item, seen)
    return {"type": "array", "items": items} if items else {"type": "array"}


def _tuple_schema(args: tuple, seen: frozenset) -> dict:
    if len(args) == 2 and args[1] is Ellipsis:
        return _array_schema(args[0], seen)
    if not args:
        return {"type": "array"}
    prefix = [type_schema(arg, seen) for arg in args]
    return {"type": "array", "prefixItems": prefix, "minItems": len(args), "maxItems": len(args)}


def _mapping_schema(args: tuple, seen: frozenset) -> dict:
    if args and args[0] not in (str, Any):
        raise TypeError(f"mapping keys must be str (JSON object keys are strings), got {args[0]!r}")
    values = type_schema(args[1], seen) if args else {}
    return {"type": "object", "additionalProperties": values} if values else {"type": "object"}


def _object_schema(cls: type, seen: frozenset) -> dict:
    """Nested object from a TypedDict or a dataclass, inlined (no $ref) as the providers expect."""
    if cls in seen:
        return {"type": "object"}  # recursive type: stop here rather than loop forever
    seen = seen | {cls}
    hints = typing.get_type_hints(cls, include_extras=True)
    properties: dict[str, dict] = {}
    required: list[str] = []
    for name, default, is_required in _object_fields(cls, hints):
        prop = type_schema(hints[name], seen)
        if default is not _NO_DEFAULT:
            prop["default"] = default
        properties[name] = prop
        if is_required:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def _object_fields(cls: type, hints: dict) -> list[tuple[str, Any, bool]]:
    """``(name, JSON default or _NO_DEFAULT, required)`` for each field the caller can set."""
    if is_typeddict(cls):
        return [(name, _NO_DEFAULT, name in cls.__required_keys__) for name in hints]
    fields = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        has_default = field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
        default = _json_default(field.default) if field.default is not dataclasses.MISSING else _NO_DEFAULT
        fields.append((field.name, default, not has_default))
    return fields


def _model_params(func: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters the model fills in: no self/cls, no *args/**kwargs."""
    params = list(inspect.signature(func).parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    kept = []
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            # Tools are called with keyword arguments, so such a parameter could never receive a value.
            raise TypeError(f"Parameter '{param.name}' of {func.__name__} is positional-only")
        kept.append(param)
    return kept


def type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The resolved hints of ``func`` with their ``Annotated`` metadata, or {} when they cannot be resolved."""
    try:
        return typing.get_type_hints(func, include_extras=True)
    except Exception:
        # Unresolvable forward references: fall back to the raw annotations; strings among them are
        # then reported as unsupported by type_schema, naming the parameter.
        return {}


def _json_default(value: Any) -> Any:
    """The default as a JSON value, or _NO_DEFAULT when there is none or it has no JSON form."""
    if value is inspect.Parameter.empty or value is dataclasses.MISSING:
        return _NO_DEFAULT
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return _NO_DEFAULT
