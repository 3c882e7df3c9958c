"""Every page forbids inline scripts and framing."""

import pytest


@pytest.mark.django_db
def test_the_login_page_forbids_inline_scripts_and_framing(client):
    response = client.get("/accounts/login/")
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_the_chat_page_has_no_inline_script(client, owner):
    client.force_login(owner)
    html = client.get("/").content.decode()
    import re

    for tag in re.findall(r"<script[^>]*>", html):
        assert "src=" in tag or 'type="application/json"' in tag, tag
