"""Changing one's password from the chat page, in real Chromium: the account menu in the header leads to the
app's own form; afterwards the new password logs in and the old one does not."""

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, sign_in
from tests.support.processes import app_environment, create_user, daphne, manage

USER, OLD, NEW = "grace", "hopper-1906", "cobol-compiler-1959"

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
    )

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-password")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0")
    manage(env, "migrate", "--noinput")
    create_user(env, USER, OLD)
    create_user(env, "ada", "lovelace-1815")
    with daphne(env) as base_url:
        yield base_url


def log_in(page, base_url, password, username=USER):
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-form [type=submit]")


def test_a_person_changes_their_password_from_the_chat_page(app, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    sign_in(page, app, USER, OLD)
    page.click("#account-toggle")
    page.get_by_role("link", name="Change password").click()
    expect(page.locator("h1")).to_have_text("Change your password")
    page.fill("#id_old_password", OLD)
    page.fill("#id_new_password1", NEW)
    page.fill("#id_new_password2", NEW)
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("h1")).to_have_text("Password changed")
    page.get_by_role("link", name="Back to your chats").click()
    page.wait_for_selector("#composer-input")

    page.click("#account-toggle")
    page.get_by_role("button", name="Log out").click()
    log_in(page, app, OLD)
    expect(page.locator(".form-errors")).to_be_visible()
    log_in(page, app, NEW)
    page.wait_for_selector("#composer-input")
    context.close()


def test_a_wrong_current_password_is_explained_and_changes_nothing(app, browser):
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    page.goto(f"{app}/accounts/password_change/")
    page.fill("#id_old_password", "not-my-password")
    page.fill("#id_new_password1", "another-pass-2024")
    page.fill("#id_new_password2", "another-pass-2024")
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#id_old_password_error")).to_contain_text("incorrect")
    context.close()
    other = browser.new_context()
    page = other.new_page()
    log_in(page, app, "lovelace-1815", username="ada")
    page.wait_for_selector("#composer-input")
    other.close()


def test_an_empty_login_form_is_answered_on_the_page_not_by_a_browser_bubble(app, browser):
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{app}/accounts/login/")
    page.click("#login-form [type=submit]")  # a bubble would keep the form from being sent at all
    expect(page.locator("#id_username_error")).to_contain_text("required")
    expect(page.locator("#id_password_error")).to_contain_text("required")
    expect(page.locator("#id_username")).to_have_attribute("aria-invalid", "true")
    context.close()


def test_an_empty_password_form_is_answered_on_the_page_not_by_a_browser_bubble(app, browser):
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, app, "ada", "lovelace-1815")
    page.goto(f"{app}/accounts/password_change/")
    page.get_by_role("button", name="Change password").click()
    for field in ("old_password", "new_password1", "new_password2"):
        expect(page.locator(f"#id_{field}_error")).to_contain_text("required")
    context.close()
