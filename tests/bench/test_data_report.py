"""bench/data's report: a chart per figure with each database's curve and its ideal, and a section of
docs/performance.md rewritten in place, the rest of the file kept."""

from bench.data import report
from bench.data.generate import Plan


def result(vendor: str, messages: int, scale: float) -> dict:
    timing = {"p50_ms": 5 * scale, "p99_ms": 9 * scale, "n": 3, "statements": 7}
    names = ["first_page", "open_heavy_chat", "usage_report_month", "turn_small_chat", "turn_heavy_chat"]
    names += [
        f"{kind}_search_{q}" for kind in ("sidebar", "tool") for q in ("rare", "in_every_chat", "prefix", "nowhere")
    ]
    figures = {name: dict(timing) for name in names}
    figures["open_heavy_chat"]["messages_shown"] = messages // 10
    return {
        "vendor": vendor,
        "messages_asked": messages,
        "label": f"{messages}",
        "loadavg_before": "1.0 1.0 1.0",
        "migrate_empty_s": 5,
        "generate_s": 2,
        "rows": {"chat.Message": messages},
        "size": {"bytes": messages * 2000, "largest": {"chat_message": {"total": messages * 1000, "own": 1}}},
        "export": {"ms": 10, "peak_mib": 1.5 * scale, "bytes": 1000},
        "delete": {"delete_ms": 100, "other_turn_max_ms": 50 * scale},
        "migrate_search_s": 0.5 * scale,
        "figures": figures,
    }


def test_it_draws_each_figure_and_rewrites_only_its_section(tmp_path, monkeypatch):
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\n## Before\n\nkept\n\n## Not done\n\nkept too\n")
    monkeypatch.setattr(report, "DOC", doc)
    monkeypatch.setattr(report, "CHARTS", tmp_path / "performance")
    run = {
        "at": "2026-12-06T06:00:00+00:00",
        "machine": {"cpu": "test cpu"},
        "results": [result(v, n, s) for v in ("postgresql", "sqlite") for n, s in ((1000, 1), (10000, 2))],
    }
    report.write(run)
    report.write(run)  # twice: the section is replaced, not added again
    text = doc.read_text()
    assert text.count(report.TITLE) == 1
    assert "## Before\n\nkept\n" in text and text.rstrip().endswith("## Not done\n\nkept too")
    assert text.index(report.TITLE) < text.index("## Not done")
    assert "| first page p50 / p99 ms | 5 / 9 | 10 / 18 | 5 / 9 | 10 / 18 |" in text
    for key, *_ in report.FIGURES:
        svg = (tmp_path / "performance" / f"data-{key}.svg").read_text()
        assert f"(performance/data-{key}.svg)" in text
        assert svg.startswith("<svg") and svg.count("<polyline") == 4  # two databases, each with its ideal


def test_the_full_shape_from_100k_and_a_tenth_below():
    assert (Plan.for_size(1_000_000).heavy_chats, Plan.for_size(1_000_000).heavy_chat) == (10_000, 10_000)
    assert (Plan.for_size(100_000).heavy_chats, Plan.for_size(100_000).heavy_chat) == (10_000, 10_000)
    assert (Plan.for_size(10_000).heavy_chats, Plan.for_size(10_000).heavy_chat) == (1_000, 1_000)


def test_the_targets_are_judged_at_the_largest_size_of_each_database(tmp_path, monkeypatch):
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n")
    monkeypatch.setattr(report, "DOC", doc)
    monkeypatch.setattr(report, "CHARTS", tmp_path / "performance")
    big = result("postgresql", 1_000_000, 10)  # first page p99 90 ms: over 50; memory 15 MiB: under 50
    big["figures"]["turn_heavy_chat"]["statements"] = 8  # one more than at 1k
    run = {"at": "2026-12-06T06:00:00+00:00", "machine": {"cpu": "c"}, "results": [result("postgresql", 1000, 1), big]}
    report.write(run)
    text = doc.read_text()
    assert "at the largest size run: postgresql 1M." in text
    assert "| first page p99 ≤ 50 ms | 90 ms: FAIL |" in text
    assert "| export of the heavy chat, peak memory ≤ 50 MiB | 15 MiB: PASS |" in text
    assert "| a turn's statements (small / heavy chat) the same as at 1k | 7 / 8 (1k: 7): FAIL |" in text
