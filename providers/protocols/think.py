"""`<think>…</think>` separated from the answer, for streams that carry no tool-call markup.

The protocol parsers do the same on their own text; this one is for native tool calling, where models
served without a reasoning parser (llama.cpp without --reasoning-format, vLLM without
--reasoning-parser, …) put their reasoning into the content.
"""

from __future__ import annotations

from .base import StreamParser


class ThinkParser(StreamParser):
    """Text → TextDelta and ReasoningDelta. `reasoning_open=True` for models whose chat template opens
    `<think>` in the prompt (DeepSeek-R1, QwQ): everything up to `</think>` is reasoning."""

    def __init__(self, *, reasoning_open: bool = False) -> None:
        super().__init__(reasoning_open=reasoning_open, split_think=True)
