"""Model configurations in the admin: the key is write-only, one default, only staff with permission."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from modelconfig.admin import MASKED
from modelconfig.models import ModelConfiguration

from .conftest import SECRET

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/modelconfig/modelconfiguration/add/"


def change_url(row):
    return f"/admin/modelconfig/modelconfiguration/{row.pk}/change/"


def form_data(**overrides):
    data = {
        "name": "Local Qwen",
        "api": "openai",
        "base_url": "http://ollama:11434/v1",
        "model": "qwen3",
        "api_key": "",
        "tool_protocol": "native",
        "context_window": "32768",
        "max_output_tokens": "2048",
        "temperature": "0.2",
        "enabled": "on",
        "_save": "Save",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def client_for(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_client_(db):
    return client_for(get_user_model().objects.create_superuser("root", password="root-password-1"))


def staff(username, *codenames):
    user = get_user_model().objects.create_user(username, password=f"{username}-password-1", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="modelconfig", codename__in=codenames))
    return user


def test_a_configuration_is_created_and_its_key_is_never_shown_again(admin_client_):
    response = admin_client_.post(ADD_URL, form_data(api_key=SECRET, is_default="on"))
    assert response.status_code == 302, response.content.decode()[:2000]
    row = ModelConfiguration.objects.get()
    assert (row.name, row.api, row.base_url, row.model, row.api_key) == (
        "Local Qwen",
        "openai",
        "http://ollama:11434/v1",
        "qwen3",
        SECRET,
    )
    assert (row.context_window, row.max_output_tokens, row.temperature, row.is_default) == (32768, 2048, 0.2, True)

    page = admin_client_.get(change_url(row)).content.decode()
    assert SECRET not in page
    assert MASKED in page
    listing = admin_client_.get("/admin/modelconfig/modelconfiguration/").content.decode()
    assert SECRET not in listing
    assert MASKED in listing


def test_a_blank_key_keeps_the_stored_one_a_typed_one_replaces_it_and_remove_clears_it(admin_client_, make_row):
    row = make_row(base_url="http://ollama:11434/v1")  # the form's: the configuration keeps pointing there
    response = admin_client_.post(change_url(row), form_data(name="Renamed", api_key=""))
    assert response.status_code == 302
    row.refresh_from_db()
    assert (row.name, row.api_key) == ("Renamed", SECRET)

    admin_client_.post(change_url(row), form_data(name="Renamed", api_key="sk-new-key"))
    row.refresh_from_db()
    assert row.api_key == "sk-new-key"

    admin_client_.post(change_url(row), form_data(name="Renamed", clear_api_key="on"))
    row.refresh_from_db()
    assert row.api_key == ""
    assert MASKED not in admin_client_.get(change_url(row)).content.decode()


def test_a_form_with_an_error_does_not_render_the_key_just_typed(admin_client_):
    response = admin_client_.post(ADD_URL, form_data(api_key=SECRET, model=""))
    assert response.status_code == 200  # the form again, with the error
    page = response.content.decode()
    assert "Name the model" in page
    assert SECRET not in page


def test_only_one_configuration_is_the_default(admin_client_, make_row):
    first = make_row(name="First", is_default=True)
    response = admin_client_.post(ADD_URL, form_data(name="Second", is_default="on"))
    assert response.status_code == 302
    first.refresh_from_db()
    assert not first.is_default
    assert list(ModelConfiguration.objects.filter(is_default=True).values_list("name", flat=True)) == ["Second"]
    make_row(name="Third", is_default=True)
    assert list(ModelConfiguration.objects.filter(is_default=True).values_list("name", flat=True)) == ["Third"]


def test_the_demo_needs_no_model_name_and_others_do(admin_client_):
    assert admin_client_.post(ADD_URL, form_data(name="Demo", api="demo", model="", base_url="")).status_code == 302
    assert admin_client_.post(ADD_URL, form_data(name="No model", model="")).status_code == 200
    assert admin_client_.post(ADD_URL, form_data(name="Bad URL", base_url="ftp://x")).status_code == 200
    assert list(ModelConfiguration.objects.values_list("name", flat=True)) == ["Demo"]


def test_staff_without_permission_get_nothing(make_row):
    row = make_row()
    client = client_for(staff("nobody"))
    assert client.get("/admin/modelconfig/modelconfiguration/").status_code == 403
    assert client.get(change_url(row)).status_code == 403
    assert client.post(ADD_URL, form_data(name="Sneaky")).status_code == 403


def test_staff_who_may_only_view_see_whether_a_key_is_set_never_the_key(make_row):
    row = make_row()
    client = client_for(staff("viewer", "view_modelconfiguration"))
    response = client.get(change_url(row))
    assert response.status_code == 200
    page = response.content.decode()
    assert SECRET not in page
    assert MASKED in page
    assert client.post(change_url(row), form_data(name="Changed")).status_code == 403


def test_repr_and_str_never_show_the_key(make_row):
    row = make_row()
    assert SECRET not in repr(row)
    assert SECRET not in str(row)
    assert SECRET not in repr(row.to_config())


# --- a password in the base URL (http://user:password@host/v1) is as write-only as the key -------------

URL_PASSWORD = "pa55-w0rd-in-url"
URL_WITH_PASSWORD = f"http://alice:{URL_PASSWORD}@models.internal:8080/v1"


def test_the_password_in_a_base_url_is_shown_nowhere_in_the_admin(admin_client_, make_row):
    row = make_row(base_url=URL_WITH_PASSWORD)
    listing = admin_client_.get("/admin/modelconfig/modelconfiguration/").content.decode()
    change = admin_client_.get(change_url(row)).content.decode()
    for page in (listing, change):
        assert URL_PASSWORD not in page
        assert "models.internal:8080/v1" in page


def test_saving_with_the_password_left_hidden_keeps_it_and_a_typed_one_replaces_it(admin_client_, make_row):
    row = make_row(base_url=URL_WITH_PASSWORD)
    change = admin_client_.get(change_url(row)).content.decode()
    shown = change.split('name="base_url" value="', 1)[1].split('"', 1)[0]
    response = admin_client_.post(change_url(row), form_data(name="Renamed", base_url=shown))
    assert response.status_code == 302
    row.refresh_from_db()
    assert (row.name, row.base_url) == ("Renamed", URL_WITH_PASSWORD)

    admin_client_.post(change_url(row), form_data(name="Renamed", base_url="http://alice:new-pass@models.internal/v1"))
    row.refresh_from_db()
    assert row.base_url == "http://alice:new-pass@models.internal/v1"


def test_staff_who_may_only_view_do_not_see_the_password_in_the_base_url(make_row):
    row = make_row(base_url=URL_WITH_PASSWORD)
    page = client_for(staff("viewer", "view_modelconfiguration")).get(change_url(row)).content.decode()
    assert URL_PASSWORD not in page
    assert "models.internal:8080/v1" in page


def test_prices_are_set_in_the_admin_and_go_to_the_runs_config(admin_client_):
    from decimal import Decimal

    response = admin_client_.post(ADD_URL, form_data(price_input="2.50", price_output="10"))
    assert response.status_code == 302, response.content.decode()[:2000]
    row = ModelConfiguration.objects.get()
    assert (row.price_input, row.price_output) == (Decimal("2.50"), Decimal("10"))
    assert (row.to_config().price_input, row.to_config().price_output) == (Decimal("2.50"), Decimal("10"))
    refused = admin_client_.post(ADD_URL, form_data(name="Negative", price_input="-1"))
    assert refused.status_code == 200 and not ModelConfiguration.objects.filter(name="Negative").exists()
