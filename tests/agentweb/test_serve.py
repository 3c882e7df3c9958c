from agentweb.serve import WEBSOCKET_MAX_MESSAGE_BYTES, daphne_arguments


def test_daphne_gets_agentweb_s_message_size_limit():
    assert daphne_arguments(["-p", "8000", "agentweb.asgi:application"]) == [
        "--websocket-max-message-size",
        str(WEBSOCKET_MAX_MESSAGE_BYTES),
        "-p",
        "8000",
        "agentweb.asgi:application",
    ]


def test_a_limit_given_on_the_command_line_is_kept():
    argv = ["--websocket-max-message-size", "100", "agentweb.asgi:application"]

    assert daphne_arguments(argv) == argv
