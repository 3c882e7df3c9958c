"""`manage.py update_catalogues`: every string marked for translation into locale/<language>/LC_MESSAGES/django.po
(templates and Python) and djangojs.po (static/**/*.js), for each language of settings.LANGUAGES but English. New
strings come in empty, changed ones fuzzy: translators fill them in (docs/ui.md, Languages), and
tests/languages/test_catalogues.py fails until they have."""

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils.translation import to_locale

#: What makemessages leaves alone: the tests, the benchmarks, the docs and built files, and vendored libraries.
IGNORED = [
    "tests/*",
    "bench/*",
    "docs/*",
    "staticfiles/*",
    "media/*",
    "locale/*",
    "static/chat/vendor/*",
    "*/node_modules/*",
]


def translated_locales() -> list[str]:
    """The locale names of the languages translated (zh-hans → zh_Hans); English is the source."""
    return [to_locale(code) for code, _name in settings.LANGUAGES if code != "en"]


class Command(BaseCommand):
    help = "Collect the strings marked for translation into locale/*/LC_MESSAGES/django.po and djangojs.po."

    def handle(self, *args, **options):
        for domain in ("django", "djangojs"):
            call_command(
                "makemessages",
                domain=domain,
                locale=translated_locales(),
                ignore_patterns=IGNORED,
                no_location=True,
                no_obsolete=True,
                verbosity=options["verbosity"],
            )
