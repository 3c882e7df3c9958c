"""The one table of what a client is told when the run layer refuses a frame (chat/error_codes.py)."""

import re
from pathlib import Path

import pytest

from chat import runs, store
from chat.access import NotFound
from chat.error_codes import ERROR_CODES, client_error

PROTOCOL = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def documented_codes() -> set[str]:
    """The `error.code` values docs/protocol.md's "Errors" section names."""
    text = PROTOCOL.read_text()
    errors = text[text.index("### Errors") :]
    errors = errors[: errors.index("\n#", 1)]
    return set(re.findall(r"`([a-z_]+)`", errors))


def test_every_code_the_table_gives_is_documented():
    codes = {refusal.code for refusal in ERROR_CODES.values() if refusal.code is not None}

    assert codes
    assert codes - documented_codes() == set()


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"type": "thread.subscribe"}, "No such thread."),
        ({"type": "tool_call.decide"}, "No such tool call."),
        ({"type": "message.edit"}, "No such thread or message."),
    ],
)
def test_a_thread_or_call_not_found_is_told_as_the_frame_names_it(frame, message):
    error = client_error(NotFound(), frame)

    assert (error.code, error.message) == ("not_found", message)


def test_a_refusal_that_names_its_own_code_keeps_it():
    error = client_error(runs.InputRefused("invalid_input", "The answer does not fit the form: email"), {})

    assert (error.code, error.message) == ("invalid_input", "The answer does not fit the form: email")


def test_a_running_thread_is_told_per_frame():
    assert client_error(store.RunActive(), {"type": "run.retry"}).message.startswith("This thread is still answering")
    assert client_error(store.RunActive(), {"type": "thread.set_tool"}).message.startswith("Tools can be turned on")
