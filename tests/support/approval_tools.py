"""Tools for the browser approval tests, loaded into the app subprocess with AGENTWEB_TOOL_MODULES."""

from tools import tool


@tool(requires_approval=True)
def send_email(to: str, subject: str) -> str:
    """Send an email (a test tool that needs approval; it sends nothing).

    Args:
        to: The address to send to.
        subject: The subject line.
    """
    return f"sent to {to}: {subject}"
