"""Help texts that name a placeholder in angle brackets (`<server>__<tool>`) show it on the admin's forms and read-only
pages: Django's admin writes help texts as HTML, and a plain `<server>` there was a tag the browser dropped."""

import html
import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from agentweb.admin_display import PlainHelpTexts
from mcpservers.models import McpServer

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


def test_every_admin_whose_model_names_a_placeholder_escapes_its_help_texts():
    """The sweep: every model admin and inline of the site whose model (or its own help_texts) has a help text with
    an angle bracket takes PlainHelpTexts, which escapes them on its forms and read-only pages."""
    found = []
    for model, model_admin in admin.site._registry.items():
        inlines = [inline(model, admin.site) for inline in model_admin.inlines]
        for each in [model_admin, *inlines]:
            texts = [str(getattr(f, "help_text", "") or "") for f in each.model._meta.get_fields()]
            texts += [str(text) for text in getattr(each, "help_texts", {}).values()]
            if any("<" in text for text in texts):
                found.append(each.model._meta.label)
                assert isinstance(each, PlainHelpTexts), f"{type(each).__name__} shows a help text with < as a tag"
    assert {"agents.Agent", "mcpservers.McpServer", "tools.ApprovalRule"} <= set(found)


def test_a_read_only_page_shows_the_placeholder_too(db):
    """Staff who may only view MCP servers get the page read-only: the help text is the model's, escaped as well."""
    staff = get_user_model().objects.create_user("viewer", password="viewer-password-1", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename="view_mcpserver"))
    row = McpServer.objects.create(name="docs", transport="stdio", command="true", enabled=False)
    client = Client()
    client.force_login(staff)
    page = client.get(f"/admin/mcpservers/mcpserver/{row.pk}/change/").content.decode()
    assert 'name="name"' not in page  # read-only
    assert "Starts the name of each of its tools (&lt;name&gt;__&lt;tool&gt;)" in _help_texts(page)


def _help_texts(page: str) -> str:
    """The help texts of a form page, as written in its HTML, with quotes unescaped (the rest left as written)."""
    found = re.findall(r'<div class="help"[^>]*>\s*<div>(.*?)</div>\s*</div>', page, flags=re.S)
    return "\n".join(text.replace("&quot;", '"').replace("&#x27;", "'").replace("&#39;", "'") for text in found)
