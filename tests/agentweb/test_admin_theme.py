"""The admin in the app's colours: static/admin-theme/admin.css holds the app's colours under --aw- names (Django's
admin has an --accent of its own), each the same as static/chat/app.css's; and the admin's pages say which theme the
person picked on the settings page (its cookie), as the app's pages do, for the stylesheet to follow."""

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

STATIC = Path(__file__).resolve().parents[2] / "static"


def variables(css: str, prefix: str = "--") -> dict[str, str]:
    root = css[css.index(":root {") : css.index("}", css.index(":root {"))]
    return {name: value.strip() for name, value in re.findall(rf"({prefix}[\w-]+):\s*([^;]+);", root)}


def test_the_admins_colours_and_fonts_are_the_apps():
    app = variables((STATIC / "chat" / "app.css").read_text())
    admin = variables((STATIC / "admin-theme" / "admin.css").read_text(), prefix="--aw-")
    ours = {name.removeprefix("--aw-"): value for name, value in admin.items() if not name.startswith("--aw-series")}
    assert len(ours) >= 15
    for name, value in ours.items():
        assert app.get(f"--{name}") == value, f"--aw-{name} is not app.css's --{name}"


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("boss", password="boss-password-1"))
    return client


@pytest.mark.parametrize(("cookie", "scheme"), [(None, "light dark"), ("dark", "dark"), ("light", "light")])
def test_an_admin_page_follows_the_theme_picked_in_settings(admin_client, cookie, scheme):
    if cookie:
        admin_client.cookies["agentweb_theme"] = cookie
    page = admin_client.get("/admin/").content.decode()
    assert f'<meta name="color-scheme" content="{scheme}">' in page
    assert "admin-theme/admin.css" in page
    assert "admin/js/theme.js" not in page and "dark_mode.css" not in page  # Django's own switch would disagree
    assert 'id="admin-theme-link" ' in page and 'href="/settings/"' in page


def test_a_cookie_that_is_not_a_theme_is_the_systems(admin_client):
    admin_client.cookies["agentweb_theme"] = '"><script>'
    page = admin_client.get("/admin/").content.decode()
    assert '<meta name="color-scheme" content="light dark">' in page
    assert '"><script>' not in page
