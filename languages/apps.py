from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class LanguagesConfig(AppConfig):
    name = "languages"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        #: The compiled catalogues' version (their latest change), read once as the process starts: in the JavaScript
        #: catalogue's address, so a browser keeps each language's catalogue until they are built again.
        self.catalogue_version = catalogue_version()


def catalogue_version() -> str:
    built = [mo.stat().st_mtime for path in settings.LOCALE_PATHS for mo in Path(path).glob("*/LC_MESSAGES/*.mo")]
    return str(int(max(built, default=0)))
