"""Tools an agent can call: `from tools import tool` turns a Python function into one."""

from .base import Tool, tool
from .context import KeyValueStore, MemoryStore, MessageSearch, ToolContext, ToolUser
from .injection import (
    InjectedArg,
    InjectedAttachments,
    InjectedContext,
    InjectedStore,
    InjectedThreadId,
    InjectedToolCallId,
    InjectedUser,
)

__all__ = [
    "InjectedArg",
    "InjectedAttachments",
    "InjectedContext",
    "InjectedStore",
    "InjectedThreadId",
    "InjectedToolCallId",
    "InjectedUser",
    "KeyValueStore",
    "MemoryStore",
    "MessageSearch",
    "Tool",
    "ToolContext",
    "ToolUser",
    "tool",
]
