"""A file a person uploaded into the composer: unsent (thread and message null) until a message.send names it."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class Attachment(models.Model):
    class Kind(models.TextChoices):
        IMAGE = "image"  # png, jpeg, gif, webp: sent to a model that takes images
        TEXT = "text"  # UTF-8 text (txt, md, csv, json, source code): its text goes into the context
        PDF = "pdf"  # its text (pypdf) goes into the context

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attachments")
    # Null until the message that carries it is sent; deleted with its thread and its message (the file too:
    # attachments/signals.py).
    thread = models.ForeignKey("chat.Thread", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    message = models.ForeignKey(
        "chat.Message", on_delete=models.CASCADE, null=True, blank=True, related_name="attachment_rows"
    )
    name = models.CharField(max_length=255)  # sanitised (attachments/services.py clean_name)
    content_type = models.CharField(max_length=100)  # from the content, not from the browser
    kind = models.CharField(max_length=8, choices=Kind.choices)
    size = models.PositiveBigIntegerField()
    path = models.CharField(max_length=300)  # the name default_storage gave the file
    # Text and PDF: the text the model reads (whole: the cap applies when the context is built); None for images.
    text = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "message"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.size} bytes)"
