"""What the chat page shows of a thread, for comparing two tabs: a Python copy of how static/chat/app.js orders
a thread's events (by `seq`) and static/chat/thread.js (`reset`, `buildMessage`, `apply`), message-view.js and
tool-card.js build the messages, their tool cards and the run's notice from a snapshot and the events after it.

Only what a person sees is kept: each message's text, thinking, status and note; each card's status, arguments,
result, duration, artifact button, decision and approval buttons; the run's notice and notes. A gap in the
numbers fails (the page would start over from a snapshot: a test that hits one has lost an event).
"""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass, field
from typing import Any

FINAL_TOOL_STATUSES = {"success", "error", "rejected", "replied", "cancelled"}
# A waiting card's status once decided (tool-card.js ToolCardView.decided).
DECIDED_STATUS = {"approve": "requested", "edit": "requested", "respond": "replied"}


def pretty(value: Any) -> str:
    """dom.js prettyJson."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, indent=2, ensure_ascii=False)


def decision_text(decision: str, by: str, message: str) -> str:
    """approval.js decisionText."""
    who = f" by {by}" if by else ""
    why = f": {message}" if message else ""
    return {
        "approve": f"Approved{who}",
        "edit": f"Edited{who}",
        "reject": f"Rejected{who}{why}",
        "respond": f"Replied{who}{why}",
    }.get(decision, f"Decided{who}")


@dataclass
class Card:
    id: str
    name: str
    call_id: str
    status: str = "streaming"
    args: str = ""
    result: str = ""
    duration_ms: int | None = None
    has_artifact: bool = False
    edited_from: str | None = None
    decision: str | None = None
    approval: dict | None = None

    def set_status(self, status: str) -> None:
        self.status = status
        if status != "awaiting_approval":
            self.approval = None

    def complete(self, status: str, content: Any, duration_ms: Any, has_artifact: Any) -> None:
        self.set_status(status if status in FINAL_TOOL_STATUSES else status or "success")
        self.duration_ms = duration_ms
        self.result = pretty(content)
        self.has_artifact = bool(has_artifact)

    def ask_approval(self, allow: dict | None) -> None:
        self.set_status("awaiting_approval")
        self.result = ""
        self.approval = allow or {}


@dataclass
class Shown:
    id: Any
    role: str
    text: str = ""
    status: str = "complete"
    reasoning: str = ""
    note: str | None = None
    cards: list[str] = field(default_factory=list)

    def set_status(self, status: str | None) -> None:
        self.status = status or "complete"
        if status == "cancelled":
            self.note = "stopped"
        elif status == "error":
            self.note = "The answer ended with an error."


class ThreadView:
    def __init__(self) -> None:
        self.last_seq: int | None = None
        self.messages: list[Shown] = []
        self.cards: dict[str, Card] = {}
        self.notice: str | None = None
        self.notes: list[str] = []

    # --- app.js: what goes where, in the order of the numbers ---------------------------------------

    def handle(self, event: dict) -> None:
        if event["type"] == "thread.snapshot":
            self.reset(event)
            return
        if "seq" not in event:
            return  # not an event of the thread's history (the person's thread list)
        if self.last_seq is not None and event["seq"] <= self.last_seq:
            return
        assert self.last_seq is None or event["seq"] == self.last_seq + 1, (self.last_seq, event)
        self.last_seq = event["seq"]
        if event["type"] == "run.note":
            self.notes.append(event["text"])
        elif event["type"] == "thread.rewound":
            pass  # thread.branch_changed, which follows, says it all (static/chat/app.js)
        elif event["type"] == "thread.branch_changed":
            self.branch_changed(event)
        else:
            self.apply(event)

    def reset(self, snapshot: dict) -> None:
        self.last_seq = snapshot["seq"]
        self.messages, self.cards = [], {}
        for message in snapshot["messages"]:
            self.build(message)
        self.notice = notice_of(snapshot["run"])
        self.notes = list((snapshot["run"] or {}).get("notes") or [])

    def branch_changed(self, event: dict) -> None:
        """versions.js applyBranchChanged: the removed messages leave, the new branch's are built after the rest."""
        for removed in event.get("removed") or []:
            gone = [m for m in self.messages if m.id == removed]
            for message in gone:
                self.messages.remove(message)
                for card in message.cards:
                    self.cards.pop(card, None)
        for message in event.get("messages") or []:
            if self.find(message["id"]) is None:
                self.build(message)
        self.notice = None

    # --- thread.js ------------------------------------------------------------------------------------

    def build(self, m: dict) -> None:
        shown = Shown(m["id"], m["role"], m.get("content") or "")
        shown.set_status(m.get("status") or "complete")
        if isinstance(m.get("reasoning"), str):
            shown.reasoning = m["reasoning"]
        if m.get("finish_reason") == "length":
            shown.note = "Cut off by the model's output limit."
        self.messages.append(shown)
        for call in m.get("tool_calls") or []:
            card = self.add_card(shown, call["id"], call["name"], call.get("call_id", ""), call.get("status"))
            if call.get("args") is not None:
                card.args = pretty(call["args"])
            if call.get("original_args") is not None:
                card.edited_from = pretty(call["original_args"])
            if call.get("decision"):
                d = call["decision"]
                card.decision = decision_text(d["decision"], d.get("by") or "", d.get("message") or "")
            if call.get("status") in FINAL_TOOL_STATUSES:
                card.complete(call["status"], call.get("content"), call.get("duration_ms"), call.get("has_artifact"))
            elif call.get("status") == "awaiting_approval":
                card.ask_approval(call.get("allow"))

    def add_card(self, shown: Shown, id_: str, name: str, call_id: str, status: str | None) -> Card:
        card = self.cards[str(id_)] = Card(str(id_), name or "tool", call_id or "", status or "streaming")
        shown.cards.append(str(id_))
        return card

    def find(self, id_: Any) -> Shown | None:
        return next((m for m in self.messages if m.id is not None and str(m.id) == str(id_)), None)

    def message(self, id_: Any) -> Shown:
        found = self.find(id_)
        if found is None:
            found = Shown(id_, "assistant", status="streaming")
            self.messages.append(found)
        return found

    def apply(self, ev: dict) -> None:
        kind = ev["type"]
        if kind == "message.started":
            if self.find(ev["message"]["id"]) is None:
                shown = Shown(ev["message"]["id"], ev["message"].get("role") or "assistant", status="streaming")
                self.messages.append(shown)
        elif kind == "message.delta":
            self.message(ev["message"]).text += ev["text"]
        elif kind == "message.reasoning_delta":
            self.message(ev["message"]).reasoning += ev["text"]
        elif kind == "message.completed":
            shown = self.message(ev["message"])
            if isinstance(ev.get("content"), str):
                shown.text = ev["content"]
            shown.set_status(ev.get("status"))
        elif kind == "tool_call.started":
            call = ev["tool_call"]
            if str(call["id"]) not in self.cards:
                owner = self.message(call["message"]) if "message" in call else self.last_assistant()
                self.add_card(owner, call["id"], call["name"], call.get("call_id", ""), "streaming")
        elif kind.startswith("tool_call."):
            card = self.cards.get(str(ev["tool_call"]))
            if card is not None:
                self.apply_to_card(card, kind, ev)
        elif kind == "run.started":
            self.notice = None
            sent = ev.get("user_message")  # app.js handleSent: a message another tab sent (this copy sends none)
            if isinstance(sent, dict) and self.find(sent["id"]) is None:
                self.build({**sent, "role": "user"})
        elif kind == "run.waiting":
            self.notice = "waiting"
        elif kind == "run.completed":
            self.finish_streaming("complete")
            self.notice = "max_steps" if ev.get("reason") == "max_steps" else None
        elif kind == "run.failed":
            self.finish_streaming("error")
            self.notice = "failed"
        elif kind == "run.cancelled":
            self.finish_streaming("cancelled")
            self.notice = "cancelled"

    def apply_to_card(self, card: Card, kind: str, ev: dict) -> None:
        if kind == "tool_call.args_delta":
            card.args += ev["text"]
        elif kind == "tool_call.requested":
            card.args = pretty(ev["args"])
            card.set_status("requested")
        elif kind == "tool_call.awaiting_approval":
            card.ask_approval(ev.get("allow"))
        elif kind == "tool_call.running":
            card.set_status("running")
        elif kind == "tool_call.completed":
            card.complete(ev["status"], ev.get("content"), ev.get("duration_ms"), ev.get("has_artifact"))
        elif kind == "tool_call.decided":
            card.approval = None
            if ev.get("args") is not None:
                card.args = pretty(ev["args"])
            if ev["decision"] == "edit" and ev.get("original_args") is not None:
                card.edited_from = pretty(ev["original_args"])
            card.decision = decision_text(ev["decision"], ev.get("by") or "", ev.get("message") or "")
            if card.status == "awaiting_approval":
                card.set_status(DECIDED_STATUS.get(ev["decision"], "rejected"))

    def finish_streaming(self, status: str) -> None:
        for shown in self.messages:
            if shown.status == "streaming":
                if status == "cancelled":
                    shown.set_status("cancelled")
                else:
                    shown.status = status

    def last_assistant(self) -> Shown:
        assistants = [m for m in self.messages if m.role == "assistant"]
        return assistants[-1] if assistants else self.message(None)

    # --- for comparing ---------------------------------------------------------------------------------

    def answers(self) -> list[tuple]:
        """The assistant messages as shown, each with its cards: what two tabs of one thread must agree on."""
        return [
            (m.id, m.text, m.status, m.reasoning, m.note, [astuple(self.cards[card]) for card in m.cards])
            for m in self.messages
            if m.role == "assistant"
        ]


def notice_of(run: dict | None) -> str | None:
    """notices.js fromRun."""
    if not run:
        return None
    if run["status"] == "completed":
        return "max_steps" if run.get("reason") == "max_steps" else None
    return {"waiting": "waiting", "failed": "failed", "interrupted": "interrupted", "cancelled": "cancelled"}.get(
        run["status"]
    )


def shown_after(texts_or_events: list, view: ThreadView | None = None) -> ThreadView:
    """A view that applied these events (dicts or the JSON texts the server sends), in order."""
    view = view or ThreadView()
    for item in texts_or_events:
        view.handle(json.loads(item) if isinstance(item, str) else item)
    return view
