from agentweb.serve import daphne_arguments


def test_daphne_limits_received_messages_and_frames_to_the_frame_limit():
    assert daphne_arguments(["-p", "8000", "agentweb.asgi:application"], 262144) == [
        "--websocket-max-message-size",
        "262144",
        "--websocket-max-frame-size",
        "262144",
        "-p",
        "8000",
        "agentweb.asgi:application",
    ]


def test_a_limit_given_on_the_command_line_is_kept():
    argv = ["--websocket-max-message-size", "100", "--websocket-max-frame-size=50", "agentweb.asgi:application"]

    assert daphne_arguments(argv, 262144) == argv
