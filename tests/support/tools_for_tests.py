"""Tools for the browser tests of tool cards, loaded into the app subprocess with AGENTWEB_TOOL_MODULES."""

from tools import tool


@tool(response_format="content_and_artifact")
def sales_report(region: str) -> tuple[str, dict]:
    """Summarise the sales of a region; the rows go into an artifact, kept out of the model's context.

    Args:
        region: The region, e.g. "north".
    """
    rows = [{"month": month, "units": 100 + 7 * n} for n, month in enumerate(["Jan", "Feb", "Mar"])]
    artifact = {
        "region": region,
        "rows": rows,
        "note": '<img src=x onerror="window.__pwned=3"><script>window.__pwned=4</script>',
    }
    return f"{len(rows)} months, {sum(r['units'] for r in rows)} units in {region}.", artifact


@tool
def echo(text: str) -> str:
    """Repeat a text back, as it is.

    Args:
        text: The text to repeat.
    """
    return text
