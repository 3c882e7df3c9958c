"""Wherever an admin form asks for a person, the person is picked by name as one types (Django's autocomplete, which
searches the people's admin: username, first and last name, email), never typed as a user id: every form of every
model admin and inline of the site is looked at, so a new one that forgets fails here."""

import pytest
from django.contrib import admin
from django.contrib.admin.widgets import AutocompleteSelect, ForeignKeyRawIdWidget
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

pytestmark = pytest.mark.django_db


def people_fields(model):
    User = get_user_model()
    return [f.name for f in model._meta.get_fields() if f.is_relation and f.concrete and f.related_model is User]


def test_every_form_that_asks_for_a_person_searches_people_by_name():
    boss = get_user_model().objects.create_superuser("boss", password="boss-password-1")
    request = RequestFactory().get("/admin/")
    request.user = boss
    checked = []
    for model, model_admin in admin.site._registry.items():
        may_write = model_admin.has_add_permission(request) or model_admin.has_change_permission(request)
        forms = [model_admin.get_form(request, None, change=True)] if may_write else []
        forms += [
            inline.get_formset(request).form
            for inline in model_admin.get_inline_instances(request)
            if inline.has_add_permission(request, None)
        ]
        for form in forms:
            for name in people_fields(form._meta.model):
                if name not in form.base_fields:
                    continue  # read-only here, or not on the form
                widget = form.base_fields[name].widget
                widget = getattr(widget, "widget", widget)  # inside the admin's add / change links wrapper
                assert not isinstance(widget, ForeignKeyRawIdWidget), f"{model._meta.label}.{name} asks for an id"
                assert isinstance(widget, AutocompleteSelect), f"{model._meta.label}.{name} is not searched by name"
                checked.append(f"{form._meta.model._meta.label}.{name}")
    assert {"chat.Thread.owner", "agents.Agent.owner", "api.ApiKey.user", "schedules.Schedule.owner"} <= set(checked)


def test_the_search_finds_a_person_by_their_last_name(owner):
    owner.first_name, owner.last_name = "Ada", "Lovelace"
    owner.save()
    boss = get_user_model().objects.create_superuser("boss", password="boss-password-1")
    client = Client()
    client.force_login(boss)
    found = client.get(
        "/admin/autocomplete/",
        {"term": "lovel", "app_label": "api", "model_name": "apikey", "field_name": "user"},
    ).json()
    assert [row["text"] for row in found["results"]] == ["owner"]
