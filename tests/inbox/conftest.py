# The chat's websocket client and its fixtures (a real socket through the real session middleware).
from tests.chat.conftest import calculator_needs_approval, close_the_shared_http_client, connect  # noqa: F401
