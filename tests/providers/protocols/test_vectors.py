"""The shared conformance vectors for text tool-call parsing (hermes 49, xml 38): all 87 run here.

Every vector is fed whole, one character at a time, in random pieces and, for `streaming` vectors, in
the exact pieces its source used; all must agree, and all must meet the vector's expectation. Where we
deliberately differ, OURS names the vector, says why, and states what we do instead, which is checked.

How an expectation is read: `tool_calls` are the calls that can run (ToolCallEnd with arguments);
`error_reported` means a call that ends with an error the model is shown (ToolCallEnd with args None).
A vector that expects neither may not produce an error call, except where OURS says so.
"""

from __future__ import annotations

import pytest

from providers.protocols import HermesParser, XmlParser
from providers.types import ToolDefinition
from tests.support import vectors

from .support import chunkings, feed, outcome

FILES = ("vllm_hermes.json", "ai_sdk_tool_call_middleware_hermes.json", "ai_sdk_tool_call_middleware_morphxml.json")
VECTORS = vectors.load(*FILES)

_CUT_OFF = (
    "a call cut off by the end of the reply is answered with an error the model can act on (like "
    "mw-hermes-019), where the source drops it silently or shows the raw markup as text"
)
_HIDE_MARKUP = (
    "protocol markup never reaches the visible text, whether the stream is read incrementally or not; the "
    "failed call is answered with an error instead of being kept as text"
)
_DUPLICATE = (
    'a parameter that takes one value, given twice, makes the call an error ("give it once") rather than '
    "keeping one of the values silently; mw-xml-027 (a file's content given twice) shows why a silent choice "
    "is unsafe, and the source itself is inconsistent (mw-xml-027 cancels the call, mw-xml-034 keeps the last)"
)

#: vector id → (why we differ, what we expect instead: keys replace the vector's own expectation)
OURS: dict[str, tuple[str, dict]] = {
    "vllm-hermes-010": (_CUT_OFF, {"error_reported": True, "error_tool_name": "final_answer"}),
    "mw-hermes-004": (_CUT_OFF, {"error_reported": True, "error_tool_name": "c", "text": ""}),
    "mw-hermes-008": (_CUT_OFF, {"error_reported": True, "error_tool_name": "t", "text": ""}),
    "mw-xml-010": (
        _CUT_OFF + "; of the vector's two alternatives this is the second (no call, no markup shown)",
        {"alternatives": None, "tool_calls": [], "text": "", "error_reported": True, "error_tool_name": "get_weather"},
    ),
    "mw-hermes-027": (_HIDE_MARKUP, {"text_contains": [], "text": "before  after"}),
    "mw-xml-027": (_HIDE_MARKUP + "; and " + _DUPLICATE, {"text": "", "error_reported": True}),
    "mw-xml-034": (_DUPLICATE, {"tool_calls": [], "error_reported": True, "error_tool_name": "shell"}),
}


def test_all_vectors_are_here():
    vectors.require(*FILES)
    assert len(VECTORS) == 87
    assert {v["kind"] for v in VECTORS} == {"hermes", "xml"}
    assert set(OURS) <= {v["id"] for v in VECTORS}


def make_parser(vector):
    if vector["kind"] == "xml":
        tools = [ToolDefinition(t["name"], t.get("description", ""), t["parameters"]) for t in vector["tools"]]
        return XmlParser(tools)
    return HermesParser()


def expectation(vector) -> dict:
    expected = dict(vector["expected"])
    if vector["id"] in OURS:
        expected.update(OURS[vector["id"]][1])
    return {key: value for key, value in expected.items() if value is not None}


def meets(result, expected) -> list[str]:
    """What in `result` falls short of `expected` (empty: all is well)."""
    if "alternatives" in expected:
        failures = [meets(result, alternative) for alternative in expected["alternatives"]]
        return [] if any(not f for f in failures) else [f"no alternative met: {failures}"]
    problems = []
    wanted = [(call["name"], call["arguments"]) for call in expected.get("tool_calls", [])]
    if result.calls != wanted:
        problems.append(f"calls {result.calls} != {wanted}")
    raws = [call.get("arguments_raw") for call in expected.get("tool_calls", [])]
    if any(raws) and result.raws != raws:
        problems.append(f"raw arguments {result.raws} != {raws}")
    if "text" in expected and result.text != expected["text"]:
        problems.append(f"text {result.text!r} != {expected['text']!r}")
    problems += [f"text lacks {s!r}" for s in expected.get("text_contains", []) if s not in result.text]
    problems += [f"text shows {s!r}" for s in expected.get("text_not_contains", []) if s in result.text]
    if "text_parts" in expected and result.text_parts != expected["text_parts"]:
        problems.append(f"text parts {result.text_parts} != {expected['text_parts']}")
    if expected.get("error_reported"):
        if not result.errors:
            problems.append("no error reported")
        name = expected.get("error_tool_name")
        if name and name not in [n for n, _ in result.errors]:
            problems.append(f"the error does not name {name}: {result.errors}")
    elif result.errors:
        problems.append(f"unexpected error calls: {result.errors}")
    return problems


@pytest.mark.parametrize("vector", vectors.cases(*FILES))
def test_vector(vector):
    text = "".join(vector["input"]) if isinstance(vector["input"], list) else vector["input"]
    ways = chunkings(text)
    if vector["mode"] == "streaming":
        ways["the source's pieces"] = vector["input"]
    results = {way: outcome(feed(make_parser(vector), chunks)) for way, chunks in ways.items()}
    first = results["whole"]
    for way, result in results.items():
        assert result.key() == first.key(), f"{way} differs from whole: {result} != {first}"
    problems = meets(first, expectation(vector))
    assert not problems, f"{vector['id']} ({vector['notes']}): {problems}"
