import pytest

from tests.support.catalogues import compiled


@pytest.fixture(scope="session", autouse=True)
def catalogues_compiled():
    """The .mo files `make` builds, built here too when the tests run without it."""
    compiled()


# The chat socket's fixtures, for the socket's messages in each language (test_socket_messages.py).
from tests.chat.conftest import close_the_shared_http_client, connect  # noqa: E402, F401
