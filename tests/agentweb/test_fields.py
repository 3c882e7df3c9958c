"""EncryptedTextField and EncryptedJSONField on real rows (a model configuration's key, an HTTP tool's headers):
tokens in the column, plaintext in Python, tokens in dumpdata, and the migration helpers that encrypt a column
in place and back."""

import json

import pytest
from cryptography.fernet import Fernet
from django.core import serializers
from django.db import connection

from agentweb.fields import EncryptedJSONField, EncryptedTextField, decrypt_column, encrypt_column
from agentweb.secretbox import PREFIX, SecretBox, UnreadableSecret, UnreadableSecretError
from modelconfig.models import ModelConfiguration
from tools.models import HttpTool

pytestmark = pytest.mark.django_db

KEY = Fernet.generate_key().decode()
SECRET = "sk-field-secret-0123456789"


@pytest.fixture(autouse=True)
def one_key(settings):
    settings.AGENTWEB_SECRET_KEYS = [KEY]


def raw(table: str, column: str, pk: int):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def write_raw(table: str, column: str, pk: int, value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {column} = %s WHERE id = %s", [value, pk])


def config(**fields) -> ModelConfiguration:
    return ModelConfiguration.objects.create(**{"name": "Work", "model": "m", "api_key": SECRET, **fields})


def test_the_column_holds_a_token_and_the_model_reads_the_plaintext():
    row = config()
    stored = raw("modelconfig_modelconfiguration", "api_key", row.pk)

    assert stored.startswith(PREFIX) and SECRET not in stored
    assert SecretBox([KEY.encode()]).decrypt(stored) == SECRET
    assert ModelConfiguration.objects.get().api_key == SECRET
    assert ModelConfiguration.objects.values_list("api_key", flat=True).get() == SECRET


def test_the_empty_value_stays_empty_and_can_be_filtered_on():
    row = config(api_key="")

    assert raw("modelconfig_modelconfiguration", "api_key", row.pk) == ""
    assert list(ModelConfiguration.objects.filter(api_key="")) == [row]


def test_update_and_bulk_update_encrypt_too():
    row = config()
    ModelConfiguration.objects.filter(pk=row.pk).update(api_key="sk-updated-secret")
    assert "sk-updated" not in raw("modelconfig_modelconfiguration", "api_key", row.pk)
    row.api_key = "sk-bulk-secret"
    ModelConfiguration.objects.bulk_update([row], ["api_key"])
    assert "sk-bulk" not in raw("modelconfig_modelconfiguration", "api_key", row.pk)
    assert ModelConfiguration.objects.get().api_key == "sk-bulk-secret"


def test_a_plaintext_row_from_before_is_read_as_it_is_and_encrypted_by_the_next_save():
    row = config()
    write_raw("modelconfig_modelconfiguration", "api_key", row.pk, SECRET)

    row = ModelConfiguration.objects.get()
    assert row.api_key == SECRET
    row.save()
    assert raw("modelconfig_modelconfiguration", "api_key", row.pk).startswith(PREFIX)


def test_a_token_of_another_key_reads_as_unreadable_and_a_save_writes_it_back_unchanged(settings):
    row = config()
    token = raw("modelconfig_modelconfiguration", "api_key", row.pk)
    settings.AGENTWEB_SECRET_KEYS = [Fernet.generate_key().decode()]

    row = ModelConfiguration.objects.get()
    assert row.api_key == UnreadableSecret(token)
    row.name = "Renamed"
    row.full_clean()  # to_python keeps it: not turned into the text of its repr
    row.save()
    assert raw("modelconfig_modelconfiguration", "api_key", row.pk) == token
    settings.AGENTWEB_SECRET_KEYS = [KEY]
    assert ModelConfiguration.objects.get().api_key == SECRET


def test_json_is_encrypted_as_one_token_names_included():
    tool = HttpTool.objects.create(
        name="lookup", description="d", url_template="https://api.example.com/", headers={"X-Api-Key": SECRET, "Ä": "ü"}
    )
    stored = raw("tools_httptool", "headers", tool.pk)

    assert stored.startswith(PREFIX) and SECRET not in stored and "X-Api-Key" not in stored
    assert HttpTool.objects.get().headers == {"X-Api-Key": SECRET, "Ä": "ü"}
    assert list(HttpTool.objects.get().headers) == ["X-Api-Key", "Ä"]  # the order is kept


def test_dumpdata_writes_tokens_and_loaddata_reads_them_back():
    config()
    HttpTool.objects.create(name="lookup", description="d", url_template="https://a.example/", headers={"A": SECRET})
    dumped = serializers.serialize("json", [*ModelConfiguration.objects.all(), *HttpTool.objects.all()])

    assert SECRET not in dumped
    fields = [item["fields"] for item in json.loads(dumped)]
    assert fields[0]["api_key"].startswith(PREFIX) and fields[1]["headers"].startswith(PREFIX)
    ModelConfiguration.objects.all().delete()
    HttpTool.objects.all().delete()
    for item in serializers.deserialize("json", dumped):
        item.save()
    assert ModelConfiguration.objects.get().api_key == SECRET
    assert HttpTool.objects.get().headers == {"A": SECRET}


def test_the_text_field_is_write_only_in_a_model_form_the_json_field_not_in_one_at_all():
    widget = EncryptedTextField().formfield().widget
    assert widget.input_type == "password" and widget.render_value is False
    assert EncryptedJSONField().editable is False
    _, path, _, kwargs = EncryptedJSONField(default=dict).deconstruct()
    assert (path, kwargs) == ("agentweb.fields.EncryptedJSONField", {"default": dict})


def test_the_migration_helpers_encrypt_a_column_in_place_and_back():
    row = config(api_key="")
    other = config(name="Other", api_key="")
    write_raw("modelconfig_modelconfiguration", "api_key", row.pk, SECRET)
    assert encrypt_column(connection, "modelconfig_modelconfiguration", "api_key") == 1
    assert encrypt_column(connection, "modelconfig_modelconfiguration", "api_key") == 0  # tokens are left alone
    token = raw("modelconfig_modelconfiguration", "api_key", row.pk)
    assert token.startswith(PREFIX) and raw("modelconfig_modelconfiguration", "api_key", other.pk) == ""

    assert decrypt_column(connection, "modelconfig_modelconfiguration", "api_key") == 1
    assert raw("modelconfig_modelconfiguration", "api_key", row.pk) == SECRET


def test_decrypting_a_column_refuses_a_token_it_cannot_read_naming_the_row(settings):
    row = config()
    settings.AGENTWEB_SECRET_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(UnreadableSecretError) as error:
        decrypt_column(connection, "modelconfig_modelconfiguration", "api_key")
    assert f"row {row.pk}" in str(error.value) and "AGENTWEB_SECRET_KEYS" in str(error.value)
    assert raw("modelconfig_modelconfiguration", "api_key", row.pk).startswith(PREFIX)
