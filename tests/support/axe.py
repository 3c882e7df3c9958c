"""axe-core in a Playwright page: the vendored script (tests/support/vendor/axe-<version>.min.js, MPL-2.0, its licence
beside it) injected through DevTools, run over the whole document, its violations read back as plain dicts.

Injected with page.evaluate, not add_script_tag: the app's Content-Security-Policy (script-src 'self') refuses an
inline script, and the pages are checked with their policy in force."""

from __future__ import annotations

import json
import os
from pathlib import Path

AXE_VERSION = "4.14.1"
AXE_SCRIPT = Path(__file__).resolve().parent / "vendor" / f"axe-{AXE_VERSION}.min.js"
#: What fails the suite; "minor" and "moderate" are reported (AGENTWEB_AXE_REPORT) but pass.
BLOCKING = frozenset({"serious", "critical"})

RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.map(String).join(" "), impact: n.impact || v.impact,
                                html: n.html.slice(0, 160), summary: (n.failureSummary || "").slice(0, 300)})),
  }));
}"""


def violations(page) -> list[dict]:
    """axe-core's violations on the page as it is now (every rule axe runs by default: WCAG 2.x A and AA, and its
    best practices), each {id, impact, help, nodes: [{target, impact, html, summary}]}."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT.read_text(encoding="utf-8"))
    return page.evaluate(RUN)


def blocking(found: list[dict]) -> list[dict]:
    """The serious and critical ones, node by node: {rule, impact, target, help, html, summary}."""
    return [
        {
            "rule": v["id"],
            "impact": node["impact"],
            "target": node["target"],
            "help": v["help"],
            "html": node["html"],
            "summary": node["summary"],
        }
        for v in found
        for node in v["nodes"]
        if node["impact"] in BLOCKING
    ]


def describe(where: str, nodes: list[dict]) -> str:
    """One line per failing node, naming the page and variant: what a person fixing it needs first."""
    lines = [f"{len(nodes)} serious or critical axe violation(s) on {where}:"]
    for node in nodes:
        lines.append(f"  {node['impact']} {node['rule']} at {node['target']}: {node['help']}")
        lines.append(f"      {node['html']}")
        if node["summary"]:
            lines.append("      " + node["summary"].replace("\n", "\n      "))
    return "\n".join(lines)


def record(where: str, found: list[dict]) -> None:
    """With AGENTWEB_AXE_REPORT=<file>: every violation of any impact appended there as JSON lines, for the list of
    known minor ones in docs/ui.md."""
    target = os.environ.get("AGENTWEB_AXE_REPORT")
    if not target or not found:
        return
    with open(target, "a", encoding="utf-8") as out:
        for v in found:
            for node in v["nodes"]:
                out.write(
                    json.dumps(
                        {
                            "where": where,
                            "rule": v["id"],
                            "impact": node["impact"],
                            "target": node["target"],
                            "help": v["help"],
                        }
                    )
                    + "\n"
                )
