"""Upload, read and remove a person's attachments over HTTP. Owner-only: another person's id and an unknown one get the
same 404. A file is served as a download (Content-Disposition: attachment), except the image types a browser shows as
a picture (PNG, JPEG, GIF, WebP; never SVG); with nosniff and a policy that runs nothing, so no upload is ever a page.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, JsonResponse
from django.urls import path
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from . import services
from .models import Attachment


@login_required
@require_POST
def upload(request: HttpRequest) -> JsonResponse:
    upload = request.FILES.get("file")
    if upload is None:
        return JsonResponse({"error": _("No file was sent (a multipart form with a 'file' field).")}, status=400)
    name = services.clean_name(upload.name)
    limit = settings.AGENTWEB_ATTACHMENT_MAX_BYTES
    if upload.size > limit:  # before reading it
        return JsonResponse({"error": services.too_big(name, upload.size, limit)}, status=413)
    try:
        row = services.store_upload(owner=request.user, name=upload.name, data=upload.read(limit + 1))
    except services.Refused as refused:
        return JsonResponse({"error": str(refused)}, status=400)
    return JsonResponse({**services.summary(row), "url": file_url(row)}, status=201)


def file_url(row: Attachment) -> str:
    return f"/attachments/{row.pk}/"


def _owned(request: HttpRequest, attachment_id) -> Attachment:
    row = Attachment.objects.filter(pk=attachment_id, owner=request.user).first()
    if row is None:
        raise Http404("No such attachment.")
    return row


@login_required
@require_GET
def read(request: HttpRequest, attachment_id) -> FileResponse:
    return file_response(_owned(request, attachment_id))


def file_response(row: Attachment) -> FileResponse:
    try:
        handle = default_storage.open(row.path, "rb")
    except (FileNotFoundError, OSError):
        raise Http404("The file is gone.") from None
    inline = row.content_type in services.IMAGE_TYPES
    response = FileResponse(handle, as_attachment=not inline, filename=row.name, content_type=row.content_type)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=3600"
    return response


@login_required
@require_POST
def remove(request: HttpRequest, attachment_id) -> JsonResponse:
    """A chip's ✕: an unsent upload only (a sent one goes with its message or thread)."""
    row = _owned(request, attachment_id)
    if row.message_id is not None:
        return JsonResponse(
            {"error": _("This file was sent with a message; delete the chat to remove it.")}, status=400
        )
    row.delete()
    return JsonResponse({"ok": True})


app_name = "attachments"
urlpatterns = [
    path("", upload, name="upload"),
    path("<uuid:attachment_id>/", read, name="read"),
    path("<uuid:attachment_id>/remove", remove, name="remove"),
]
