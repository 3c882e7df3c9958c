import pytest

from modelconfig.models import ModelConfiguration

SECRET = "sk-row-secret-9f8e7d6c5b4a"


@pytest.fixture
def make_row(db):
    """A model configuration row; keyword arguments override the fields."""

    def make(**fields) -> ModelConfiguration:
        values = {
            "name": "Local Qwen",
            "api": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "qwen3",
            "api_key": SECRET,
            **fields,
        }
        return ModelConfiguration.objects.create(**values)

    return make
