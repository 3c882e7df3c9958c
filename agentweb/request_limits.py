"""How big a request's body may be, by route, and how long its head and body may take to arrive.

Read by the HTTP channel (agentweb/http_channel.py), which refuses a body over its route's limit as soon as its
declared length (Content-Length) or its running length (chunked) passes it, before anything is buffered or anyone
is authenticated; and by the ASGI handler (agentweb/http_handler.py), which holds to the same limits under a server
that is not ours (`manage.py runserver`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agentweb.sizes import human_size

#: What a multipart upload's body carries besides the file itself (its boundaries, the part's headers, the CSRF
#: field): a file of exactly the attachment limit still arrives, and the view then says what is wrong with it.
MULTIPART_ALLOWANCE = 64 * 1024


@dataclass(frozen=True)
class RequestLimits:
    body_bytes: int  # every route but the upload's
    upload_bytes: int  # the upload route's body: one file and its envelope
    upload_path: str
    file_bytes: int  # one attachment's limit, as the refusal names it
    timeout_s: float  # the request line and headers, and the start of a body, must arrive within it
    body_min_rate: int  # bytes per second a body must keep up after that (each such many give a second more)
    hook_bytes: int = 256 * 1024  # a webhook delivery's body (POST /hooks/<id>): smaller than the others
    hook_prefix: str = "/hooks/"
    #: (path prefix, the body of a refusal there): the APIs answer in their own error shapes (api/errors.py).
    shapes: tuple[tuple[str, Callable[[str], dict[str, Any]]], ...] = ()

    @classmethod
    def from_settings(cls) -> RequestLimits:
        from django.conf import settings
        from django.urls import reverse
        from django.utils.module_loading import import_string

        file_bytes = settings.AGENTWEB_ATTACHMENT_MAX_BYTES
        return cls(
            body_bytes=settings.AGENTWEB_MAX_REQUEST_BODY_BYTES,
            upload_bytes=file_bytes + MULTIPART_ALLOWANCE,
            upload_path=reverse("attachments:upload"),
            file_bytes=file_bytes,
            timeout_s=settings.AGENTWEB_REQUEST_TIMEOUT,
            body_min_rate=settings.AGENTWEB_REQUEST_BODY_MIN_RATE,
            hook_bytes=settings.AGENTWEB_HOOK_MAX_BODY_BYTES,
            hook_prefix=reverse("hooks:list"),
            # Named in settings, as Django names middleware: the project package does not import its apps.
            shapes=tuple(shape for name in settings.AGENTWEB_TOO_LARGE_SHAPES for shape in import_string(name)()),
        )

    def is_upload(self, target: str) -> bool:
        """Whether a request target (`/attachments/?x`, or the absolute form) is the upload route; any other spelling
        gets the smaller limit."""
        return urlsplit(target).path == self.upload_path

    def is_hook(self, target: str) -> bool:
        """Whether a request target is under the triggers' prefix (their deliveries, and their pages' small forms)."""
        return urlsplit(target).path.startswith(self.hook_prefix)

    def body_limit(self, target: str) -> int:
        if self.is_upload(target):
            return self.upload_bytes
        return self.hook_bytes if self.is_hook(target) else self.body_bytes

    def refusal(self, target: str) -> str:
        """What a person is told when a body is over its route's limit."""
        if self.is_upload(target):
            return f"The file is too big: a file may be at most {human_size(self.file_bytes)}."
        return f"The request is too big: at most {human_size(self.body_limit(target))} may be sent here."

    def refusal_body(self, target: str) -> dict[str, Any]:
        """The JSON body of a 413 for `target`: an API's own error shape under its prefix, else `{"error": text}`."""
        message = self.refusal(target)
        path = urlsplit(target).path
        for prefix, shape in self.shapes:
            if path.startswith(prefix):
                return shape(message)
        return {"error": message}
