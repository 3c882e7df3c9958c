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


@pytest.mark.django_db
def test_images_may_come_from_the_site_data_and_blob_urls_only(client, owner):
    # A tool card shows an artifact's images from Blobs the page made (static/chat/images.js): blob: is allowed for
    # images, and for nothing else.
    client.force_login(owner)
    policy = client.get("/").headers["Content-Security-Policy"]
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    assert directives["img-src"] == ["'self'", "data:", "blob:"]
    assert all("blob:" not in sources for name, sources in directives.items() if name != "img-src")
