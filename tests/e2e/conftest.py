"""What the browser tests share: one Chromium per test module."""

import pytest

from tests.support.browser import launch


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, for the whole module (tests/support/browser.py)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()
