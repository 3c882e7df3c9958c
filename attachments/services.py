"""Uploads: what a file is (by its content), the limits, storing it, claiming it for a message, and what a model and
a tool get of it. Synchronous: async code calls these through database_sync_to_async."""

from __future__ import annotations

import base64
import logging
import os
import re
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from agentweb.locks import lock_person
from agentweb.sizes import human_size
from languages.phrases import Phrase

from .models import Attachment

log = logging.getLogger("agentweb.attachments")

# The images a vision model takes, by their first bytes: never SVG (a script can hide in it) nor anything a browser
# would render as a page.
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_SOURCE_CODE = (
    "py js mjs ts tsx jsx java kt c h cc cpp hpp cs go rs rb php swift scala sh bash zsh ps1 sql r lua pl hs "
    "ml ex exs erl clj dart css scss vue svelte dockerfile makefile proto graphql diff patch"
)
# Text files by extension, but only when their content is UTF-8 text: the type they are stored and served as.
TEXT_EXTENSIONS = {
    **dict.fromkeys(["txt", "log", "ini", "cfg", "conf", "toml", "yaml", "yml", "env", "tex", "rst"], "text/plain"),
    "md": "text/markdown",
    "markdown": "text/markdown",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "json": "application/json",
    "jsonl": "application/json",
    **dict.fromkeys(_SOURCE_CODE.split(), "text/plain"),
}
ALLOWED = "images (PNG, JPEG, GIF, WebP), PDFs and text files (txt, md, csv, json, source code)"


class Refused(Exception):
    """The upload is not stored; the message is shown in the composer as it is (in the request's language)."""


def too_big(name: str, size: int, limit: int) -> str:
    return _("%(name)s is %(size)s; a file may be at most %(limit)s.") % {
        "name": name,
        "size": human_size(size),
        "limit": human_size(limit),
    }


class AttachmentNotFound(Exception):
    """An id in message.send that is not one of the person's unsent uploads."""


class ImagesNotSupported(Exception):
    """message.send with an image for a model whose configuration says it does not take images."""

    def __init__(self, model_name: str):
        super().__init__(
            Phrase(
                gettext_noop(
                    "%(model)s does not take images (its configuration says so): remove the image, or pick a model "
                    "that takes images."
                ),
                model=model_name,
            )
        )


def clean_name(name: str) -> str:
    """A file name fit to store, show and send in Content-Disposition: no folders, control characters or quotes."""
    name = unicodedata.normalize("NFC", str(name or ""))
    name = re.split(r"[\\/]", name)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = re.sub(r'["<>:|?*]', "_", name).strip().strip(".") or "file"
    if len(name) > 200:
        stem, ext = os.path.splitext(name)
        name = stem[: 200 - len(ext[:20])] + ext[:20]
    return name


def sniff(name: str, data: bytes) -> tuple[str, str, str | None]:
    """(kind, content type, text or None) of a file by its content; Refused when it is none of the allowed ones or
    cannot be read (a broken PDF)."""
    for magic, content_type in _IMAGE_MAGIC:
        if data.startswith(magic):
            return Attachment.Kind.IMAGE, content_type, None
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return Attachment.Kind.IMAGE, "image/webp", None
    if data.startswith(b"%PDF-"):
        return Attachment.Kind.PDF, "application/pdf", pdf_text(name, data)
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else name.lower()
    content_type = TEXT_EXTENSIONS.get(ext)
    if content_type is not None:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise Refused(
                _("%(name)s is not UTF-8 text, so it cannot be read as a .%(ext)s file.") % {"name": name, "ext": ext}
            ) from None
        if "\x00" in text:
            raise Refused(_("%(name)s is not text (it holds binary data).") % {"name": name})
        return Attachment.Kind.TEXT, content_type, text
    raise Refused(
        _("%(name)s: this type of file is not accepted. You can attach %(allowed)s.")
        % {"name": name, "allowed": ALLOWED}
    )


def pdf_text(name: str, data: bytes) -> str:
    """The PDF's text, read in a process of its own within limits (pdf_reader.py); Refused saying why not."""
    from . import pdf_reader

    try:
        return pdf_reader.read_text(data)
    except pdf_reader.PdfNotRead as not_read:
        log.info("Unreadable PDF %r: %s", name, not_read.reason)
        raise Refused(_(PDF_NOT_READ[not_read.reason]).format(name=name)) from None


PDF_NOT_READ = {
    "encrypted": gettext_noop("{name} is a password-protected PDF; its text cannot be read."),
    "damaged": gettext_noop("{name} could not be read as a PDF (the file is damaged or not really a PDF)."),
    "empty": gettext_noop("{name} could not be read as a PDF (it has no pages)."),
    "limits": gettext_noop(
        "This PDF could not be read: {name} took more time or memory to read than the server allows a file."
    ),
    "busy": gettext_noop(
        "{name} was not read: the server is reading as many PDFs as it can at once. Try again in a moment."
    ),
}


def remove_unsent(*, owner=None, older_than_hours: int | None = None) -> int:
    """Delete unsent uploads older than the setting (of one person, or everyone's): rows and files."""
    hours = settings.AGENTWEB_ATTACHMENT_UNSENT_HOURS if older_than_hours is None else older_than_hours
    stale = Attachment.objects.filter(message__isnull=True, created_at__lt=timezone.now() - timedelta(hours=hours))
    if owner is not None:
        stale = stale.filter(owner=owner)
    count = 0
    for row in stale.only("pk", "path"):  # one by one: each row's delete removes its file (signals.py)
        row.delete()
        count += 1
    return count


def store_upload(*, owner, name: str, data: bytes) -> Attachment:
    """Check the file and store it; Refused (nothing stored) when it is too big, over the quota, of a refused type
    or unreadable. The person's stale unsent uploads are removed first."""
    name = clean_name(name)
    limit = settings.AGENTWEB_ATTACHMENT_MAX_BYTES
    if len(data) > limit:
        raise Refused(too_big(name, len(data), limit))
    if not data:
        raise Refused(_("%(name)s is empty.") % {"name": name})
    kind, content_type, text = sniff(name, data)
    remove_unsent(owner=owner)
    quota = settings.AGENTWEB_ATTACHMENT_QUOTA_BYTES
    refuse_over_quota(owner, name, len(data), quota)  # before the file is written, when it is plainly over
    ext = os.path.splitext(name)[1][:20].lower() if kind != Attachment.Kind.IMAGE else "." + content_type.split("/")[1]
    ext = re.sub(r"[^a-z0-9.]", "", ext)
    path = default_storage.save(f"attachments/{owner.pk}/{uuid.uuid4().hex}{ext}", ContentFile(data))
    try:
        # The check and the row that takes the space, one person at a time: twenty uploads at once no longer each
        # see the same room left (agentweb/locks.py).
        with transaction.atomic():
            lock_person(owner.pk)
            refuse_over_quota(owner, name, len(data), quota)
            return Attachment.objects.create(
                owner=owner, name=name, content_type=content_type, kind=kind, size=len(data), path=path, text=text
            )
    except Exception:
        default_storage.delete(path)
        raise


def refuse_over_quota(owner, name: str, size: int, quota: int) -> None:
    """Refused when `size` more bytes would take the person's attachments (sent and unsent) past `quota`."""
    used = Attachment.objects.filter(owner=owner).aggregate(total=Sum("size"))["total"] or 0
    if used + size > quota:
        raise Refused(
            _(
                "%(name)s would take your attachments past your quota of %(quota)s (%(used)s used); delete chats "
                "with attachments you no longer need."
            )
            % {"name": name, "quota": human_size(quota), "used": human_size(used)}
        )


def summary(row: Attachment) -> dict[str, Any]:
    """What a browser is told of an attachment (the upload's answer, a message's `attachments`)."""
    cap = settings.AGENTWEB_ATTACHMENT_TEXT_CHARS
    chars = len(row.text) if row.text is not None else None
    return {
        "id": str(row.pk),
        "name": row.name,
        "content_type": row.content_type,
        "kind": row.kind,
        "size": row.size,
        "chars": chars,
        "capped_at": cap if chars is not None and chars > cap else None,
    }


def claim(*, user, ids: list[str], message, supports_images: bool, model_name: str) -> list[dict[str, Any]]:
    """Attach the person's unsent uploads `ids` to their new `message` (inside the turn's transaction): its summaries.
    AttachmentNotFound for an id that is not one of them (another person's, sent already, gone), ImagesNotSupported
    for an image the model cannot take; the caller's transaction then writes nothing."""
    wanted: list[uuid.UUID] = []
    for value in ids:
        try:
            wanted.append(uuid.UUID(str(value)))
        except ValueError:
            raise AttachmentNotFound from None
    if len(set(wanted)) != len(wanted):
        raise AttachmentNotFound
    rows = {row.pk: row for row in Attachment.objects.filter(pk__in=wanted, owner=user, message__isnull=True)}
    if len(rows) != len(wanted):
        raise AttachmentNotFound
    ordered = [rows[pk] for pk in wanted]
    if not supports_images and any(row.kind == Attachment.Kind.IMAGE for row in ordered):
        raise ImagesNotSupported(model_name)
    claimed = Attachment.objects.filter(pk__in=wanted, owner=user, message__isnull=True).update(
        thread=message.thread_id, message=message
    )
    if claimed != len(wanted):  # another tab sent them meanwhile
        raise AttachmentNotFound
    return [summary(row) for row in ordered]


# --- what a model and a tool get ---------------------------------------------------------------------------------


def context_text(row: Attachment) -> str:
    """A text or PDF file as the model reads it, in the user's message: capped, and saying so."""
    cap = settings.AGENTWEB_ATTACHMENT_TEXT_CHARS
    text = row.text or ""
    label = "PDF" if row.kind == Attachment.Kind.PDF else row.content_type
    if len(text) > cap:
        end = f"--- end of {row.name}: cut at its first {cap:,} of {len(text):,} characters ---"
        text = text[:cap]
    else:
        end = f"--- end of {row.name} ---"
    return f"--- attached file {row.name} ({label}, {human_size(row.size)}) ---\n{text}\n{end}"


def read_bytes(row: Attachment) -> bytes:
    with default_storage.open(row.path, "rb") as handle:
        return handle.read()


def image_base64(row: Attachment) -> str:
    return base64.b64encode(read_bytes(row)).decode("ascii")


def rows_by_id(ids: list[str]) -> dict[str, Attachment]:
    return {str(row.pk): row for row in Attachment.objects.filter(pk__in=ids)}


@dataclass(frozen=True)
class ToolAttachment:
    """A message's attachment as a tool receives it (tools/injection.py InjectedAttachments): its name, content
    type, size, text (text files and PDFs: the whole text, not capped; None for images), and read() for its bytes."""

    id: str
    name: str
    content_type: str
    size: int
    text: str | None
    path: str

    def read(self) -> bytes:
        with default_storage.open(self.path, "rb") as handle:
            return handle.read()


def tool_attachment(row: Attachment) -> ToolAttachment:
    return ToolAttachment(str(row.pk), row.name, row.content_type, row.size, row.text, row.path)
