"""The Tool object and the ``@tool`` decorator that builds one from a plain function."""

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from jsonschema import Draft202012Validator

from tools.docstring import parse_docstring
from tools.injection import Injection, find_injections
from tools.schema import function_schema, is_injected, type_hints

__all__ = ["ResponseFormat", "Tool", "tool"]

# The strictest common rule among providers (OpenAI and Anthropic both reject anything else).
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ResponseFormat = Literal["content", "content_and_artifact"]


# eq=False: tools compare and hash by identity (the parameters dict would make a generated __hash__ fail).
@dataclass(frozen=True, eq=False)
class Tool:
    """A callable the model may use: its name, description, argument schema and execution policy."""

    name: str
    description: str
    parameters: dict
    func: Callable[..., Any]
    is_async: bool
    requires_approval: bool = False  # carried for the approval policy; the executor itself never pauses
    return_direct: bool = False
    timeout: float = 30.0  # seconds, deadline for the whole call
    # "content_and_artifact": the function returns (content, artifact); only the content reaches the model.
    response_format: ResponseFormat = "content"
    # Parameters the runtime fills from the ToolContext; they are not in ``parameters``.
    injections: tuple[Injection, ...] = ()
    # Declared Python types of the model-visible parameters, to hand the function what its hints promise.
    arg_types: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Fail when the tool is defined, not when the model first calls it.
        if not _NAME.match(self.name):
            raise ValueError(f"Invalid tool name {self.name!r}: use 1-64 letters, digits, '_' or '-'.")
        if not self.timeout > 0:
            raise ValueError(f"Tool {self.name!r}: timeout must be positive, got {self.timeout!r}.")
        if self.response_format not in ("content", "content_and_artifact"):
            raise ValueError(
                f"Tool {self.name!r}: response_format must be 'content' or 'content_and_artifact', "
                f"got {self.response_format!r}."
            )
        if self.parameters.get("type") != "object":
            raise ValueError(f"Tool {self.name!r}: parameters must be a JSON Schema with type 'object'.")
        Draft202012Validator.check_schema(self.parameters)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly, so decorated functions stay usable as functions."""
        return self.func(*args, **kwargs)


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    name_or_func: str | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict | None = None,
    requires_approval: bool = False,
    return_direct: bool = False,
    timeout: float = 30.0,
    response_format: ResponseFormat = "content",
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | str | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict | None = None,
    requires_approval: bool = False,
    return_direct: bool = False,
    timeout: float = 30.0,
    response_format: ResponseFormat = "content",
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a Tool from a sync or async function: ``@tool``, ``@tool()``, ``@tool("name")`` or ``@tool(name=...)``.

    Explicit ``description`` / ``parameters`` replace the ones read from the docstring and type hints.
    """
    if isinstance(func, str):  # @tool("search"), as in LangChain
        if name is not None:
            raise TypeError("@tool: give the name once, either positionally or as name=.")
        func, name = None, func

    def build(f: Callable[..., Any]) -> Tool:
        hints = type_hints(f)
        if parameters is None:
            generated_description, schema = function_schema(f)
        else:
            # The schema is not generated: an explicit one is the way out for functions hints can't describe.
            generated_description, schema = parse_docstring(inspect.getdoc(f)).summary, parameters
        return Tool(
            name=f.__name__ if name is None else name,
            description=generated_description if description is None else description,
            parameters=schema,
            func=f,
            is_async=inspect.iscoroutinefunction(f),
            requires_approval=requires_approval,
            return_direct=return_direct,
            timeout=timeout,
            response_format=response_format,
            injections=find_injections(f, hints),
            arg_types={key: hint for key, hint in hints.items() if key != "return" and not is_injected(hint)},
        )

    if func is None:
        return build
    if not callable(func):
        raise TypeError(f"@tool expects a function or a name, got {func!r}.")
    return build(func)
