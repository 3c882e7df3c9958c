import pytest


@pytest.fixture(autouse=True)
def quick_and_isolated_settings():
    """tools/ is plain Python: override the project-wide settings fixture so these tests need no Django."""
