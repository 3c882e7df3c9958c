"""The sidebar and the last turn's actions in real Chromium: rename, search, delete; regenerate, edit and resend."""

import pytest

from tests.e2e.test_browser_chat import XSS, finished
from tests.support.browser import connected, launch, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("browser-sidebar")
    env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_DEMO_DELAY="0.01")
    manage(env, "migrate", "--noinput")
    create_user(env, "ada", "lovelace-1815")
    with daphne(env) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def page(app):
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        sign_in(page, app, "ada", "lovelace-1815", connect=False)  # ask() waits for the socket
        yield page
        browser.close()


def ask(page, text):
    connected(page)
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")
    wait_until(page, "document.querySelector('#messages .message.assistant')")
    finished(page)


def visible_titles(page):
    return page.evaluate(
        "() => [...document.querySelectorAll('#thread-list .thread-item')]"
        ".filter((li) => !li.hidden).map((li) => li.querySelector('.thread-title').textContent)"
    )


@pytest.fixture(scope="module")
def two_threads(page):
    ask(page, "what is 23*19?")
    first = page.url
    page.click("#new-chat")
    page.wait_for_selector("#composer-input")
    ask(page, "what time is it?")
    wait_until(page, "document.querySelectorAll('#thread-list .thread-item').length === 2")
    return first, page.url


def test_rename_a_thread_in_the_sidebar(page, two_threads):
    first, _ = two_threads
    item = page.locator(f"#thread-list .thread-item[data-thread-id='{first.rstrip('/').rsplit('/', 1)[1]}']")
    item.hover()
    item.locator(".thread-rename").click()
    page.fill(".thread-rename-input", XSS)
    page.keyboard.press("Enter")
    wait_until(page, "!document.querySelector('.thread-rename-form')")
    assert item.locator(".thread-title").text_content() == XSS
    page.reload()
    page.wait_for_selector("#thread-list .thread-item")
    assert XSS in visible_titles(page)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#thread-list img").count() == 0


def test_search_filters_the_list_by_title_and_by_content(page, two_threads):
    page.fill("#thread-search", "23*19")  # in the first thread's messages only
    wait_until(
        page, "[...document.querySelectorAll('#thread-list .thread-item')].filter((li) => !li.hidden).length === 1"
    )
    assert visible_titles(page) == [XSS]
    # What matched shows under the chat found by its messages (the newest matching message).
    assert "23*19" in page.locator("#thread-list .thread-item:not([hidden]) .thread-search-match").text_content()
    page.fill("#thread-search", "time is")  # the second thread's title
    wait_until(
        page,
        "document.querySelector('#thread-list .thread-item:not([hidden]) .thread-title')?.textContent"
        " === 'what time is it?'",
    )
    assert visible_titles(page) == ["what time is it?"]
    page.fill("#thread-search", "no such words anywhere")
    wait_until(page, "document.querySelector('.thread-search-status')?.textContent === 'No chats match.'")
    assert visible_titles(page) == []
    page.fill("#thread-search", "")
    wait_until(
        page, "[...document.querySelectorAll('#thread-list .thread-item')].filter((li) => !li.hidden).length === 2"
    )
    assert page.locator(".thread-search-match").count() == 0


def test_regenerate_and_edit_the_last_turn(page, two_threads):
    _, second = two_threads
    page.goto(second)
    page.wait_for_selector(".turn-regenerate")
    assistants = page.locator(".message.assistant").count()
    page.click(".turn-regenerate")
    wait_until(page, "!document.querySelector('#stop').hidden || document.querySelector('.typing')", timeout=5)
    finished(page)
    page.wait_for_selector(".turn-regenerate")
    assert page.locator(".message.assistant").count() == assistants
    page.click(".turn-edit")
    page.fill(".turn-edit-input", "what is 6*7?")
    page.keyboard.press("Enter")
    wait_until(page, "document.querySelector('.message.user .message-text').textContent === 'what is 6*7?'")
    wait_until(page, "[...document.querySelectorAll('.tool-result-text')].some((n) => n.textContent === '42')")
    finished(page)
    page.reload()
    page.wait_for_selector(".message.user")
    assert page.locator(".message.user .message-text").all_text_contents() == ["what is 6*7?"]


def test_delete_removes_the_open_thread(page, two_threads):
    _, second = two_threads
    page.goto(second)
    thread_id = second.rstrip("/").rsplit("/", 1)[1]
    item = page.locator(f"#thread-list .thread-item[data-thread-id='{thread_id}']")
    item.hover()
    item.locator(".thread-delete").click()
    page.locator("dialog.app-dialog .app-dialog-confirm").click()  # the in-page dialog, not confirm()
    page.wait_for_url(lambda url: "/t/" not in url)
    page.wait_for_selector("#thread-list .thread-item")
    assert page.locator(f"#thread-list .thread-item[data-thread-id='{thread_id}']").count() == 0
    assert visible_titles(page) == [XSS]
    assert page.goto(second).status == 404


def item_in(page, thread_id):
    return page.locator(f"#thread-list .thread-item[data-thread-id='{thread_id}']")


def test_another_tab_sees_a_new_chat_its_new_title_and_its_deletion(app, page, two_threads):
    context = page.context.browser.new_context()  # the same person (their session cookie), another tab
    context.add_cookies(page.context.cookies())
    other = context.new_page()
    for tab in (page, other):
        tab.goto(f"{app}/")
        connected(tab)

    ask(page, "a chat for the other tab")
    thread_id = page.url.rstrip("/").rsplit("/", 1)[1]
    sync_api.expect(item_in(other, thread_id)).to_have_count(1)

    item = item_in(page, thread_id)
    item.hover()
    item.locator(".thread-rename").click()
    page.fill(".thread-rename-input", "Renamed in the first tab")
    page.keyboard.press("Enter")
    sync_api.expect(item_in(other, thread_id).locator(".thread-title")).to_have_text("Renamed in the first tab")

    other.goto(page.url)  # the other tab shows the chat the first one deletes
    connected(other)
    item.hover()
    item.locator(".thread-delete").click()
    page.locator("dialog.app-dialog .app-dialog-confirm").click()  # the in-page dialog, not confirm()
    page.wait_for_url(lambda url: "/t/" not in url)  # the open chat went: this tab leaves it too (let it land
    page.wait_for_load_state()  # before the next test navigates the same page)
    other.wait_for_url(lambda url: "/t/" not in url)
    sync_api.expect(item_in(other, thread_id)).to_have_count(0)
    context.close()


def test_deleting_the_open_chat_goes_home_in_one_navigation(app, page):
    page.goto(f"{app}/")
    ask(page, "a chat to delete")
    thread_id = page.url.rstrip("/").rsplit("/", 1)[1]
    documents = []

    def note_document(request):
        if request.resource_type == "document":
            documents.append(request.url)

    page.on("request", note_document)

    item = item_in(page, thread_id)
    item.hover()
    item.locator(".thread-delete").click()
    page.locator("dialog.app-dialog .app-dialog-confirm").click()
    page.wait_for_url(lambda url: "/t/" not in url)
    page.wait_for_load_state()
    connected(page)  # the home page is up, its socket open: the deleted event has been seen by then too
    page.remove_listener("request", note_document)  # the page is the module's: later tests do not feed this list

    # The delete's answer and the socket's thread.deleted both say the open chat went; a second navigation
    # cancelled the first one halfway.
    assert len(documents) == 1 and "/t/" not in documents[0]


def ask_in_open_chat(page, text, answer):
    """Send `text` in the chat the page shows and wait until the answer containing `answer` has ended."""
    connected(page)
    users = page.locator("#messages .message.user").count()
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")
    wait_until(page, f"document.querySelectorAll('#messages .message.user').length > {users}")
    sync_api.expect(page.locator("#messages .message.assistant .message-text").last).to_contain_text(answer)
    finished(page)


def test_edit_and_regenerate_show_after_a_turn_sent_in_the_open_chat(app, page):
    page.goto(f"{app}/")
    ask(page, "what is 2+3?")
    ask_in_open_chat(page, "what is 6*7?", "42")  # no reload: the bubble is the one shown as it was sent
    last_user = page.locator("#messages .message.user").last
    sync_api.expect(last_user.locator(".turn-edit")).to_be_visible()
    sync_api.expect(page.locator("#messages .message.assistant").last.locator(".turn-regenerate")).to_be_visible()

    last_user.locator(".turn-edit").click()
    page.fill(".turn-edit-input", "what is 5*5?")
    page.keyboard.press("Enter")
    sync_api.expect(page.locator("#messages .message.assistant .message-text").last).to_contain_text("25")
    finished(page)
    texts = ["what is 2+3?", "what is 5*5?"]
    assert page.locator("#messages .message.user .message-text").all_text_contents() == texts
    page.reload()
    page.wait_for_selector("#messages .message.user")
    assert page.locator("#messages .message.user .message-text").all_text_contents() == texts


def element_at(page, x, y):
    """What a click at (x, y) would reach: the thread link, a Rename or Delete button, or something else."""
    return page.evaluate(
        """([x, y]) => {
        const node = document.elementFromPoint(x, y);
        if (node?.closest('.thread-rename')) return 'rename';
        if (node?.closest('.thread-delete')) return 'delete';
        return node?.closest('.thread-link') ? 'link' : String(node?.className);
    }""",
        [x, y],
    )


def test_a_chat_in_the_sidebar_opens_wherever_its_title_is_clicked(app, page):
    page.goto(f"{app}/")
    connected(page)
    item = page.locator("#thread-list .thread-item").first
    target = item.locator(".thread-link").get_attribute("href")
    item.hover()
    box, title = item.bounding_box(), item.locator(".thread-title").bounding_box()
    y = title["y"] + title["height"] / 2
    reached = {f: element_at(page, box["x"] + box["width"] * f, y) for f in (0.05, 0.25, 0.5, 0.6, 0.75, 0.95)}
    assert set(reached.values()) == {"link"}, reached
    page.mouse.click(box["x"] + box["width"] / 2, y)
    page.wait_for_url(f"**{target}")


def test_rename_and_delete_are_reached_only_where_they_show(app, page):
    page.goto(f"{app}/")
    connected(page)
    item = page.locator("#thread-list .thread-item").first
    rename, delete = item.locator(".thread-rename"), item.locator(".thread-delete")
    item.hover()
    r, d = rename.bounding_box(), delete.bounding_box()
    assert element_at(page, r["x"] + r["width"] / 2, r["y"] + r["height"] / 2) == "rename"
    assert element_at(page, d["x"] + d["width"] / 2, d["y"] + d["height"] / 2) == "delete"
    assert element_at(page, (r["x"] + r["width"] + d["x"]) / 2, r["y"] + r["height"] / 2) == "link"  # between
    page.mouse.move(900, 600)  # away from the sidebar: the buttons are hidden, and so out of reach
    sync_api.expect(item.locator(".thread-actions")).to_have_css("opacity", "0")
    assert element_at(page, r["x"] + r["width"] / 2, r["y"] + r["height"] / 2) == "link"
    assert element_at(page, d["x"] + d["width"] / 2, d["y"] + d["height"] / 2) == "link"
