import pytest

from tools.settings_cache import SETTINGS_CACHE


@pytest.fixture(autouse=True)
def forget_kept_settings():
    """A turn opened here keeps the model it read under the settings stamp, which a test's rollback leaves as it
    was: a later test that serves another model (tests/conftest.py model_server) must not be given this one."""
    yield
    SETTINGS_CACHE.clear()
