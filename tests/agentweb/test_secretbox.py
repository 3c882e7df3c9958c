"""agentweb.secretbox: Fernet tokens with a prefix, rotation through several keys, a key derived from SECRET_KEY
when AGENTWEB_SECRET_KEYS is not set, and errors that never quote a key or a secret."""

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from agentweb.secretbox import (
    PREFIX,
    InvalidSecretKeys,
    SecretBox,
    UnreadableSecret,
    UnreadableSecretError,
    box,
    derive_key,
    is_encrypted,
    parse_keys,
)

KEY_A = Fernet.generate_key()
KEY_B = Fernet.generate_key()
SECRET = "sk-box-secret-0123456789"


def test_a_secret_is_stored_as_a_prefixed_token_and_read_back():
    stored = SecretBox([KEY_A]).encrypt(SECRET)

    assert stored.startswith(PREFIX) and is_encrypted(stored)
    assert SECRET not in stored
    assert stored != SecretBox([KEY_A]).encrypt(SECRET)  # a fresh token every time
    assert SecretBox([KEY_A]).decrypt(stored) == SECRET
    assert Fernet(KEY_A).decrypt(stored[len(PREFIX) :].encode()).decode() == SECRET  # plain Fernet underneath


def test_plaintext_from_before_encryption_is_read_as_it_is():
    assert not is_encrypted(SECRET)
    assert SecretBox([KEY_A]).decrypt(SECRET) == SECRET


def test_the_first_key_encrypts_and_every_key_decrypts():
    old = SecretBox([KEY_A]).encrypt(SECRET)
    both = SecretBox([KEY_B, KEY_A])

    assert both.decrypt(old) == SECRET
    rotated = both.reencrypt(old)
    assert SecretBox([KEY_B]).decrypt(rotated) == SECRET
    with pytest.raises(UnreadableSecretError):
        SecretBox([KEY_A]).decrypt(rotated)
    assert SecretBox([KEY_B]).decrypt(both.reencrypt(SECRET)) == SECRET  # plaintext gets encrypted


def test_a_token_of_another_key_or_a_damaged_one_is_unreadable_and_the_error_quotes_nothing():
    for stored in (SecretBox([KEY_A]).encrypt(SECRET), PREFIX + "not-a-token", PREFIX):
        with pytest.raises(UnreadableSecretError) as error:
            SecretBox([KEY_B]).decrypt(stored)
        assert str(error.value) == "No configured key decrypts this secret."


def test_the_derived_key_is_stable_per_secret_key_and_a_valid_fernet_key():
    assert derive_key("one") == derive_key("one")
    assert derive_key("one") != derive_key("two")
    assert Fernet(derive_key("one"))  # 32 bytes of URL-safe base64


def test_keys_are_parsed_from_a_list_or_a_comma_separated_string():
    assert parse_keys(f" {KEY_A.decode()} ,{KEY_B.decode()},") == [KEY_A, KEY_B]
    assert parse_keys([KEY_A.decode()]) == [KEY_A]
    assert parse_keys("") == []


@pytest.mark.parametrize("bad", ["not-a-key", "x" * 44, Fernet.generate_key().decode()[:-4], "ä" * 44])
def test_a_bad_key_is_named_by_position_never_quoted(bad):
    with pytest.raises(InvalidSecretKeys) as error:
        parse_keys([KEY_A.decode(), bad])
    assert "Key 2 of AGENTWEB_SECRET_KEYS" in str(error.value)
    assert bad not in str(error.value)
    assert "Fernet.generate_key()" in str(error.value)


def test_without_configured_keys_the_box_uses_the_key_derived_from_secret_key(settings):
    settings.AGENTWEB_SECRET_KEYS = []
    stored = box().encrypt(SECRET)

    assert SecretBox([derive_key(settings.SECRET_KEY)]).decrypt(stored) == SECRET
    settings.SECRET_KEY = "another-django-secret-key"
    with pytest.raises(UnreadableSecretError):
        box().decrypt(stored)


def test_configured_keys_encrypt_and_the_derived_key_still_reads_what_it_wrote(settings):
    settings.AGENTWEB_SECRET_KEYS = []
    before = box().encrypt(SECRET)
    settings.AGENTWEB_SECRET_KEYS = [KEY_A.decode()]

    stored = box().encrypt(SECRET)
    assert SecretBox([KEY_A]).decrypt(stored) == SECRET  # the first configured key encrypts
    assert box().decrypt(before) == SECRET  # turning the variable on locks nothing out


def test_a_bad_configured_key_is_a_configuration_error(settings):
    settings.AGENTWEB_SECRET_KEYS = ["nope"]
    with pytest.raises(ImproperlyConfigured, match="Key 1 of AGENTWEB_SECRET_KEYS"):
        box()


def test_an_unreadable_secret_keeps_its_token_is_truthy_and_shows_nothing():
    token = SecretBox([KEY_A]).encrypt(SECRET)
    value = UnreadableSecret(token)

    assert value and value.token == token
    assert value == UnreadableSecret(token) and value != token
    assert token not in repr(value) and token not in str(value)
    message = UnreadableSecret.problem("The API key of model configuration 'Work'")
    assert message.startswith("The API key of model configuration 'Work' cannot be decrypted with AGENTWEB_SECRET_KEYS")


def test_secrets_written_while_make_run_used_the_former_development_key_stay_readable(settings):
    # Until `make run` made a secret key of its own, it ran with this public one (the old settings' default).
    settings.AGENTWEB_SECRET_KEYS = []
    stored = SecretBox([derive_key("django-insecure-agentweb-development-only")]).encrypt(SECRET)

    assert box().decrypt(stored) == SECRET
    assert SecretBox([derive_key(settings.SECRET_KEY)]).decrypt(box().reencrypt(stored)) == SECRET
