from tests.chat.conftest import close_the_shared_http_client, connect  # noqa: F401
