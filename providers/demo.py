"""The offline demo model: a script, not an AI, so a newcomer sees the whole flow with no model server.

It goes through the same Provider interface as real models: it streams its words, calls the
calculator when a message contains arithmetic and current_time when it asks for the time, then
answers from the tool results. Every answer says plainly that it is a demo. It speaks the run's owner's
chosen language (`say`, from chat/runs/execute.py: providers/ is plain Python), and understands a question about
the time in each of the pages' languages (the empty chat suggests one in the page's language: chat/starters.py).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from .types import (
    ChatMessage,
    Finish,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    Usage,
)

DEMO_LABEL = "Demo model (offline, scripted)"
CONNECT_HELP = (
    "set AGENTWEB_LLM_API=openai, AGENTWEB_LLM_BASE_URL (e.g. http://localhost:11434/v1 for Ollama) "
    "and AGENTWEB_LLM_MODEL, then restart — see the README"
)


# Every answer ends with this one short line; how to connect a real model is said once, in the page's banner and
# the README, not repeated under each answer.
def gettext_noop(text: str) -> str:
    """Marks a text for the catalogues (`manage.py update_catalogues` finds it); `say` translates it."""
    return text


def _unchanged(text: str) -> str:
    return text


def demo_note(say: Callable[[str], str] = _unchanged) -> str:
    return "\n\n_(" + say(gettext_noop("agentweb's offline demo model: a script, not an AI.")) + ")_"


# A run of arithmetic: digits, operators, brackets, function names such as sqrt.
_EXPRESSION = re.compile(r"(?:[a-z]+\()?[\d(][\d\s.+\-*/×÷^%(),a-z]*[\d)]", re.IGNORECASE)
_OPERATOR = re.compile(r"[+\-*/×÷^%]|[a-z]+\(", re.IGNORECASE)
# The words of a question about the time, in the pages' languages (Chinese has no spaces between words).
_ASKS_TIME = re.compile(
    r"\b(time|date|day|clock|zeit|uhrzeit|uhr|spät|datum|heure|jour|hora|fecha|día)\b|时间|几点|日期",
    re.IGNORECASE,
)
_TIME_ZONE = re.compile(r"\b([A-Z][a-z]+(?:/[A-Z][A-Za-z_-]+)+|UTC)\b")


class DemoProvider:
    label = DEMO_LABEL
    is_demo = True

    def __init__(self, *, delay: float = 0.03, say: Callable[[str], str] = _unchanged):
        self.delay = delay
        #: Its script's texts (English, marked with gettext_noop) in the language it speaks.
        self.say = say

    async def stream(
        self, messages: list[ChatMessage], tools: list[ToolDefinition], answer: Any = None
    ) -> AsyncIterator[StreamEvent]:
        """`answer` (a structured answer's schema) is not followed: the demo model writes plain text."""
        available = {tool.name for tool in tools}
        calls: list[tuple[str, dict]] = []
        if messages and messages[-1].role == "tool":
            said = answer_from_results(messages, self.say)
        else:
            question = last_user_text(messages)
            calls = plan_tool_calls(question, available)
            said = self.say(gettext_noop("Let me use my tools for that.")) if calls else small_talk(question, self.say)
        async for event in self._say(said):
            yield event
        if not calls:
            return
        for index, (name, args) in enumerate(calls):
            async for event in self._call(index, name, args):
                yield event
        yield Finish("tool_calls")

    async def _say(self, text: str) -> AsyncIterator[StreamEvent]:
        # Word by word, with a pause, so the answer visibly streams.
        for piece in re.findall(r"\S+\s*|\s+", text):
            yield TextDelta(piece)
            await asyncio.sleep(self.delay)
        # No input count: the app estimates it from what was sent, as for any server that sends none (marked ≈).
        yield Usage(input_tokens=None, output_tokens=len(text.split()))
        yield Finish("stop")

    async def _call(self, index: int, name: str, args: dict) -> AsyncIterator[StreamEvent]:
        call_id = f"demo_call_{index}"
        raw = json.dumps(args)
        yield ToolCallStart(index, call_id, name)
        for start in range(0, len(raw), 6):
            yield ToolCallArgsDelta(index, raw[start : start + 6])
            await asyncio.sleep(self.delay)
        yield ToolCallEnd(index, call_id, name, raw, args)


def last_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


def plan_tool_calls(question: str, available: set[str]) -> list[tuple[str, dict]]:
    calls = []
    expression = find_expression(question)
    if expression and "calculator" in available:
        calls.append(("calculator", {"expression": expression}))
    if _ASKS_TIME.search(question) and "current_time" in available:
        zone = _TIME_ZONE.search(question)
        calls.append(("current_time", {"timezone": zone.group(1) if zone else "UTC"}))
    return calls


def find_expression(text: str) -> str | None:
    candidates = [m.group(0).strip() for m in _EXPRESSION.finditer(text)]
    candidates = [c for c in candidates if _OPERATOR.search(c) and any(ch.isdigit() for ch in c)]
    return max(candidates, key=len) if candidates else None


def answer_from_results(messages: list[ChatMessage], say: Callable[[str], str] = _unchanged) -> str:
    results = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.append(message)
    calls = {call.id: call for m in messages if m.role == "assistant" for call in m.tool_calls}
    sentences = []
    for result in reversed(results):
        call = calls.get(result.tool_call_id or "")
        if result.status == "error":
            sentences.append(
                say(gettext_noop("The %(tool)s tool reported an error: %(error)s"))
                % {"tool": result.name, "error": result.content}
            )
        elif result.name == "calculator" and call:
            sentences.append(f"{call.args.get('expression')} = {result.content}")
        elif result.name == "current_time":
            sentences.append(say(gettext_noop("The current time is %(time)s.")) % {"time": result.content})
        else:
            sentences.append(
                say(gettext_noop("%(tool)s returned: %(result)s")) % {"tool": result.name, "result": result.content}
            )
    return "\n".join(sentences) + demo_note(say)


def small_talk(question: str, say: Callable[[str], str] = _unchanged) -> str:
    # Translators: keep "23*19" and "Europe/Paris" as they are: the demo's script reads them.
    return say(
        gettext_noop(
            "Hello! I can show you how agentweb works: ask me some arithmetic (for example “what is 23*19?”) "
            "or the time (“what time is it in Europe/Paris?”) and watch the tool calls appear."
        )
    ) + demo_note(say)
