"""The shared page: for anyone with the link, without login or JavaScript, showing only the snapshot."""

import re

import pytest
from django.urls import reverse

from sharing.models import ShareLink
from tests.sharing.conftest import add_message

pytestmark = pytest.mark.django_db

XSS = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def shared_url(token):
    return reverse("sharing:shared", args=[token])


def test_it_shows_the_conversation_and_tool_results_to_an_anonymous_visitor(anonymous, share):
    _, token = share()
    response = anonymous.get(shared_url(token))
    page = response.content.decode()
    assert response.status_code == 200
    assert "what is 23*19?" in page and "23*19 = 437." in page
    assert "calculator" in page
    assert "&quot;expression&quot;: &quot;23*19&quot;" in page
    assert '<pre class="tool-result-text">437</pre>' in page


def test_it_shows_a_turns_model_calls_as_one_answer_as_the_chat_page_does(anonymous, share):
    _, token = share()
    page = anonymous.get(shared_url(token)).content.decode()
    assert page.count('class="message assistant answer"') == 1
    answer = page.split('class="message assistant answer"')[1]
    assert answer.count('class="answer-segment"') == 2
    assert answer.index("Let me work that out.") < answer.index("calculator") < answer.index("23*19 = 437.")


def test_it_puts_tool_calls_in_details_elements_that_collapse_without_javascript(anonymous, share):
    _, token = share()
    page = anonymous.get(shared_url(token)).content.decode()
    assert re.search(r'<details class="tool-card" data-status="success">\s*<summary', page)


def test_it_hides_tool_arguments_and_results_when_asked(anonymous, share):
    link, token = share(hide_tool_details=True)
    page = anonymous.get(shared_url(token)).content.decode()
    assert "calculator" in page
    assert "23*19&quot;" not in page and "expression" not in page
    assert "437</pre>" not in page
    assert "expression" not in str(link.snapshot)


def test_it_is_noindex_by_meta_tag_and_header(anonymous, share):
    _, token = share()
    response = anonymous.get(shared_url(token))
    assert '<meta name="robots" content="noindex' in response.content.decode()
    assert response["X-Robots-Tag"].startswith("noindex")


def test_it_shows_nothing_of_the_owner_but_the_display_name(anonymous, owner, share):
    owner.email = "owner.private@example.com"
    owner.first_name, owner.last_name = "Ada", "Lovelace-Surname"
    owner.save()
    _, token = share(display_name="Countess")
    page = anonymous.get(shared_url(token)).content.decode()
    assert "Countess" in page
    for private in ["owner", "owner.private@example.com", "Ada", "Lovelace-Surname"]:
        assert private not in page


def test_it_escapes_markup_in_messages_tool_results_and_the_title(anonymous, thread, share):
    from chat.models import ToolCall

    thread.title = XSS
    thread.save()
    add_message(thread, "user", XSS)
    ToolCall.objects.update(args={"x": XSS}, result=XSS)
    _, token = share(hide_system_prompt=False)
    page = anonymous.get(shared_url(token)).content.decode()
    assert "<script" not in page
    assert "<img" not in page and 'onerror="' not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page


MARKDOWN = """## Results

| Name | Count |
| :--- | ----: |
| apples | 3 |

```python
print("hi")
```

See [the docs](https://example.com/docs)."""


def test_it_renders_an_assistant_messages_markdown_as_html(anonymous, thread, share):
    add_message(thread, "assistant", MARKDOWN)
    _, token = share()
    page = anonymous.get(shared_url(token)).content.decode()
    assert '<div class="message-text markdown"><h2>Results</h2>' in page
    assert '<div class="md-table"><table>' in page and '<td class="align-right">3</td>' in page
    assert '<pre><code class="language-python">print(&quot;hi&quot;)</code></pre>' in page
    assert '<a href="https://example.com/docs" target="_blank" rel="noopener noreferrer nofollow">' in page


def test_it_writes_no_inline_style_which_its_csp_would_refuse(anonymous, thread, share):
    add_message(thread, "assistant", MARKDOWN)
    _, token = share()
    response = anonymous.get(shared_url(token))
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert "style=" not in response.content.decode()


def test_it_shows_a_user_message_as_plain_text_as_the_app_does(anonymous, thread, share):
    add_message(thread, "user", "**not bold** and `not code`")
    _, token = share()
    page = anonymous.get(shared_url(token)).content.decode()
    assert '<div class="message-text">**not bold** and `not code`</div>' in page


def test_it_escapes_markup_in_an_assistant_messages_markdown(anonymous, thread, share):
    add_message(
        thread,
        "assistant",
        f"# Title\n\n{XSS}\n\n[click](javascript:window.__pwned=3)\n\n![x](https://e.example/x.png)",
    )
    _, token = share()
    page = anonymous.get(shared_url(token)).content.decode()
    assert "<h1>Title</h1>" in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "<script" not in page and "<img" not in page and 'onerror="' not in page
    assert "javascript:" not in page
    assert '<span class="md-link-removed"' in page


def test_it_keeps_a_tool_result_as_escaped_preformatted_text_not_markdown(anonymous, thread, share):
    from chat.models import ToolCall

    ToolCall.objects.update(result=f"**437**\n{XSS}")
    _, token = share()
    page = anonymous.get(shared_url(token)).content.decode()
    assert (
        '<pre class="tool-result-text">**437**\n&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x '
        "onerror=&quot;window.__pwned=2&quot;&gt;</pre>"
    ) in page
    assert "<script" not in page and "<img" not in page


def test_it_runs_no_script_at_all(anonymous, share):
    _, token = share()
    response = anonymous.get(shared_url(token))
    assert "<script" not in response.content.decode()
    assert "script-src" not in response["Content-Security-Policy"]
    assert "default-src 'none'" in response["Content-Security-Policy"]


def test_it_404s_for_an_unknown_token(anonymous):
    assert anonymous.get(shared_url("not-a-token-anyone-was-given")).status_code == 404


def test_it_404s_at_once_after_revoking_with_the_same_page_as_an_unknown_token(anonymous, share):
    link, token = share()
    assert anonymous.get(shared_url(token)).status_code == 200
    link.revoke()
    revoked = anonymous.get(shared_url(token))
    unknown = anonymous.get(shared_url("x" * len(token)))
    assert revoked.status_code == unknown.status_code == 404
    assert revoked.content == unknown.content


def test_it_is_not_cached_so_a_revoked_link_stops_everywhere(anonymous, share):
    _, token = share()
    response = anonymous.get(shared_url(token))
    assert "no-cache" in response["Cache-Control"] and "no-store" in response["Cache-Control"]


def test_it_shows_the_snapshot_not_the_live_thread_until_updated(as_owner, anonymous, thread, share):
    link, token = share()
    add_message(thread, "user", "a message after sharing")
    assert "a message after sharing" not in anonymous.get(shared_url(token)).content.decode()
    as_owner.post(reverse("sharing:update", args=[link.id]))
    assert "a message after sharing" in anonymous.get(shared_url(token)).content.decode()


def test_it_hides_the_system_prompt_by_default(anonymous, settings, share):
    settings.AGENTWEB_SYSTEM_PROMPT = "You are the operator's secret assistant."
    _, token = share()
    assert "secret assistant" not in anonymous.get(shared_url(token)).content.decode()


def own_agent_thread(thread, owner, prompt="You are a careful assistant."):
    from agents.models import Agent

    thread.agent = Agent.objects.create(slug="careful", name="Careful", owner=owner, system_prompt=prompt)
    thread.save()
    return thread


def test_it_shows_the_system_prompt_of_the_owners_own_agent_when_they_chose_to(anonymous, owner, thread, share):
    own_agent_thread(thread, owner)
    _, token = share(hide_system_prompt=False)
    assert "You are a careful assistant." in anonymous.get(shared_url(token)).content.decode()


def test_a_share_posted_without_hiding_never_shows_an_admin_agents_prompt(as_owner, anonymous, thread):
    """The chat page never shows a person a shared agent's prompt, so neither may their share (issue 36)."""
    from agents.models import Agent

    thread.agent = Agent.objects.create(slug="ops", name="Ops", system_prompt="Internal escalation codes: 4242.")
    thread.save()

    response = as_owner.post(reverse("sharing:create", args=[thread.pk]), HTTP_ACCEPT="application/json")

    token = response.json()["url"].rstrip("/").rsplit("/", 1)[1]
    assert "4242" not in anonymous.get(shared_url(token)).content.decode()
    link = ShareLink.objects.get()
    assert link.hide_system_prompt and "4242" not in str(link.snapshot)


def test_the_global_prompt_is_not_shown_by_a_persons_share_but_is_by_a_superusers(anonymous, settings, share, thread):
    settings.AGENTWEB_SYSTEM_PROMPT = "You are the operator's secret assistant."
    _, token = share(hide_system_prompt=False)
    assert "secret assistant" not in anonymous.get(shared_url(token)).content.decode()

    thread.owner.is_superuser = True
    thread.owner.save()
    _, token = share(hide_system_prompt=False)
    assert "secret assistant" in anonymous.get(shared_url(token)).content.decode()


def test_a_link_whose_snapshot_holds_a_prompt_its_author_cannot_read_does_not_show_it(anonymous, thread):
    """Enforced where the page renders: a link made before the check (or by hand) shows no such prompt."""
    from agents.models import Agent
    from sharing.models import hash_token

    thread.agent = Agent.objects.create(slug="ops", name="Ops", system_prompt="Internal escalation codes: 4242.")
    thread.save()
    snapshot = {
        "version": 1,
        "title": "t",
        "agent": None,
        "system_prompt": "Internal escalation codes: 4242.",
        "messages": [],
    }
    ShareLink.objects.create(
        thread=thread, token_hash=hash_token("old-token"), snapshot=snapshot, hide_system_prompt=False, display_name="A"
    )

    page = anonymous.get(shared_url("old-token"))

    assert page.status_code == 200 and "4242" not in page.content.decode()


def test_it_404s_once_the_owners_account_is_deactivated(anonymous, owner, share):
    _, token = share()
    owner.is_active = False
    owner.save()
    assert anonymous.get(shared_url(token)).status_code == 404


def test_it_404s_once_the_thread_is_deleted(anonymous, thread, share):
    _, token = share()
    thread.delete()
    assert anonymous.get(shared_url(token)).status_code == 404
    assert not ShareLink.objects.exists()
