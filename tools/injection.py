"""Injected parameters: declared by annotation, left out of the schema, filled by the runtime from a ToolContext.

``user: Annotated[ToolUser, InjectedUser]`` reads like LangGraph's ``InjectedStore`` / ``InjectedToolCallId``.
The model can never set these: whatever it sends under such a name is dropped before the call.
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, get_origin

from tools.context import ToolContext

__all__ = [
    "InjectedArg",
    "InjectedAttachments",
    "InjectedContext",
    "InjectedStore",
    "InjectedThreadId",
    "InjectedToolCallId",
    "InjectedUser",
    "Injection",
    "find_injections",
    "injection_marker",
    "resolve_injections",
]


class InjectedArg:
    """Marker for ``Annotated[T, InjectedArg]``: hidden from the model; the caller's default applies.

    The subclasses name what the runtime fills in. The class or an instance may be used as the marker.
    """

    source: ClassVar[str | None] = None  # the ToolContext field, "context" for the whole context
    what: ClassVar[str] = "an injected value"


class InjectedUser(InjectedArg):
    source, what = "user", "the current user"


class InjectedThreadId(InjectedArg):
    source, what = "thread_id", "the thread id"


class InjectedToolCallId(InjectedArg):
    source, what = "tool_call_id", "the tool call id"


class InjectedStore(InjectedArg):
    source, what = "store", "the per-user store"


class InjectedAttachments(InjectedArg):
    """The attachments of the message the run answers: a list of objects with ``name``, ``content_type``, ``size``,
    ``text`` (a text file's or PDF's whole text; None for an image) and ``read()`` (the bytes). Empty when it has
    none."""

    source, what = "attachments", "the message's attachments"


class InjectedContext(InjectedArg):
    source, what = "context", "the tool context"


@dataclass(frozen=True)
class Injection:
    name: str
    marker: type[InjectedArg]
    has_default: bool


def injection_marker(hint: Any) -> type[InjectedArg] | None:
    """The marker class of ``Annotated[T, <marker>]``, or None when the hint is not injected."""
    if get_origin(hint) is not Annotated:
        return None
    for meta in hint.__metadata__:
        if isinstance(meta, type) and issubclass(meta, InjectedArg):
            return meta
        if isinstance(meta, InjectedArg):
            return type(meta)
    return None


def find_injections(func: Callable[..., Any], hints: dict[str, Any]) -> tuple[Injection, ...]:
    """The injected parameters of ``func``, given its resolved type hints."""
    found = []
    for param in inspect.signature(func).parameters.values():
        marker = injection_marker(hints.get(param.name, param.annotation))
        if marker is not None:
            found.append(Injection(param.name, marker, param.default is not inspect.Parameter.empty))
    return tuple(found)


def resolve_injections(
    tool_name: str, injections: tuple[Injection, ...], context: ToolContext
) -> tuple[dict[str, Any], str | None]:
    """``(keyword arguments, None)``, or ``({}, why)`` when the context lacks something the tool requires.

    A value the context does not have is left out when the parameter has a default, so
    ``user: Annotated[ToolUser | None, InjectedUser] = None`` makes the user optional.
    """
    values: dict[str, Any] = {}
    for injection in injections:
        value = _value(injection.marker, context)
        if value is not None:
            values[injection.name] = value
        elif not injection.has_default:
            return {}, f"Tool {tool_name!r} needs {injection.marker.what}, which this call does not provide."
    return values, None


def _value(marker: type[InjectedArg], context: ToolContext) -> Any:
    if marker.source == "context":
        return context
    if marker.source == "attachments":
        return list(context.attachments)
    return getattr(context, marker.source) if marker.source else None
