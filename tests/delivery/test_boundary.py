"""The apps reach a thread's followers only through the delivery's interface (the `delivery` package's top level):
no app module asks channels for its layer, and only the websocket client (chat/consumers.py) and the live layer
(chat/live/) name the delivery's modules. The delivery imports no app."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ["chat", "agents", "tools", "providers", "attachments", "sharing", "mcpservers", "modelconfig"]
#: The websocket client's fast paths (delivery/dispatch.py, delivery/take_now.py) and the logs' types.
MAY_NAME_MODULES = {"chat/consumers.py", "chat/live/__init__.py"}


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module `path` imports, at any depth (function-local imports too), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def app_modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def test_no_app_asks_channels_for_its_layer():
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in app_modules()
        for line, name in imports(path)
        if name == "channels.layers"
    ]
    assert found == []


def test_only_the_socket_and_the_live_layer_name_the_deliverys_modules():
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in app_modules()
        for line, name in imports(path)
        if name.startswith("delivery.") and str(path.relative_to(ROOT)) not in MAY_NAME_MODULES
    ]
    assert found == []


def test_the_delivery_imports_no_app_and_not_the_project():
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted((ROOT / "delivery").rglob("*.py"))
        for line, name in imports(path)
        if name.split(".")[0] in [*APPS, "agentweb"]
    ]
    assert found == []
