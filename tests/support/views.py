"""Whether a frame the server sent fits the shape chat/live/views.py declares for it: every key it must have, no key
it does not declare, each value of its declared type. Used on every frame the tests' websocket client receives
(tests/chat/conftest.py), and by tests/chat/live/test_views.py."""

from __future__ import annotations

import types
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

from chat.live.views import ANSWERS, LIST_EVENTS, THREAD_EVENTS, SnapshotView


def keys_of(shape: type) -> tuple[dict[str, Any], set[str]]:
    """A TypedDict's keys with their value types, and which of them a value may leave out. Read from the annotations:
    Python 3.11 counts a `NotRequired` written under `from __future__ import annotations` as required."""
    hints = get_type_hints(shape, include_extras=True)
    optional = {key for key, hint in hints.items() if get_origin(hint) is NotRequired}
    if not shape.__total__:
        optional = set(hints)
    return {key: (get_args(hint)[0] if key in optional else hint) for key, hint in hints.items()}, optional


def problems(value: Any, shape: Any, where: str = "", *, partial: bool = False) -> list[str]:
    """What in `value` (as JSON decoded it) does not fit `shape`; [] when it fits. `partial`: keys a TypedDict
    requires may be missing (a doc's example that shows some of them)."""
    if shape is Any:
        return []
    origin = get_origin(shape)
    if origin is Literal:
        return [] if value in get_args(shape) else [f"{where or 'value'}: {value!r} is not one of {get_args(shape)}"]
    if origin in (Union, types.UnionType):
        found = [problems(value, arm, where, partial=partial) for arm in get_args(shape)]
        return [] if any(not p for p in found) else min(found, key=len)
    if origin is list:
        if type(value) is not list:
            return [f"{where}: {value!r} is not a list"]
        (item,) = get_args(shape)
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{where}[{i}]", partial=partial)]
    if origin is dict:
        if type(value) is not dict:
            return [f"{where}: {value!r} is not an object"]
        _, item = get_args(shape)
        return [p for k, v in value.items() for p in problems(v, item, f"{where}.{k}", partial=partial)]
    if is_typeddict(shape):
        if type(value) is not dict:
            return [f"{where}: {value!r} is not an object ({shape.__name__})"]
        declared, optional = keys_of(shape)
        found = [f"{where}.{key}: not a key of {shape.__name__}" for key in value if key not in declared]
        if not partial:
            found += [f"{where}.{key}: missing ({shape.__name__})" for key in declared.keys() - optional - set(value)]
        for key, hint in declared.items():
            if key in value:
                found += problems(value[key], hint, f"{where}.{key}", partial=partial)
        return found
    if shape is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if shape is float:
        return [] if type(value) in (int, float) else [f"{where}: {value!r} is not a number"]
    if shape in (int, str, bool):
        return [] if type(value) is shape else [f"{where}: {value!r} is not {shape.__name__}"]
    raise TypeError(f"no check for {shape!r}")


def frame_problems(frame: dict[str, Any]) -> list[str]:
    """What in a frame the server sent does not fit its declared shape (chat/live/views.py)."""
    kind = frame.get("type")
    if kind == "thread.snapshot":
        return problems(frame, SnapshotView)
    fields = {key: value for key, value in frame.items() if key != "type"}
    if kind in THREAD_EVENTS:
        envelope = [f"{kind}: `{key}` missing" for key in ("thread", "seq") if key not in fields]
        envelope += problems(fields.pop("thread", ""), str, "thread") + problems(fields.pop("seq", 0), int, "seq")
        return envelope + problems(fields, THREAD_EVENTS[kind], kind)
    if kind in LIST_EVENTS:
        return problems(fields, LIST_EVENTS[kind], kind)
    if kind in ANSWERS:
        return problems(fields, ANSWERS[kind], kind)
    return [f"{kind!r}: not an event type chat/live/views.py declares"]


def check_frame(frame: dict[str, Any]) -> dict[str, Any]:
    """The frame, after asserting that it fits its declared shape."""
    found = frame_problems(frame)
    assert not found, f"{frame.get('type')} does not fit chat/live/views.py: {found}\n{frame}"
    return frame
