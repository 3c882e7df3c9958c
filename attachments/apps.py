from django.apps import AppConfig


class AttachmentsConfig(AppConfig):
    name = "attachments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import signals  # noqa: F401
        from .pdf_reader import ReaderSlots

        # This process's PDF readers at work (attachments/pdf_reader.py): at most AGENTWEB_PDF_READERS at once.
        self.pdf_readers = ReaderSlots()
