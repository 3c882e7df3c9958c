"""A tool module as a user would write one, loaded by dotted path in the loader and registry tests."""

from tools import tool
from tools.builtin.calculator import calculator  # noqa: F401 - a re-imported built-in must not clash

HELPER_CONSTANT = 3  # not a tool: ignored by the loader


@tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count.
    """
    return len(text.split())


@tool(name="shout")
async def make_loud(text: str) -> str:
    """Repeat a text in capitals."""
    return text.upper()


loud = make_loud  # the same tool under a second name is registered once


def not_a_tool(text: str) -> str:
    return text
