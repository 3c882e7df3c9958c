"""The app's settings plus the right-to-left pseudo-language (tests/support/catalogues.py), for the layout tests of
tests/e2e/test_browser_languages.py: its catalogue in AGENTWEB_TEST_PSEUDO_LOCALE."""

import os
from pathlib import Path

from agentweb.settings import *  # noqa: F403
from agentweb.settings import LANGUAGES, LOCALE_PATHS

LANGUAGES = [*LANGUAGES, ("ar-xb", "RTL pseudo")]
LOCALE_PATHS = [*LOCALE_PATHS, Path(os.environ["AGENTWEB_TEST_PSEUDO_LOCALE"])]
