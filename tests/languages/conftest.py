import pytest

from tests.support.catalogues import compiled


@pytest.fixture(scope="session", autouse=True)
def catalogues_compiled():
    """The .mo files `make` builds, built here too when the tests run without it."""
    compiled()
