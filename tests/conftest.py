import pytest
from django.contrib.auth import get_user_model
from hypothesis import settings as hypothesis_settings

# Property tests check behaviour, not speed: hypothesis's per-example deadline (200 ms) fails them on a busy
# machine for no fault of the code. Timing belongs in bench/.
hypothesis_settings.register_profile("agentweb", deadline=None)
hypothesis_settings.load_profile("agentweb")

DEMO = {"api": "demo", "base_url": "", "model": "", "api_key": "", "tool_protocol": "native"}


@pytest.fixture(autouse=True)
def quick_and_isolated_settings(settings, tmp_path_factory):
    """Tests never depend on the machine's AGENTWEB_* variables, and the demo model does not pause."""
    settings.AGENTWEB_LLM = dict(DEMO)
    settings.AGENTWEB_DEMO_DELAY = 0
    settings.AGENTWEB_MAX_STEPS = 25
    # Hashing test passwords the production way costs half a second per user.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Uploads (attachments) go to a folder of the test's own, never the checkout's media/.
    settings.MEDIA_ROOT = str(tmp_path_factory.mktemp("media"))


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("owner", password="owner-password-1")


@pytest.fixture
def stranger(db):
    return get_user_model().objects.create_user("stranger", password="stranger-password-1")
