"""The one loop every HTTP model provider reads an answer's stream with, and what the three wire formats share.

An answer's body is a sequence of frames (server-sent events from OpenAI's and Anthropic's APIs, JSON lines from
Ollama's), each saying a little more of it, up to the wire format's own end of the answer (`[DONE]` or a
finish_reason, `message_stop`, `done: true`). `read_stream` is the loop: it cuts the bytes into frames as they
arrive, turns each frame into neutral events (providers/types.py), stops at the answer's end, fails a body that sent
nothing or closed before that end, and last yields what the end settles (calls still open, the usage, the finish
reason), failing an answer whose end says the model's context is full.

A provider supplies only its wire format, as a `WireReader` made for each response (its `read_events` returns
`read_stream(ItsReader(self), chunks)`): how the body is cut (`frames`), what one frame means (`feed`), when the
answer has ended (`ended`, `complete`, `end_marker`), what the end adds (`finish`) and which ends are errors
(`check_finish`). Sending the request (the status line, timeouts, retries, error texts with secrets kept out) is
providers/http_provider.py's.

This runs for every token of every answer: the loop itself allocates and awaits nothing per frame, and a wire
format's fast path for frames that only carry text (`WireReader.text`) skips even their JSON.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, Protocol

from .http_provider import HTTPProvider, ModelServerError, error_text
from .types import Finish, StreamEvent, TextDelta, Usage

#: The error of a call the model was still writing when it hit its output limit: it is never executed.
OUT_OF_TOKENS = "The model ran out of output tokens while writing this call"
#: The error of a call that names no function: there is nothing to run.
NO_FUNCTION_NAME = "The model sent a tool call without a function name."


class FrameDecoder(Protocol):
    """Cuts a body into frames however its bytes arrive (providers/sse.py, providers/ndjson.py)."""

    def feed(self, data: bytes) -> list[Any]: ...

    def close(self) -> list[Any]:
        """The body ended: a last frame it did not finish."""
        ...


class WireReader:
    """One response read in a provider's wire format: what `read_stream` asks of it (see the module docstring)."""

    #: The wire format's end of an answer, named by the error for a body that closed before it.
    end_marker = "the end of the answer"
    #: What one frame is called in an error: "stream event", "line".
    frame_name = "stream event"
    #: The answer's last frame has come: nothing after it is read (what is left of the body is only drained).
    ended = False
    #: The fast path, or None: the text of a frame that carries only text and is read without its JSON, or None
    #: for a frame that goes the full way (`feed`). What it returns must be what `feed` would have made of it.
    text: Callable[[Any], str | None] | None = None

    def __init__(self, provider: HTTPProvider) -> None:
        self.provider = provider
        self.ended = False  # on the instance: the loop reads it after every frame, and that lookup is the quicker

    def frames(self) -> FrameDecoder:
        raise NotImplementedError

    def feed(self, frame: Any) -> Iterable[StreamEvent]:
        """The events of one frame; set `ended` at the answer's last one. Raise `error(...)` for a broken stream."""
        raise NotImplementedError

    @property
    def complete(self) -> bool:
        """The answer is whole: its end marker came (or what the wire format also takes for one)."""
        return self.ended

    def finish(self) -> list[StreamEvent]:
        """The stream ended whole: close every call still open, then the usage (when counted), then the Finish."""
        raise NotImplementedError

    async def check_finish(self, finish: Finish, usage: Usage) -> None:
        """Raise for an end that is an error the person can act on (the model's context is full); by default none is."""

    def nothing_sent(self) -> ModelServerError:
        """The error for a body that ended before its first byte."""
        return self.error(f"The model server at {self.provider.base_url} ended the response without sending anything.")

    # --- helpers for a wire format's frames -------------------------------------------------------

    def error(self, message: str, **details: Any) -> ModelServerError:
        return self.provider.error(message, **details)

    def shown(self, frame_text: str) -> str:
        """What an error quotes of a frame's text."""
        return frame_text

    def json_object(self, frame_text: str) -> dict[str, Any]:
        """A frame's JSON object; anything else is an error that quotes it."""
        try:
            payload = json.loads(frame_text)
        except ValueError:
            raise self.error(
                f"The model server at {self.provider.base_url} sent a {self.frame_name} that is not JSON:"
                f" {self.provider.quote(self.shown(frame_text))!r}"
            ) from None
        if not isinstance(payload, dict):
            raise self.error(
                f"The model server at {self.provider.base_url} sent an unexpected {self.frame_name}:"
                f" {self.provider.quote(self.shown(frame_text))!r}"
            )
        return payload

    def reported_error(self, payload: dict[str, Any], frame_text: str, **details: Any) -> ModelServerError:
        """The error a frame reports (an error object in the stream, after a 200)."""
        message = self.provider.quote(error_text(payload) or self.shown(frame_text))
        return self.error(
            f"The model server at {self.provider.base_url} reported an error mid-stream: {message}", **details
        )


async def read_stream(reader: WireReader, chunks: AsyncIterator[bytes]) -> AsyncIterator[StreamEvent]:
    """The answer's events from the body's bytes, as they arrive (see the module docstring)."""
    frames = reader.frames()
    fast = reader.text
    received = False
    async for data in chunks:
        received = True
        for frame in frames.feed(data):
            if fast is not None:
                text = fast(frame)
                if text is not None:
                    if text:
                        yield TextDelta(text)
                    continue
            for event in reader.feed(frame):
                yield event
            if reader.ended:
                break
        if reader.ended:
            break
    else:
        for frame in frames.close():
            for event in reader.feed(frame):
                yield event
    if not received:
        raise reader.nothing_sent()
    if not reader.complete:
        # A body that closes before the answer's end was cut off, however cleanly the connection closed.
        raise reader.provider.ended_early(reader.end_marker)
    counted = Usage()  # the server's counts, when it sends them
    for event in reader.finish():
        if isinstance(event, Usage):
            counted = event
        elif isinstance(event, Finish):
            await reader.check_finish(event, counted)
        yield event


def decode_args(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """A tool call's argument text as an object, or None and why not."""
    if not raw.strip():
        return {}, None  # a call without arguments: some servers send "", not "{}"
    try:
        args = json.loads(raw)
    except ValueError as exc:
        return None, f"Arguments are not valid JSON: {exc}"
    if isinstance(args, str):
        # Double-encoded arguments ("\"{\\\"a\\\": 1}\""), seen from some fine-tunes: unwrap one level.
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    if not isinstance(args, dict):
        return None, f"Arguments are not valid JSON: expected an object, got {type(args).__name__}"
    return args, None
