"""The VAPID key is made once and kept, readable by its owner only, like the secret key; a key from the environment
is used as it is."""

import base64
import stat

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from notifications import vapid


def test_the_key_is_made_once_and_kept_in_a_private_file(settings, tmp_path):
    settings.AGENTWEB_VAPID_KEY_FILE = tmp_path / "vapid_key"
    first = vapid.public_key()
    assert stat.S_IMODE((tmp_path / "vapid_key").stat().st_mode) == 0o600
    assert vapid.public_key() == first
    point = base64.urlsafe_b64decode(first + "=" * (-len(first) % 4))
    assert len(point) == 65 and point[0] == 4  # an uncompressed P-256 point, as PushManager.subscribe takes it


def test_a_key_from_the_environment_is_used_and_no_file_made(settings, tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    settings.AGENTWEB_VAPID_PRIVATE_KEY = pem.decode().replace("\n", "\\n")  # one line, as an env file holds it
    settings.AGENTWEB_VAPID_KEY_FILE = tmp_path / "vapid_key"
    expected = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    assert vapid.public_key() == base64.urlsafe_b64encode(expected).rstrip(b"=").decode()
    assert not (tmp_path / "vapid_key").exists()
