"""The empty chat in real Chromium against the real app and a scripted model server: what stays when a first message
is refused, the model the picker shows for the agent picked, and what Continue offers in an agent's chat.

The module shares one app and one model server; only the Continue test asks the model anything.
"""

import httpx
import pytest

from tests.attachments.files import png
from tests.support.browser import require_chromium, sign_in, wait_until
from tests.support.processes import app_environment, create_user, daphne, manage, model_server

USER, PASSWORD = "mary", "somerville-1780"
HELPER_PROMPTS = ["Say hello.", "Tell me a fact."]
TUTOR_PROMPTS = ["What is 2+2?"]

require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("empty-chat")
    script = [{"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "2+2"}}]}]
    with model_server(script, tmp_path) as model_url:
        env = app_environment(tmp_path, AGENTWEB_LLM_API="demo", AGENTWEB_MAX_STEPS="7")
        manage(env, "migrate", "--noinput")
        create_user(env, USER, PASSWORD)
        manage(
            env,
            "shell",
            "-c",
            "from modelconfig.models import ModelConfiguration as M; from agents.models import Agent; "
            f"M.objects.create(name='Text model', api='openai', base_url='{model_url}/v1', model='text-model', "
            "is_default=True, supports_images=False); "
            f"vision = M.objects.create(name='Vision model', api='openai', base_url='{model_url}/v1', "
            "model='vision-model', supports_images=True); "
            f"Agent.objects.create(slug='helper', name='Helper', is_default=True, starter_prompts={HELPER_PROMPTS!r}); "
            f"Agent.objects.create(slug='tutor', name='Tutor', model=vision, step_limit=1, "
            f"starter_prompts={TUTOR_PROMPTS!r})",
        )
        with daphne(env) as base_url:
            yield {"base_url": base_url, "model_url": model_url, "tmp": tmp_path}


@pytest.fixture
def page(app, browser):
    page = browser.new_page()
    sign_in(page, app["base_url"], USER, PASSWORD)
    yield page
    page.close()


def test_a_refused_first_message_leaves_the_agents_and_starting_prompts_in_place(app, page):
    picture = app["tmp"] / "red.png"
    picture.write_bytes(png(4, 3))
    expect(page.locator("#starters .starter")).to_have_text(HELPER_PROMPTS)
    page.set_input_files("#attach-input", str(picture))
    expect(page.locator("#attachment-chips")).to_contain_text("red.png")
    wait_until(page, "!document.querySelector('#attachment-chips .uploading')")
    page.fill("#composer-input", "What is in this picture?")
    page.press("#composer-input", "Enter")
    expect(page.locator("#composer-error")).to_contain_text("does not take images")
    expect(page.locator(".message.user")).to_have_count(0)  # the refused message is given back, not shown
    expect(page.locator("#agent-choices .agent-choice")).to_have_count(2)
    expect(page.locator("#agent-choices")).to_be_visible()
    expect(page.locator("#starters .starter")).to_have_text(HELPER_PROMPTS)
    expect(page.locator("#starters")).to_be_visible()
    expect(page.locator("#composer-input")).to_have_value("What is in this picture?")


def test_picking_an_agent_shows_its_model_before_anything_is_sent(page):
    button = page.locator("#model-picker-button")
    expect(button).to_contain_text("Text model")
    page.click('.agent-choice[data-slug="tutor"]')
    expect(button).to_contain_text("Vision model")
    page.click('.agent-choice[data-slug="helper"]')
    expect(button).to_contain_text("Text model")


def test_continue_in_a_new_agent_chat_offers_the_agents_step_limit(app, page):
    page.click('.agent-choice[data-slug="tutor"]')
    page.fill("#composer-input", "What is 2+2, with the calculator?")
    page.press("#composer-input", "Enter")
    expect(page.locator(".run-continue")).to_have_text("Continue for 1 more step")
    requests = httpx.get(f"{app['model_url']}/_requests").json()
    assert [r["json"]["model"] for r in requests] == ["vision-model"]  # the agent's model, as the picker showed
    page.reload()
    expect(page.locator(".run-continue")).to_have_text("Continue for 1 more step")
