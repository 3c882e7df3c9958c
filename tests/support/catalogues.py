"""The translations' catalogues as the tests need them: compiled (as `make` compiles them), and a right-to-left
pseudo-language for the layout checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
#: The test-only language: Arabic's direction (Django's LANGUAGES_BIDI has "ar"), English's words (its catalogue
#: is empty, so every string stays as written), a private-use region so no real locale is claimed.
PSEUDO_RTL = "ar-xb"


def compiled() -> None:
    """Each locale/*/LC_MESSAGES/*.po compiled to its .mo when that is missing or older (`make messages`)."""
    stale = [po for po in LOCALE.glob("*/LC_MESSAGES/*.po") if _older(po.with_suffix(".mo"), po)]
    if stale:
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "compilemessages", "-v", "0"], cwd=LOCALE, check=True, timeout=120
        )


def _older(mo: Path, po: Path) -> bool:
    return not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime


HEADER = (
    'msgid ""\nmsgstr ""\n'
    '"Content-Type: text/plain; charset=UTF-8\\n"\n'
    '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n'
)


def pseudo_rtl_catalogue(folder: Path) -> Path:
    """A locale folder holding the pseudo-language's catalogues (header only: English text) under `folder`."""
    messages = folder / "ar_XB" / "LC_MESSAGES"
    messages.mkdir(parents=True, exist_ok=True)
    for domain in ("django", "djangojs"):
        po = messages / f"{domain}.po"
        po.write_text(HEADER, encoding="utf-8")
        subprocess.run(["msgfmt", "-o", str(po.with_suffix(".mo")), str(po)], check=True, timeout=60)
    return folder
