from pathlib import Path

from tools.registry import build_registry

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_it_documents_every_builtin_tool_and_its_arguments():
    text = REFERENCE.read_text()

    for made in build_registry().all():
        assert f"| `{made.name}` |" in text, made.name
        for argument in made.parameters["properties"]:
            assert f"`{argument}" in text, f"{made.name}.{argument}"
