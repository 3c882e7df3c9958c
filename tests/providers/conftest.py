"""What every provider test shares."""

import pytest

from providers.client import close_http_client


@pytest.fixture(autouse=True)
async def close_the_shared_http_client():
    """Each test runs its own event loop: the providers' shared client of that loop is closed with it."""
    yield
    await close_http_client()
