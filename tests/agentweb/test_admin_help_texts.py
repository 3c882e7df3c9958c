"""Help texts that name a placeholder in angle brackets (`<server>__<tool>`) show it on the admin's forms: Django's
admin writes help texts as HTML, and a plain `<server>` there was a tag the browser dropped."""

import html
import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture
def client():
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="root-password-1"))
    return client


@pytest.mark.parametrize(
    ("page", "shown"),
    [
        ("/admin/agents/agent/add/", "(MCP tools as <server>__<tool>)"),
        ("/admin/agents/agent/add/", '"model": "<model configuration id>"'),
        ("/admin/mcpservers/mcpserver/add/", "Starts the name of each of its tools (<name>__<tool>)"),
        ("/admin/tools/approvalrule/add/", "an MCP server's tool as <server>__<tool>"),
    ],
)
def test_a_placeholder_in_a_help_text_is_shown(client, page, shown):
    assert html.escape(shown, quote=False) in _help_texts(client.get(page).content.decode())


def test_every_help_text_of_every_add_page_shows_its_angle_brackets(client):
    checked = 0
    for model in admin.site._registry:
        opts = model._meta
        response = client.get(f"/admin/{opts.app_label}/{opts.model_name}/add/")
        if response.status_code != 200:
            continue  # rows the app writes itself have no add page
        page = response.content.decode()
        shown = _help_texts(page)
        for field in opts.get_fields():
            text = str(getattr(field, "help_text", "") or "")
            if "<" in text and f'name="{field.name}"' in page:
                assert html.escape(text, quote=False) in shown, (opts.label, field.name)
                checked += 1
    assert checked >= 3


def _help_texts(page: str) -> str:
    """The help texts of a form page, as written in its HTML, with quotes unescaped (the rest left as written)."""
    found = re.findall(r'<div class="help"[^>]*>\s*<div>(.*?)</div>\s*</div>', page, flags=re.S)
    return "\n".join(text.replace("&quot;", '"').replace("&#x27;", "'").replace("&#39;", "'") for text in found)
