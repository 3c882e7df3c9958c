"""Validated JSON arguments → the Python types a tool's hints declare.

The schema promised the model that ``point: Point`` is an object; the function was promised a ``Point``.
Runs after validation, so every value already has the right JSON shape: this only builds dataclasses,
pydantic models, enums, tuples and sets from it. Errors raised by the types themselves (a dataclass's
``__post_init__``, a pydantic validator) propagate as ValueError/TypeError for the executor to report.
"""

import collections.abc as cabc
import dataclasses
import enum
import inspect
import types
import typing
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin, is_typeddict

from jsonschema import Draft202012Validator

from tools.pydantic_schema import is_pydantic_model
from tools.schema import type_schema

__all__ = ["to_declared"]

_SEQUENCES = {list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection}
_MAPPINGS = {dict, cabc.Mapping, cabc.MutableMapping}


def to_declared(value: Any, hint: Any) -> Any:
    """``value`` (valid JSON data for ``hint``'s schema) as an instance of ``hint``."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any or hint is inspect.Parameter.empty or value is None:
        return value
    if origin in (Annotated, Required, NotRequired):
        return to_declared(value, args[0])
    if origin in (Union, types.UnionType):
        return _union(value, args)
    if origin is Literal:
        # Literal[Color.RED] is offered to the model as "red": hand back the member itself.
        return next((arg for arg in args if isinstance(arg, enum.Enum) and arg.value == value), value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    if is_pydantic_model(hint):
        return hint.model_validate(value)
    if isinstance(value, dict) and (is_typeddict(hint) or (isinstance(hint, type) and dataclasses.is_dataclass(hint))):
        return _object(value, hint)
    return _container(value, origin or hint, args)


def _union(value: Any, args: tuple) -> Any:
    """The first member of the union whose schema the value fits decides the conversion."""
    for arg in args:
        if arg is type(None):
            continue
        try:
            fits = Draft202012Validator(type_schema(arg)).is_valid(value)
        except TypeError:  # a member with no JSON form
            continue
        if fits:
            return to_declared(value, arg)
    return value


def _object(value: dict, cls: type) -> Any:
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = {key: to_declared(item, hints.get(key, Any)) for key, item in value.items()}
    return fields if is_typeddict(cls) else cls(**fields)


def _container(value: Any, container: Any, args: tuple) -> Any:
    if isinstance(value, list):
        if container in _SEQUENCES:
            return [to_declared(item, args[0] if args else Any) for item in value]
        if container in (set, frozenset, cabc.Set, cabc.MutableSet):
            items = (to_declared(item, args[0] if args else Any) for item in value)
            return frozenset(items) if container is frozenset else set(items)
        if container is tuple:
            return _tuple(value, args)
    if isinstance(value, dict) and container in _MAPPINGS and len(args) == 2:
        return {key: to_declared(item, args[1]) for key, item in value.items()}
    return value


def _tuple(value: list, args: tuple) -> tuple:
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(to_declared(item, args[0]) for item in value)
    if not args:
        return tuple(value)
    return tuple(to_declared(item, arg) for item, arg in zip(value, args, strict=False))
