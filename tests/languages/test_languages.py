"""The page's language: the browser's (Accept-Language), else a cookie, and a signed-in person's own choice over
both, kept with them so it follows them to another device; the JavaScript catalogue in the same language."""

import datetime

import pytest
from django.test import Client

from api.keys import issue
from languages.models import LanguageChoice
from tests.support.german import GERMAN_MONTHS

pytestmark = pytest.mark.django_db


def signed_in(user, **headers) -> Client:
    client = Client(**headers)
    client.force_login(user)
    return client


def test_it_speaks_the_browsers_language_before_anyone_signs_in(client):
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5").content.decode()
    assert '<html lang="de">' in page
    assert "Melde dich an, um mit deinen Agenten zu chatten." in page
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert '<html lang="zh-hans"' in page
    assert "登录后即可与你的智能体对话。" in page


def test_a_language_it_does_not_offer_falls_back_to_english(client):
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="pt-BR,pt;q=0.9").content.decode()
    assert '<html lang="en">' in page
    assert "Sign in to chat with your agents." in page


def test_a_choice_in_settings_is_kept_with_the_person_and_follows_them_to_another_device(owner):
    laptop = signed_in(owner, HTTP_ACCEPT_LANGUAGE="en-US")
    response = laptop.post("/settings/language/", {"language": "fr"})
    assert response.status_code == 302 and response["Location"] == "/settings/?saved=1"
    assert response.cookies["agentweb_language"].value == "fr"
    assert "<h1>Paramètres</h1>" in laptop.get("/settings/").content.decode()

    # A phone with an English browser and no cookie: the person's choice, and the cookie for its login page later.
    phone = signed_in(owner, HTTP_ACCEPT_LANGUAGE="en-US")
    response = phone.get("/settings/")
    assert '<html lang="fr"' in response.content.decode()
    assert response.cookies["agentweb_language"].value == "fr"

    # Back to the browser's language: the row goes, and so does the cookie.
    response = laptop.post("/settings/language/", {"language": ""})
    assert not LanguageChoice.objects.filter(user=owner).exists()
    assert response.cookies["agentweb_language"].value == ""
    assert "<h1>Settings</h1>" in laptop.get("/settings/", HTTP_ACCEPT_LANGUAGE="en-US").content.decode()


def test_a_language_not_offered_is_refused_and_nothing_changes(owner):
    client = signed_in(owner)
    client.post("/settings/language/", {"language": "es"})
    response = client.post("/settings/language/", {"language": "xx-evil"})
    assert response.status_code == 400
    assert LanguageChoice.objects.get(user=owner).language == "es"
    assert "agentweb_language" not in response.cookies


def test_only_a_signed_in_person_chooses_and_only_by_post(client, owner):
    assert client.post("/settings/language/", {"language": "de"}).status_code == 302  # to the login page
    assert not LanguageChoice.objects.exists()
    assert signed_in(owner).get("/settings/language/").status_code == 405


def test_the_settings_page_offers_each_language_in_its_own_name_with_the_choice_selected(owner):
    client = signed_in(owner)
    client.post("/settings/language/", {"language": "zh-hans"})
    page = client.get("/settings/").content.decode()
    for name in ("English", "Deutsch", "Français", "Español", "简体中文"):
        assert name in page
    assert '<option value="zh-hans" lang="zh-hans" selected>简体中文</option>' in page


def test_the_javascript_catalogue_is_in_the_pages_language(client):
    german = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '"Regenerate": "Neu generieren"' in german
    english = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Neu generieren" not in english


def test_the_catalogue_named_in_the_pages_address_is_that_language_and_is_kept_by_the_browser(client):
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    address = page.split('<script src="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert address.startswith("/jsi18n/?l=fr&v=")
    response = client.get(address, HTTP_ACCEPT_LANGUAGE="de")  # the address, not the header, decides
    assert (
        '"Regenerate": "R\\u00e9g\\u00e9n\\u00e9rer"' in response.content.decode()
        or "Régénérer" in response.content.decode()
    )
    assert "immutable" in response["Cache-Control"]


def test_dates_are_written_as_the_language_writes_them(owner):
    issue(owner, "editor", expires_in_days=None, by=owner, ip=None, via="settings")
    client = signed_in(owner)
    client.post("/settings/language/", {"language": "de"})
    page = client.get("/settings/").content.decode()
    today = datetime.datetime.now(datetime.UTC).date()
    assert f"{today.day}. {GERMAN_MONTHS[today.month - 1]} {today.year}" in page
