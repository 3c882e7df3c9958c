"""What a client is told when the run layer refuses a frame: one table, exception type → `error` code and message
(docs/protocol.md, "Errors"), used for every frame of the websocket (chat/consumers.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.utils.translation import gettext_noop

from attachments.services import AttachmentNotFound, ImagesNotSupported
from languages.phrases import Phrase
from tools.groups import NotPermitted

from . import rewind, runs, store
from .access import NotFound
from .frames import ClientError
from .usage import BudgetExhausted

# Marked, not translated here: the consumer says each message in its page's language (languages/sockets.py).
STILL_ANSWERING = gettext_noop("This thread is still answering; wait for it or stop it.")


@dataclass(frozen=True)
class Refusal:
    #: The `error` code; None when the exception names its own (runs.InputRefused: `code` and `message`).
    code: str | None
    #: The message, from the exception and the frame it refused.
    message: Callable[[Exception, dict], str]


def _text(text: str) -> Callable[[Exception, dict], str]:
    return lambda error, frame: text


def _said(error: Exception, frame: dict) -> str:
    """The exception's own message: a Phrase as it is (str() would make it plain English)."""
    said = error.args[0] if len(error.args) == 1 else None
    return said if isinstance(said, str) else str(error)


def _by_frame(texts: dict[str, str], otherwise: str) -> Callable[[Exception, dict], str]:
    """A message that depends on the frame refused (its `type`)."""
    return lambda error, frame: texts.get(frame.get("type"), otherwise)


def unknown_model_text(model_id: str) -> str:
    return Phrase(
        gettext_noop("model: %(model)s is not a model you can pick (unknown or disabled); reload the page."),
        model=repr(model_id[:100]),
    )


_BRANCH_CHANGES = ("run.regenerate", "message.edit", "message.edit_last", "message.switch_version")

ERROR_CODES: dict[type[Exception], Refusal] = {
    NotFound: Refusal(
        "not_found",
        _by_frame(
            {
                "tool_call.decide": gettext_noop("No such tool call."),
                **dict.fromkeys(_BRANCH_CHANGES, gettext_noop("No such thread or message.")),
            },
            gettext_noop("No such thread."),
        ),
    ),
    runs.UnknownModel: Refusal("not_found", lambda error, frame: unknown_model_text(frame["model"])),
    runs.UnknownAgent: Refusal(
        "not_found",
        lambda error, frame: Phrase(
            gettext_noop("agent: %(agent)s is not an agent you can pick; reload the page."),
            agent=repr(frame["agent"][:100]),
        ),
    ),
    AttachmentNotFound: Refusal(
        "not_found",
        _text(gettext_noop("attachments: a file is not one of your unsent uploads (sent already, or removed).")),
    ),
    store.RunActive: Refusal(
        "run_active",
        _by_frame(
            {"thread.set_tool": gettext_noop("Tools can be turned on or off once this answer is done (or stopped).")},
            STILL_ANSWERING,
        ),
    ),
    ImagesNotSupported: Refusal("images_not_supported", _said),
    store.UnknownTools: Refusal("unknown_tool", _said),
    BudgetExhausted: Refusal("budget_exhausted", _said),
    # The thread's agent or model is not one the person's groups allow (any more): tools/groups.py.
    NotPermitted: Refusal("forbidden", _said),
    store.AlreadyDecided: Refusal(
        "already_decided", _text(gettext_noop("This tool call was already decided or is no longer waiting."))
    ),
    store.DecisionNotOffered: Refusal(
        "bad_frame",
        lambda error, frame: Phrase(
            gettext_noop("decision: '%(decision)s' is not offered for this call."), decision=frame["decision"]
        ),
    ),
    runs.NotAvailable: Refusal("not_allowed", _said),
    runs.InvalidArguments: Refusal(
        "invalid_args",
        # The problems are the schema checker's, in English.
        lambda error, frame: Phrase(
            gettext_noop("The edited arguments do not fit the tool: %(problems)s"), problems=str(error)
        ),
    ),
    store.NothingToFollowUp: Refusal(
        "not_allowed",
        _by_frame(
            {"run.retry": gettext_noop("Only a failed, interrupted or stopped run can be retried.")},
            gettext_noop("Only a run that stopped at its step limit can be continued."),
        ),
    ),
    rewind.NothingToRewind: Refusal(
        "not_allowed", _text(gettext_noop("This thread has no message of yours to answer again."))
    ),
    runs.InputRefused: Refusal(None, lambda error, frame: error.message),
}

#: The exceptions the table maps, for an `except` clause.
REFUSED = tuple(ERROR_CODES)


def client_error(error: Exception, frame: dict) -> ClientError:
    """The `error` the client gets for `error`, raised by the run layer while it handled `frame` (one of REFUSED)."""
    refusal = next(ERROR_CODES[kind] for kind in type(error).__mro__ if kind in ERROR_CODES)
    return ClientError(refusal.code or error.code, refusal.message(error, frame))
