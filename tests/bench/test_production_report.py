"""`python -m bench.production --only NAME` rewrites NAME's rows of docs/performance.md's production table and keeps
the other benchmarks' rows from the last whole run (a run of one benchmark used to leave a table of that one)."""

from bench.common import Result
from bench.production import report

INFO = {
    "date": "2026-12-06 06:00 UTC",
    "nproc": 2,
    "cpu": "Test CPU",
    "postgres": "15",
    "redis": "7",
    "loadavg": "1.00 1.00 1.00",
    "loadavg_end": "2.00 2.00 2.00",
    "seconds": 10,
    "ref": "HEAD",
}


def result(name: str, measured: float, note: str) -> Result:
    made = Result(name)
    made.add("the figure", measured, "s", target="≤ 2 s", passed=measured <= 2, note=note)
    return made


def test_a_run_of_one_benchmark_replaces_its_rows_and_keeps_the_others(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nBefore.\n\nAfter.\n")
    report.write(INFO, [result("alpha", 1.0, "first alpha"), result("omega", 3.0, "first omega")], doc=doc)
    order = ["alpha", "schedules", "omega"]
    report.write(INFO, [result("schedules", 25.0, "late")], complete=False, doc=doc, order=order)
    report.write(INFO, [result("schedules", 1.5, "on time")], complete=False, doc=doc, order=order)
    text = doc.read_text()
    rows = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows == ["| benchmark", "| alpha", "| schedules", "| omega"]
    assert "| schedules | the figure | 1.5 s |" in text and "25 s" not in text and "| 3 s |" in text
    assert "first alpha" in text and "on time" in text and "late." not in text
    assert text.count("Measured again") == 1 and text.count("Measured 2026-12-06") == 1
    assert text.startswith("# Performance\n\nBefore.\n\nAfter.\n")
