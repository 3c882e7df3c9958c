"""bench/data's report: a chart per figure with each database's curve and its ideal, and a section of
docs/performance.md rewritten in place, the rest of the file kept."""

from bench.data import report
from bench.data.generate import Plan


def result(vendor: str, messages: int, scale: float) -> dict:
    timing = {"p50_ms": 5 * scale, "p99_ms": 9 * scale, "n": 3, "statements": 7}
    names = ["first_page", "open_heavy_chat", "usage_report_month", "turn_small_chat", "turn_heavy_chat"]
    names += ["chromium_first_paint", "chromium_newest_readable", "chromium_html"]
    names += [f"{kind}_search_{q}" for kind in ("sidebar", "tool") for q in report.SEARCHES]
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
        "migrate_search_owner_s": 0.8 * scale,
        "figures": figures,
        "scroll_up": {
            "reached_first_message": True,
            "s": 3 * scale,
            "pages": messages // 500,
            "statuses": {"200": messages // 500},
            "messages_loaded": messages // 10,
            "messages_expected": messages // 10,
            "all_readable": True,
            "message_elements": messages // 12,
            "s_per_page_first_10": 0.1,
            "s_per_page_last_10": 0.2 * scale,
        },
    }


def report_in(tmp_path, monkeypatch, text: str):
    """The report written to a performance.md of `text` (and its charts) under tmp_path, not the project's."""
    doc = tmp_path / "performance.md"
    doc.write_text(text)
    monkeypatch.setattr(report, "DOC", doc)
    monkeypatch.setattr(report, "CHARTS", tmp_path / "performance")
    return doc


def test_it_draws_each_figure_and_rewrites_only_its_section(tmp_path, monkeypatch):
    doc = report_in(tmp_path, monkeypatch, "# Performance\n\n## Before\n\nkept\n\n## Not done\n\nkept too\n")
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
    assert "|\n\n## Not done" in text  # a blank line between the section's last table and the next heading
    assert "| first page p50 / p99 ms | 5 / 9 | 10 / 18 | 5 / 9 | 10 / 18 |" in text
    for key, *_ in report.FIGURES:
        svg = (tmp_path / "performance" / f"data-{key}.svg").read_text()
        assert f"(performance/data-{key}.svg)" in text
        assert svg.startswith("<svg") and svg.count("<polyline") == 4  # two databases, each with its ideal


def test_a_common_word_and_a_rare_one_are_both_shown_and_an_older_runs_rare_word_is_shown_as_the_common_one(
    tmp_path, monkeypatch
):
    doc = report_in(tmp_path, monkeypatch, "# Performance\n")
    new = result("postgresql", 1_000_000, 1)
    new["figures"]["sidebar_search_common"]["p99_ms"] = 628
    new["figures"]["sidebar_search_rare"]["p99_ms"] = 21
    old = result("sqlite", 1_000_000, 1)  # before the fourth pass: its "rare" word was the common one
    old["figures"] = {k: v for k, v in old["figures"].items() if "_search_common" not in k}
    old["figures"]["sidebar_search_rare"]["p99_ms"] = 661
    del old["migrate_search_owner_s"]
    report.write({"at": "2026-12-06T06:00:00+00:00", "machine": {"cpu": "c"}, "results": [new, old]})
    text = doc.read_text()
    assert "| sidebar search (common) ms | 5 / 628 | 5 / 661 |" in text
    assert "| sidebar search (rare) ms | 5 / 21 | – |" in text
    assert "| migrations 0022-0025 on the data (0025: the search index keyed by person) s | 0.8 | – |" in text


def test_the_full_shape_from_100k_and_a_tenth_below():
    assert (Plan.for_size(1_000_000).heavy_chats, Plan.for_size(1_000_000).heavy_chat) == (10_000, 10_000)
    assert (Plan.for_size(100_000).heavy_chats, Plan.for_size(100_000).heavy_chat) == (10_000, 10_000)
    assert (Plan.for_size(10_000).heavy_chats, Plan.for_size(10_000).heavy_chat) == (1_000, 1_000)


def test_the_targets_are_judged_at_the_largest_size_of_each_database(tmp_path, monkeypatch):
    doc = report_in(tmp_path, monkeypatch, "# Performance\n")
    big = result("postgresql", 1_000_000, 10)  # first page p99 90 ms: over 50; memory 15 MiB: under 50
    big["figures"]["turn_heavy_chat"]["statements"] = 8  # one more than at 1k
    run = {"at": "2026-12-06T06:00:00+00:00", "machine": {"cpu": "c"}, "results": [result("postgresql", 1000, 1), big]}
    report.write(run)
    text = doc.read_text()
    assert "at the largest size run: postgresql 1M." in text
    assert "| first page p99 ≤ 50 ms | 90 ms: FAIL |" in text
    assert "| export of the heavy chat, peak memory ≤ 50 MiB | 15 MiB: PASS |" in text
    assert (
        "| a turn's statements (small / heavy chat) the same as at 1k, the run's note aside | 7 / 8 (1k: 7): FAIL |"
        in text
    )


def test_a_turn_is_judged_without_the_note_that_says_its_history_was_trimmed(tmp_path, monkeypatch):
    # The heavy chat outgrows its model's window from 100k on: each turn writes a note saying so, at any data size.
    doc = report_in(tmp_path, monkeypatch, "# Performance\n")
    big = result("postgresql", 1_000_000, 1)
    big["figures"]["turn_heavy_chat"].update(statements=8, statements_besides_notes=7, note_writes=1)
    run = {"at": "2026-12-06T06:00:00+00:00", "machine": {"cpu": "c"}, "results": [result("postgresql", 1000, 1), big]}
    report.write(run)
    text = doc.read_text()
    assert "the same as at 1k, the run's note aside | 7 / 8 (1 note) (1k: 7): PASS |" in text
    assert "the run's note that the history was trimmed) | 7 / 7 | 7 / 8 (1 note) |" in text

    big["figures"]["turn_heavy_chat"].update(statements=9, statements_besides_notes=8)  # one more besides the note
    report.write(run)
    assert "the same as at 1k, the run's note aside | 7 / 9 (1 note) (1k: 7): FAIL |" in doc.read_text()


def test_chromiums_figures_are_in_the_table_and_judged_against_500_ms(tmp_path, monkeypatch):
    doc = report_in(tmp_path, monkeypatch, "# Performance\n")
    big = result("postgresql", 1_000_000, 100)  # 900 ms p99: over 500
    big["figures"]["chromium_first_paint"].update(p50_ms=120, p99_ms=300)
    run = {"at": "2026-12-06T06:00:00+00:00", "machine": {"cpu": "c"}, "results": [result("postgresql", 1000, 1), big]}
    report.write(run)
    text = doc.read_text()
    assert "| heavy chat in Chromium: first contentful paint p50 / p99 ms | 5 / 9 | 120 / 300 |" in text
    assert "| the heavy chat's first paint in Chromium (first contentful paint) p99 ≤ 500 ms | 300 ms: PASS |" in text
    assert "| the heavy chat's newest message readable in Chromium p99 ≤ 500 ms | 900 ms: FAIL |" in text
    assert "reached: 2000 pages in 300 s (0.1 s a page at first, 20 s at the end), all of 100000 messages" in text
    assert "Chromium FCP p99 300 ms, newest readable p99 900 ms, 2000 pages in 300 s" in report.one_line(big)


def test_without_chromium_its_rows_say_why_and_the_rest_is_judged(tmp_path, monkeypatch):
    doc = report_in(tmp_path, monkeypatch, "# Performance\n")
    results = [result("sqlite", n, 1) for n in (1000, 10_000)]
    for r in results:
        for name in ("chromium_first_paint", "chromium_newest_readable", "chromium_html"):
            del r["figures"][name]
        del r["scroll_up"]
        r["chromium_skipped"] = "/usr/bin/chromium is not installed (apt-get install chromium)"
    report.write({"at": "2026-12-06T06:00:00+00:00", "machine": {"cpu": "c"}, "results": results})
    text = doc.read_text()
    why = "not measured: /usr/bin/chromium is not installed (apt-get install chromium)"
    assert f"| heavy chat in Chromium: scrolled up to its first message | {why} | {why} |" in text
    assert f"| the heavy chat's first paint in Chromium (first contentful paint) p99 ≤ 500 ms | – ({why}) |" in text
    assert "| first page p99 ≤ 50 ms | 9 ms: PASS |" in text
    assert "Chromium not measured: /usr/bin/chromium is not installed" in report.one_line(results[0])
    del results[1]["chromium_skipped"]
    results[1]["chromium_failed"] = "RuntimeError: the app did not start"
    report.write({"at": "2026-12-06T06:00:00+00:00", "machine": {"cpu": "c"}, "results": results})
    assert "newest message readable in Chromium p99 ≤ 500 ms | – (failed: RuntimeError: the app did not start) |" in (
        doc.read_text()
    )


def test_the_browser_figures_are_skipped_with_a_reason_without_chromium_or_playwright(monkeypatch):
    import builtins

    from bench.data import paint

    monkeypatch.setattr(paint.shutil, "which", lambda name: None)
    assert paint.unavailable() == "/usr/bin/chromium is not installed (apt-get install chromium)"
    monkeypatch.setattr(paint.shutil, "which", lambda name: name)
    real_import = builtins.__import__

    def no_playwright(name, *args, **kwargs):
        if name.startswith("playwright"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_playwright)
    assert paint.unavailable() == "playwright is not installed (pip install -r requirements-dev.txt)"


def test_the_measuring_processs_own_collections_are_shown_and_an_older_run_without_them_says_so(tmp_path, monkeypatch):
    doc = report_in(tmp_path, monkeypatch, "# Performance\n")
    newer = result("postgresql", 10000, 1)
    newer["full_collections"] = {"count": 8, "longest_ms": 26.1}
    run = {
        "at": "2026-12-06T06:00:00+00:00",
        "machine": {"cpu": "c"},
        "results": [result("postgresql", 1000, 1), newer],
    }
    report.write(run)
    assert "| the measuring process's full collections: count / longest ms | – | 8 / 26.1 |" in doc.read_text()
