"""agentweb/adapters/django.py's contract with Django: the ASGI handler's steps ASGIHandlerInOneTrip calls."""

import inspect

from tests.support.library_contracts import at_its_pin, has_method


def test_django_is_installed_at_its_pin():
    at_its_pin("django")


def test_the_asgi_handlers_steps():
    from django.core.handlers.asgi import ASGIHandler

    has_method(ASGIHandler, "read_body", "receive")
    has_method(ASGIHandler, "create_request", "scope", "body_file")
    has_method(ASGIHandler, "send_response", "response", "send")
    has_method(ASGIHandler, "handle", "scope", "receive", "send")
    has_method(ASGIHandler, "load_middleware", "is_async")
    has_method(ASGIHandler, "get_response", "request")
    # An async-streaming response (the API's event streams) is sent watching for the client's disconnect, as Django's
    # handle does, and its iterator closed then: what it follows is let go.
    has_method(ASGIHandler, "listen_for_disconnect", "receive")
    assert "listen_for_disconnect" in inspect.getsource(ASGIHandler.handle), "Django no longer watches for it"
    assert isinstance(ASGIHandler.chunk_size, int), "ASGIHandler.chunk_size is gone"
    handle = inspect.getsource(ASGIHandler.handle)
    for step in ("read_body", "request_started", "set_script_prefix", "create_request", "send_response"):
        assert step in handle, f"Django's ASGIHandler.handle no longer calls {step}: compare adapters/django.py's"
