from pathlib import Path

from tools.registry import build_registry

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_it_documents_every_builtin_tool_and_its_arguments():
    text = REFERENCE.read_text()

    for made in build_registry().all():
        assert f"| `{made.name}` |" in text, made.name
        for argument in made.parameters["properties"]:
            assert f"`{argument}" in text, f"{made.name}.{argument}"


ADMIN_GUIDE = REFERENCE.with_name("tools-admin.md")


def test_the_admin_guide_describes_approval_rules_every_kind_of_match_and_action():
    from tools.models import ApprovalRule

    text = ADMIN_GUIDE.read_text()

    assert "## Approval rules" in text
    for label in [*ApprovalRule.Match.labels, *ApprovalRule.Action.labels]:
        assert f"*{label}*" in text, label
    assert "Don't ask again for" in text  # the per-thread grant, and where it stands among the rules


def test_the_admin_guide_says_header_values_are_encrypted_at_rest():
    section = ADMIN_GUIDE.read_text().split("### Secret headers are write-only", 1)[1].split("\n### ", 1)[0]

    assert "as they are" not in section
    assert "encrypted at rest" in section
