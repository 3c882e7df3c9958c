import pytest
from django.contrib.auth import get_user_model
from django.utils import translation
from hypothesis import settings as hypothesis_settings

from tests.support.model_server import ScriptedModelServer
from tools.settings_cache import SETTINGS_CACHE

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
    # The Web Push key (notifications/vapid.py) is made in the test's folder, never the checkout.
    settings.AGENTWEB_VAPID_KEY_FILE = tmp_path_factory.mktemp("vapid") / "vapid_key"


@pytest.fixture(autouse=True)
def forget_kept_settings():
    """What a test's turn kept under the settings stamp (a model, an agent), which the test's rollback leaves as it
    was: a later test that serves another model (model_server below) must not be given this one."""
    yield
    SETTINGS_CACHE.clear()


@pytest.fixture(autouse=True)
def language_of_the_site():
    """Each test starts in the site's language: a page asked for in German (LocaleMiddleware activates it in the
    calling thread, and the test client's thread is the test's) leaves German active for whatever runs after it."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("owner", password="owner-password-1")


@pytest.fixture
def stranger(db):
    return get_user_model().objects.create_user("stranger", password="stranger-password-1")


@pytest.fixture
def staff(db):
    """Staff who may look at people in the admin (auth.view_user), and nothing more."""
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user("staff", password="staff-password-1", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_user", content_type__app_label="auth"))
    return user


@pytest.fixture
def research(db):
    """A group that things can be kept for (docs/teams.md, Groups)."""
    from django.contrib.auth.models import Group

    return Group.objects.create(name="research")


@pytest.fixture
def member(db, research):
    """A person in the research group."""
    user = get_user_model().objects.create_user("member", password="member-password-1")
    user.groups.add(research)
    return user


@pytest.fixture
def model_server(settings):
    """The scripted model server (tests/support/model_server.py), an OpenAI-compatible one, as the default model."""
    with ScriptedModelServer() as server:
        settings.AGENTWEB_LLM = {
            "api": "openai",
            "base_url": server.base_url,
            "model": "test-model",
            "api_key": "sk-test-key",
            "tool_protocol": "native",
        }
        yield server
