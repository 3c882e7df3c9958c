"""A model configuration kept for a group: in its members' pickers only, refused to anyone else who names it (as if
it did not exist), refused as a thread's model to a person outside (a clear error); the default is everyone's."""

import pytest
from django.test import Client

from modelconfig.models import ModelConfiguration
from modelconfig.services import ModelNotAllowed, UnknownModel, available_models, check_choice, config_for
from tools.services import groups_of, settings_stamp

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept(research):
    row = ModelConfiguration.objects.create(name="Research model", api="demo")
    row.groups.add(research)
    return row


def test_the_picker_shows_a_groups_model_to_its_members_only(owner, member, kept):
    public = ModelConfiguration.objects.create(name="Everyone's", api="demo")
    stamp = settings_stamp()
    mine = [entry["name"] for entry in available_models(groups=groups_of(member, stamp=stamp), stamp=stamp)]
    theirs = [entry["name"] for entry in available_models(groups=groups_of(owner, stamp=stamp), stamp=stamp)]
    assert "Research model" in mine and "Everyone's" in mine
    assert "Research model" not in theirs and "Everyone's" in theirs
    assert all("groups" not in entry for entry in available_models(groups=frozenset()))  # never sent to a browser
    assert public.may_use(frozenset()) and not kept.may_use(frozenset({"sales"}))


def test_naming_a_groups_model_outside_it_is_as_if_it_did_not_exist(owner, member, kept):
    with pytest.raises(UnknownModel):
        check_choice(str(kept.pk), groups=groups_of(owner, stamp=None))
    assert check_choice(str(kept.pk), groups=groups_of(member, stamp=None))["name"] == "Research model"


def test_a_run_on_a_groups_model_is_refused_outside_it_with_a_clear_error(owner, member, kept):
    with pytest.raises(ModelNotAllowed, match="'Research model' is not available to you; pick another model"):
        config_for(str(kept.pk), groups=groups_of(owner, stamp=None))
    assert config_for(str(kept.pk), groups=groups_of(member, stamp=None))[1]["name"] == "Research model"
    assert config_for(str(kept.pk))[1]["name"] == "Research model"  # a page's label of a thread's model: no run


def test_a_change_of_the_models_groups_reaches_the_kept_picker(owner, research, kept):
    stamp = settings_stamp()
    assert "Research model" not in [
        e["name"] for e in available_models(groups=groups_of(owner, stamp=stamp), stamp=stamp)
    ]
    kept.groups.remove(research)  # a write the settings stamp sees (tools/settings_cache.py WATCHED)
    stamp = settings_stamp()
    assert "Research model" in [e["name"] for e in available_models(groups=groups_of(owner, stamp=stamp), stamp=stamp)]


def test_the_admin_keeps_the_default_model_everyones(research, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="root-password-1")
    client = Client()
    client.force_login(admin)
    form = {
        "name": "Main",
        "api": "demo",
        "tool_protocol": "native",
        "context_window": "8192",
        "enabled": "on",
        "is_default": "on",
        "groups": [str(research.pk)],
    }
    response = client.post("/admin/modelconfig/modelconfiguration/add/", form)
    assert response.status_code == 200 and "The default model is everyone" in response.content.decode()
    assert not ModelConfiguration.objects.exists()
    form.pop("is_default")
    assert client.post("/admin/modelconfig/modelconfiguration/add/", form).status_code == 302
    assert ModelConfiguration.objects.get().group_names() == frozenset({"research"})
