"""Tool calling as text, for models without native tool calling (hermes, xml), `<think>` separation,
and catching Hermes calls that leak into a native stream. Plain Python: no Django here.

docs/text-protocols.md describes the formats and the choices made.
"""

from .base import StreamParser
from .hermes import HermesParser
from .prompts import PROTOCOLS, render_messages, system_prompt
from .provider import NativeLeakGuardProvider, TextProtocolProvider, make_parser, parse_text_stream
from .think import ThinkParser
from .xml import XmlParser

__all__ = [
    "PROTOCOLS",
    "HermesParser",
    "NativeLeakGuardProvider",
    "StreamParser",
    "TextProtocolProvider",
    "ThinkParser",
    "XmlParser",
    "make_parser",
    "parse_text_stream",
    "render_messages",
    "system_prompt",
]
