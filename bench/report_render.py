"""Time to render the reports of a large run, from records alone (no racers).

Usage: python bench/report_render.py [--cells 20] [--trials 10] [--k 8]

Builds race records shaped like real ones (the tests' builder, tests/kits/runkit.py): a k x jitter
matrix where every trial fires the gated effect k times (the worst case for explanations and
timelines), analyses them, and prints seconds for analysis, report.html, junit.xml and the PNG
heatmap, and the page size. Prints numbers only; nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from kits.runkit import race_cell, race_record, results_of

from chaos.reports.html import heatmaps, render_run_html
from chaos.reports.junit import junit_xml
from chaos.reports.plots import saturation_png


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=20)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--k", type=int, default=8)
    a = ap.parse_args()
    jitters = [0, 1, 5, 25]
    pairs, records = [], []
    for i in range(a.cells):
        k = 2 + (i // len(jitters)) * max(1, (a.k - 2) // max(1, a.cells // len(jitters) - 1))
        cell = race_cell(k=k, jitter_ms=jitters[i % len(jitters)], index=i)
        recs = [race_record(f"c{i:03d}-t{t:04d}", [f"r{j}" for j in range(k)], cell_index=i, cell_id=cell.id, k=k) for t in range(a.trials)]
        pairs.append((cell, recs))
        records += recs
    t = time.perf_counter()
    res = results_of(pairs)
    t_an = time.perf_counter() - t
    t = time.perf_counter()
    html = render_run_html(res, {"versions": {}}, records)
    t_html = time.perf_counter() - t
    t = time.perf_counter()
    junit_xml([res])
    t_junit = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        saturation_png(Path(d) / "s.png", heatmaps(("", c) for c in res.cells), title="bench")
        t_png = time.perf_counter() - t
    print(f"cells {a.cells}  trials {len(records)}  ledger rows {sum(len(r.ledger) for r in records)}")
    print(f"analysis     {t_an:7.3f} s")
    print(f"report.html  {t_html:7.3f} s  ({len(html) / 1024:.0f} KiB)")
    print(f"junit.xml    {t_junit:7.3f} s")
    print(f"heatmap png  {t_png:7.3f} s")


if __name__ == "__main__":
    main()
