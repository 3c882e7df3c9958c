"""The OpenAI-compatible endpoint, /v1/ (docs/api.md): `GET /v1/models`, `POST /v1/chat/completions`."""

from __future__ import annotations

import json

from channels.db import database_sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from chat.runs.detached import detached

from .auth import KeyRefused, authenticate
from .openai_format import CompletionRequest, Refused, chunk, completion, completion_id, error_event, parse_request
from .openai_run import Done, Failed, Text, Waiting, answer, model_list, open_run
from .responses import Releasing, SettledLater
from .stream_cap import TOO_MANY_STREAMS, TOO_MANY_STREAMS_MESSAGE, at_cap, counted

#: Told of every stream so that a proxy does not hold it back.
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def error_response(refused: Refused) -> JsonResponse:
    return JsonResponse(refused.body(), status=refused.status)


def key_refused(error: KeyRefused) -> JsonResponse:
    return error_response(Refused(401, str(error), code="invalid_api_key", kind="invalid_request_error"))


@csrf_exempt
async def models(request: HttpRequest) -> HttpResponse:
    if request.method != "GET":
        return error_response(Refused(405, "Use GET.", code="method_not_allowed"))
    try:
        key = await database_sync_to_async(authenticate)(request)
    except KeyRefused as error:
        return key_refused(error)
    entries = await database_sync_to_async(model_list)(key.user)
    return JsonResponse({"object": "list", "data": entries})


@csrf_exempt
async def chat_completions(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return error_response(Refused(405, "Use POST.", code="method_not_allowed"))
    try:
        key = await database_sync_to_async(authenticate)(request)
    except KeyRefused as error:
        return key_refused(error)
    try:
        asked = parse_request(
            request.body, request.META.get("CONTENT_TYPE", ""), max_messages=settings.AGENTWEB_API_MAX_MESSAGES
        )
        if asked.stream and at_cap(key.user_id):  # a stream counts as one of the person's sockets, as on /api/v1
            raise Refused(429, TOO_MANY_STREAMS_MESSAGE, code=TOO_MANY_STREAMS)
        thread, run_id, following = await detached(open_run(key, asked))
    except Refused as refused:
        return error_response(refused)
    ident = completion_id()
    # Each response lets go of the thread's group when closed, sent or not (api/responses.py).
    if asked.stream:
        body = counted(key.user_id, streamed(ident, asked, answer(following, thread, run_id), following))
        response = Releasing(body, content_type="text/event-stream", headers=STREAM_HEADERS, release=following.close)
    else:
        response = SettledLater(
            lambda: whole(ident, asked, answer(following, thread, run_id), following), release=following.close
        )
    response["X-Agentweb-Thread"] = str(thread.pk)
    return response


async def streamed(ident: str, asked: CompletionRequest, pieces, following):
    """The answer as `chat.completion.chunk`s: SSE comments keep the stream open while nothing comes (a tool call
    waiting for approval says so), an error ends it in OpenAI's error shape, `data: [DONE]` always last."""
    try:
        yield chunk(ident, asked.model, delta={"role": "assistant", "content": ""})
        async for piece in pieces:
            if isinstance(piece, Text):
                yield chunk(ident, asked.model, delta={"content": piece.text})
            elif isinstance(piece, Waiting):
                yield f": waiting for approval: {', '.join(piece.tools)}\n\n" if piece.tools else ": keep-alive\n\n"
            elif isinstance(piece, Done):
                yield chunk(ident, asked.model, finish=piece.finish)
                if asked.include_usage:
                    yield chunk(ident, asked.model, usage=piece.usage, choices=False)
            elif isinstance(piece, Failed):
                yield error_event(piece.refused)
        yield "data: [DONE]\n\n"
    finally:
        await pieces.aclose()
        await following.close()


async def whole(ident: str, asked: CompletionRequest, pieces, following) -> tuple[int, bytes]:
    """The whole answer as one `chat.completion` (its status and body), once the run ends."""
    texts: list[str] = []
    try:
        async for piece in pieces:
            if isinstance(piece, Text):
                texts.append(piece.text)
            elif isinstance(piece, Done):
                return 200, dumps(completion(ident, asked.model, "".join(texts), piece.finish, piece.usage))
            elif isinstance(piece, Failed):
                return piece.refused.status, dumps(piece.refused.body())
        raise AssertionError("a run's events ended without its end")  # answer() returns only after Done or Failed
    finally:
        await pieces.aclose()
        await following.close()


def dumps(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode()


urlpatterns = [
    path("models", models, name="openai_models"),
    path("chat/completions", chat_completions, name="openai_chat_completions"),
]
