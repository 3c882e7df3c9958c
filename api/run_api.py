"""The run API, /api/v1/ (docs/api.md): everything a chat tab can do, for a program holding an API key.

Built with django-ninja: the request bodies are pydantic schemas (api/schemas.py), the views are async (a run is
started, decided or followed without holding a thread), and the OpenAPI schema at /api/v1/openapi.json is generated
from the same declarations, so it cannot drift from what the views take.

Who asks: `Authorization: Bearer <key>` only (api/auth.py). A session cookie is never looked at, so a page's sign-in
cannot stand in for a key, and no CSRF token is asked for: ninja's views are CSRF-exempt, and a request a browser
could be made to send carries no key. Every refusal is `{"error": {"code", "message"}}` with a 4xx status: the
run layer's refusals are worded by chat/error_codes.py, the websocket's one table, and their status comes from
HTTP_STATUS below, by code."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import HttpError
from ninja.errors import ValidationError as RequestInvalid
from ninja.security import HttpBearer

from chat.error_codes import REFUSED, client_error
from chat.frames import ClientError
from chat.runs import SignedOut
from delivery import REDIS_GONE

from .auth import KeyRefused, authenticate
from .errors import HTTP_STATUS, run_api_error
from .models import ApiKey

db = database_sync_to_async

REDIS_UNAVAILABLE = "The server cannot reach Redis right now; try again in a moment."


class ApiError(Exception):
    """A refusal with its `error` code and message; its status is HTTP_STATUS's for the code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        return HTTP_STATUS.get(self.code, 400)

    @classmethod
    def of(cls, error: Exception, frame: dict[str, Any]) -> ApiError:
        """The refusal of a run-layer exception (one of chat/error_codes.py's REFUSED), worded as the websocket words
        it for the frame this request stands for (`frame`: its `type` and fields)."""
        told = client_error(error, frame)
        return cls(told.code, told.message)


class KeyBearer(HttpBearer):
    """The request's API key (request.auth, its person at `.user`), or 401 saying why there is none. HttpBearer for
    the OpenAPI schema's security scheme; the header is read by api/auth.py, as the /v1 endpoint reads it.

    Then, before any body is parsed: a body must be JSON and say so (415 otherwise), so that a form post or a
    mislabelled upload is refused rather than read as JSON."""

    def __call__(self, request: HttpRequest) -> ApiKey:
        try:
            key = authenticate(request)
        except KeyRefused as refused:
            raise ApiError("unauthorized", str(refused)) from None
        if request.body and request.content_type != "application/json":
            raise ApiError("unsupported_media_type", "Send the body as JSON, with Content-Type: application/json.")
        return key

    def authenticate(self, request: HttpRequest, token: str) -> ApiKey:  # pragma: no cover (__call__ reads it)
        return authenticate(request)


api = NinjaAPI(
    title="agentweb run API",
    version="1",
    description="Threads, runs, decisions and a thread's events as Server-Sent Events. See docs/api.md.",
    urls_namespace="run_api",
    auth=KeyBearer(),
    docs_url=None,  # the docs page would load scripts the site's Content-Security-Policy refuses; the schema is enough
)


def error_response(request: HttpRequest, code: str, message: str, status: int | None = None) -> HttpResponse:
    return api.create_response(request, run_api_error(code, message), status=status or HTTP_STATUS.get(code, 400))


@api.exception_handler(ApiError)
def _refused(request, error: ApiError):
    return error_response(request, error.code, error.message, error.status)


@api.exception_handler(ClientError)
def _client_error(request, error: ClientError):
    return error_response(request, error.code, error.message)


@api.exception_handler(RequestInvalid)
def _invalid(request, error: RequestInvalid):
    problems = []
    for problem in error.errors[:10]:
        where = ".".join(str(part) for part in problem.get("loc", ()) if part not in ("body", "payload"))
        problems.append(f"{where}: {problem.get('msg', 'invalid')}" if where else problem.get("msg", "invalid"))
    return error_response(request, "bad_request", "; ".join(problems) or "The request is not valid.")


@api.exception_handler(HttpError)
def _http_error(request, error: HttpError):
    codes = {401: "unauthorized", 404: "not_found", 405: "not_allowed", 413: "payload_too_large"}
    return error_response(request, codes.get(error.status_code, "bad_request"), str(error), error.status_code)


@api.exception_handler(Http404)
def _not_found(request, error: Http404):
    return error_response(request, "not_found", "Not found.")


@api.exception_handler(SignedOut)
def _key_gone(request, error: SignedOut):
    # The key was revoked or expired, or its person deactivated, between the request's check and the turn's.
    return error_response(request, "unauthorized", "This API key is no longer valid.")


for _gone in REDIS_GONE:
    api.add_exception_handler(_gone, lambda request, error: error_response(request, "unavailable", REDIS_UNAVAILABLE))


def refusals_of(frame: dict[str, Any]):
    """Around a call into the run layer: its refusals (REFUSED) become ApiError, worded for `frame`."""
    return _Refusals(frame)


class _Refusals:
    def __init__(self, frame: dict[str, Any]):
        self.frame = frame

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if error is not None and isinstance(error, REFUSED):
            raise ApiError.of(error, self.frame) from None
        return False


# The endpoints, which register themselves on `api` (and import it from here).
from . import run_events, run_views  # noqa: E402, F401
