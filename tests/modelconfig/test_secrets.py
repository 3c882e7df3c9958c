"""A model configuration's API key at rest: a token in the column, plaintext only in memory; rotated by
rotate_secrets; a key encrypted with a key that is not configured fails the run with a message naming the
configuration, while the picker and the admin keep working; the migration encrypts the rows from before."""

import io
import json
import logging
from contextlib import contextmanager

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from agentweb.secretbox import PREFIX, SecretBox, UnreadableSecret
from modelconfig.admin import MASKED, UNREADABLE
from modelconfig.models import ModelConfiguration, UnreadableKey
from modelconfig.services import available_models, check_choice, config_for
from providers.config import build_provider
from providers.types import ModelError
from tests.chat.conftest import connect  # noqa: F401  (the websocket client fixture)
from tools.models import HttpTool

from .conftest import SECRET
from .test_admin import admin_client_, change_url, form_data  # noqa: F401  (a superuser's client fixture)

pytestmark = pytest.mark.django_db

KEY_A, KEY_B, KEY_C = (Fernet.generate_key().decode() for _ in range(3))
TABLE = "modelconfig_modelconfiguration"


@pytest.fixture(autouse=True)
def key_a(settings):
    settings.AGENTWEB_SECRET_KEYS = [KEY_A]


def raw_key(row) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT api_key FROM {TABLE} WHERE id = %s", [row.pk])
        return cursor.fetchone()[0]


def decrypts_with(key: str, stored: str) -> str:
    return SecretBox([key.encode()]).decrypt(stored)


# --- at rest ----------------------------------------------------------------------------------


def test_the_column_holds_no_plaintext_key_and_the_model_reads_it_back(make_row):
    row = make_row()

    stored = raw_key(row)
    assert stored.startswith(PREFIX)
    assert SECRET not in stored
    assert decrypts_with(KEY_A, stored) == SECRET
    assert ModelConfiguration.objects.get(pk=row.pk).api_key == SECRET
    assert ModelConfiguration.objects.get(pk=row.pk).to_config().api_key == SECRET


def test_the_sql_the_database_log_would_print_holds_no_plaintext_key(make_row, settings):
    settings.DEBUG = True  # django.db.backends logs every query with its parameters
    with CaptureQueriesContext(connection) as queries:
        row = make_row()
        row.api_key = "sk-another-secret-key-5678"
        row.save()
        ModelConfiguration.objects.filter(pk=row.pk).update(api_key="sk-third-secret-key-9012")
        list(ModelConfiguration.objects.all())
    sql = "\n".join(query["sql"] for query in queries.captured_queries)
    assert "api_key" in sql
    for secret in (SECRET, "sk-another-secret-key-5678", "sk-third-secret-key-9012"):
        assert secret not in sql


# --- rotation ----------------------------------------------------------------------------------


def test_rotate_secrets_moves_every_secret_to_the_first_key(make_row, settings):
    row = make_row()
    tool = HttpTool.objects.create(
        name="lookup", description="d", url_template="https://api.example.com/", headers={"X-Api-Key": SECRET}
    )
    empty = make_row(name="Keyless", api_key="")
    before = raw_key(row)
    assert decrypts_with(KEY_A, before) == SECRET

    settings.AGENTWEB_SECRET_KEYS = [KEY_B, KEY_A]  # the new key first, the old one still listed
    assert ModelConfiguration.objects.get(pk=row.pk).api_key == SECRET
    updated_at = ModelConfiguration.objects.get(pk=row.pk).updated_at
    out = io.StringIO()
    call_command("rotate_secrets", stdout=out)
    assert "Encrypted 2 secret(s) again" in out.getvalue()

    after = raw_key(row)
    assert after != before and decrypts_with(KEY_B, after) == SECRET
    assert raw_key(empty) == ""
    assert ModelConfiguration.objects.get(pk=row.pk).updated_at == updated_at  # rotation is not an edit
    settings.AGENTWEB_SECRET_KEYS = [KEY_B]  # the old key dropped
    assert ModelConfiguration.objects.get(pk=row.pk).api_key == SECRET
    assert HttpTool.objects.get(pk=tool.pk).headers == {"X-Api-Key": SECRET}


def test_rotate_secrets_encrypts_plaintext_left_from_before(make_row):
    row = make_row()
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET api_key = %s WHERE id = %s", [SECRET, row.pk])

    call_command("rotate_secrets", stdout=io.StringIO())
    assert decrypts_with(KEY_A, raw_key(row)) == SECRET


def test_rotate_secrets_reports_what_it_cannot_decrypt_and_rotates_the_rest(make_row, settings):
    lost = make_row(name="Lost")
    settings.AGENTWEB_SECRET_KEYS = [KEY_B]
    kept = make_row(name="Kept")
    token = raw_key(lost)

    settings.AGENTWEB_SECRET_KEYS = [KEY_C, KEY_B]
    with pytest.raises(CommandError) as error:
        call_command("rotate_secrets", stdout=io.StringIO())
    message = str(error.value)
    assert f"model configuration {lost.pk}: api_key" in message
    assert token not in message and SECRET not in message
    assert raw_key(lost) == token
    assert decrypts_with(KEY_C, raw_key(kept)) == SECRET


# --- a key that cannot be decrypted ------------------------------------------------------------


@pytest.fixture
def unreadable_row(make_row, settings):
    """A configuration whose key was encrypted with KEY_A, read while only KEY_C is configured."""
    row = make_row(name="Work model")
    settings.AGENTWEB_SECRET_KEYS = [KEY_C]
    return ModelConfiguration.objects.get(pk=row.pk)


def test_a_wrong_key_fails_the_provider_with_a_message_naming_the_configuration(unreadable_row, caplog):
    assert isinstance(unreadable_row.api_key, UnreadableSecret)
    assert unreadable_row.key_is_unreadable
    config = unreadable_row.to_config()  # made: the picker and the thread page need only the name
    assert repr(config)

    with caplog.at_level(logging.WARNING, logger="agentweb"), pytest.raises(UnreadableKey) as error:
        build_provider(config)
    message = str(error.value)
    assert isinstance(error.value, ModelError)  # what a run reports to the person as it is
    assert message.startswith(
        "The API key of model configuration 'Work model' cannot be decrypted with AGENTWEB_SECRET_KEYS"
    )
    assert unreadable_row.api_key.token not in message
    assert "'Work model'" in caplog.text and unreadable_row.api_key.token not in caplog.text


def test_with_a_wrong_key_the_picker_and_the_choice_still_work(unreadable_row):
    assert [entry["name"] for entry in available_models(groups=frozenset())] == [
        "Demo model (offline, scripted)",
        "Work model",
    ]
    assert check_choice(str(unreadable_row.pk), groups=frozenset())["name"] == "Work model"
    assert config_for(str(unreadable_row.pk))[1]["id"] == str(unreadable_row.pk)


def test_a_demo_configuration_needs_no_key_and_runs_with_an_unreadable_one(make_row, settings):
    row = make_row(name="Playground", api="demo", model="", base_url="")
    settings.AGENTWEB_SECRET_KEYS = [KEY_C]
    build_provider(ModelConfiguration.objects.get(pk=row.pk).to_config())


@pytest.mark.django_db(transaction=True)
async def test_a_run_on_a_configuration_with_an_unreadable_key_fails_with_the_message(connect, owner, settings):  # noqa: F811
    row = await ModelConfiguration.objects.acreate(name="Work model", model="m", base_url="http://127.0.0.1:9/v1")
    row.api_key = SECRET
    await row.asave()
    settings.AGENTWEB_SECRET_KEYS = [KEY_C]
    unreadable = await ModelConfiguration.objects.filter(pk=row.pk).values_list("api_key", flat=True).aget()

    client = await connect(owner)
    await client.ask("hello", model=str(row.pk))
    events = await client.run_to_end()
    assert events[-1]["type"] == "run.failed"
    assert "The API key of model configuration 'Work model' cannot be decrypted" in events[-1]["error"]
    frames = json.dumps(events)
    assert SECRET not in frames and unreadable.token not in frames


def test_the_admin_opens_says_the_key_cannot_be_decrypted_and_keeps_it(admin_client_, unreadable_row):  # noqa: F811
    token = unreadable_row.api_key.token
    listing = admin_client_.get("/admin/modelconfig/modelconfiguration/")
    assert listing.status_code == 200 and UNREADABLE in listing.content.decode()
    page = admin_client_.get(change_url(unreadable_row))
    assert page.status_code == 200
    assert UNREADABLE in page.content.decode()
    assert token not in page.content.decode() and SECRET not in page.content.decode()

    same_server = {"name": "Renamed", "api_key": "", "base_url": unreadable_row.base_url}
    response = admin_client_.post(change_url(unreadable_row), form_data(**same_server))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert raw_key(unreadable_row) == token  # a blank key field keeps it, for when the key comes back

    admin_client_.post(change_url(unreadable_row), form_data(name="Renamed", api_key="sk-typed-again"))
    row = ModelConfiguration.objects.get(pk=unreadable_row.pk)
    assert row.api_key == "sk-typed-again"
    assert decrypts_with(KEY_C, raw_key(row)) == "sk-typed-again"
    assert MASKED in admin_client_.get(change_url(row)).content.decode()


# --- the migration ----------------------------------------------------------------------------


def migrate(target: tuple[str, str] | None = None) -> None:
    """Migrate the test database to `target` (None: every app's latest)."""
    executor = MigrationExecutor(connection)
    executor.migrate([target] if target else executor.loader.graph.leaf_nodes())


@contextmanager
def at_migration(target: tuple[str, str]):
    """The database at `target` inside the block, at the latest migrations after it (however it ends)."""
    migrate(target)
    try:
        yield
    finally:
        migrate()


@pytest.mark.django_db(transaction=True)
def test_the_migration_encrypts_plaintext_rows_and_its_reverse_decrypts_them():
    before, after = ("modelconfig", "0001_initial"), ("modelconfig", "0002_encrypt_api_key")
    with at_migration(before):
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TABLE} (name, api, base_url, model, api_key, tool_protocol, context_window, enabled, "
                "is_default, created_at, updated_at) VALUES ('Old', 'openai', '', 'm', %s, 'native', 8192, true, "
                "false, '2026-01-01', '2026-01-01'), ('Keyless', 'openai', '', 'm', '', 'native', 8192, true, false, "
                "'2026-01-01', '2026-01-01')",
                [SECRET],
            )
        migrate(after)
        # Without the fields later migrations add (the prices, 0003; supports_images, 0004): the table is as 0002
        # left it.
        rows = ModelConfiguration.objects.defer("price_input", "price_output", "supports_images")
        old = rows.get(name="Old")
        assert decrypts_with(KEY_A, raw_key(old)) == SECRET
        assert old.api_key == SECRET
        assert raw_key(rows.get(name="Keyless")) == ""

        migrate(before)
        assert raw_key(old) == SECRET


# --- the password of a base URL ------------------------------------------------------------------

URL_PASSWORD = "pa55-w0rd-in-url"
URL_WITH_PASSWORD = f"http://alice:{URL_PASSWORD}@models.internal:8080/v1"


def raw_url(row) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT base_url FROM {TABLE} WHERE id = %s", [row.pk])
        return cursor.fetchone()[0]


def test_a_base_url_with_a_password_is_stored_encrypted_and_read_back(make_row):
    row = make_row(base_url=URL_WITH_PASSWORD)

    stored = raw_url(row)
    assert stored.startswith(PREFIX) and URL_PASSWORD not in stored
    assert ModelConfiguration.objects.get(pk=row.pk).to_config().base_url == URL_WITH_PASSWORD


def test_a_base_url_without_a_password_is_stored_as_it_is(make_row):
    row = make_row(base_url="http://alice@models.internal:8080/v1")

    assert raw_url(row) == "http://alice@models.internal:8080/v1"


def test_rotation_reencrypts_a_base_url_with_a_password_and_leaves_a_plain_one(settings, make_row):
    secret_url = make_row(base_url=URL_WITH_PASSWORD, api_key="")
    plain_url = make_row(name="Plain", base_url="http://127.0.0.1:9/v1", api_key="")
    settings.AGENTWEB_SECRET_KEYS = [KEY_B, KEY_A]
    out = io.StringIO()

    call_command("rotate_secrets", stdout=out)

    assert "Encrypted 1 secret(s)" in out.getvalue()
    assert decrypts_with(KEY_B, raw_url(secret_url)) == URL_WITH_PASSWORD
    assert raw_url(plain_url) == "http://127.0.0.1:9/v1"


def test_a_base_url_no_key_decrypts_fails_the_run_naming_it_and_the_admin_keeps_it(
    settings,
    make_row,
    admin_client_,  # noqa: F811
):
    row = make_row(base_url=URL_WITH_PASSWORD)
    settings.AGENTWEB_SECRET_KEYS = [KEY_C]
    row = ModelConfiguration.objects.get(pk=row.pk)
    with pytest.raises(UnreadableKey, match="base URL"):
        build_provider(row.to_config())

    page = admin_client_.get(change_url(row)).content.decode()
    assert "cannot be decrypted" in page and PREFIX not in page
    admin_client_.post(change_url(row), form_data(name="Renamed", base_url=""))
    settings.AGENTWEB_SECRET_KEYS = [KEY_C, KEY_A]
    assert ModelConfiguration.objects.get(pk=row.pk).base_url == URL_WITH_PASSWORD


@pytest.mark.django_db(transaction=True)
def test_the_migration_encrypts_a_base_urls_password_and_its_reverse_decrypts_it():
    before, after = (
        ("modelconfig", "0004_modelconfiguration_supports_images"),
        ("modelconfig", "0005_encrypt_base_url_password"),
    )
    with at_migration(before):
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TABLE} (name, api, base_url, model, api_key, tool_protocol, context_window, enabled, "
                "is_default, supports_images, created_at, updated_at) VALUES "
                "('Old', 'openai', %s, 'm', '', 'native', 8192, true, false, false, '2026-01-01', '2026-01-01'), "
                "('Open', 'openai', 'http://h/v1', 'm', '', 'native', 8192, true, false, false, '2026-01-01', "
                "'2026-01-01')",
                [URL_WITH_PASSWORD],
            )
        migrate(after)
        old, open_ = ModelConfiguration.objects.get(name="Old"), ModelConfiguration.objects.get(name="Open")
        assert decrypts_with(KEY_A, raw_url(old)) == URL_WITH_PASSWORD
        assert raw_url(open_) == "http://h/v1"

        migrate(before)
        assert raw_url(old) == URL_WITH_PASSWORD
