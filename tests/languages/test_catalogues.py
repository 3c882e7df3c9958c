"""The translations are complete: every string marked in templates, Python and the page's JavaScript has a
translation in each language, none fuzzy; and makemessages, run over a copy of the code, finds nothing the
catalogues lack (a string marked but never translated fails here, as does one whose English changed)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.utils.translation import to_locale

from tests.support import po

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ("django", "djangojs")
TRANSLATED = [to_locale(code) for code, _name in settings.LANGUAGES if code != "en"]
CATALOGUES = [(locale, domain) for locale in TRANSLATED for domain in DOMAINS]


def catalogue(root: Path, locale: str, domain: str) -> Path:
    return root / "locale" / locale / "LC_MESSAGES" / f"{domain}.po"


def problems(entries: list[po.Entry]) -> list[str]:
    said = []
    for entry in entries:
        if "fuzzy" in entry.flags:
            said.append(f"fuzzy: {entry.msgid!r}")
        elif not entry.translated:
            said.append(f"untranslated: {entry.msgid!r}")
    return said


def test_the_four_languages_are_offered_each_with_both_catalogues():
    assert TRANSLATED == ["de", "fr", "es", "zh_Hans"]
    for locale, domain in CATALOGUES:
        assert catalogue(ROOT, locale, domain).exists(), (locale, domain)


@pytest.mark.parametrize(("locale", "domain"), CATALOGUES)
def test_every_entry_is_translated_and_none_is_fuzzy(locale, domain):
    entries = po.messages(catalogue(ROOT, locale, domain))
    assert len(entries) > 100  # the catalogue holds the app's strings, not an empty file
    assert problems(entries) == []


@pytest.mark.parametrize(("locale", "domain"), CATALOGUES)
def test_msgfmt_accepts_each_catalogue_with_its_format_checks(locale, domain):
    """GNU msgfmt --check: the header, plural forms, and each translation's %(name)s placeholders match its msgid."""
    result = subprocess.run(
        ["msgfmt", "--check", "-o", "/dev/null", str(catalogue(ROOT, locale, domain))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_the_pages_strings_are_all_in_the_catalogues(tmp_path):
    """`manage.py update_catalogues` over a copy of the code: afterwards the copy's catalogues hold the same strings
    as the committed ones, all still translated (a new string comes in empty, a changed one fuzzy)."""
    copy = tmp_path / "app"
    shutil.copytree(
        ROOT,
        copy,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "tests",
            "bench",
            "docs",
            "node_modules",
            "staticfiles",
            "media",
            "__pycache__",
            "*.mo",
            "*.sqlite3*",
            ".secret_key",
            ".vapid_key",
            ".*_cache",
            ".hypothesis",
        ),
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "update_catalogues", "-v", "0"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "agentweb.settings", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    for locale, domain in CATALOGUES:
        committed = po.messages(catalogue(ROOT, locale, domain))
        fresh = po.messages(catalogue(copy, locale, domain))
        new = sorted({e.key for e in fresh} - {e.key for e in committed})
        gone = sorted({e.key for e in committed} - {e.key for e in fresh})
        assert (new, gone) == ([], []), f"{locale}/{domain}: run manage.py update_catalogues and translate"
        assert problems(fresh) == [], f"{locale}/{domain}"
