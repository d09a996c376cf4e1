"""Story: an engineer opens report.html from disk and sees at once which cells duplicate effects.

The page is checked in a real headless chromium: it renders, the heatmap and the contract matrix are
there, nothing logs to the console, and strings from a run cannot inject markup or script.
"""

import re
import xml.etree.ElementTree as ET

from kits.browserkit import load_page
from kits.runkit import race_cell, race_record, results_of

from chaos.reports.html import heat_colour, heatmaps, render_run_html

XSS = '<script>console.error("xss ran")</script>'
IMG = '<img src=x onerror=console.error("img-xss")>'


def demo_run():
    ok, dup = race_cell(k=2, jitter_ms=5, index=0), race_cell(k=2, jitter_ms=0, index=1)
    bad = race_cell(k=4, jitter_ms=0, index=2)
    recs = {
        0: [race_record("c000-t0000", ["r0"], cell_index=0, cell_id=ok.id), race_record("c000-t0001", ["r1"], cell_index=0, cell_id=ok.id)],
        1: [
            race_record("c001-t0000", ["r1", "r0"], value=IMG, cell_index=1, cell_id=dup.id),
            race_record("c001-t0001", ["r0"], cell_index=1, cell_id=dup.id),
        ],
        2: [race_record("c002-t0000", [], cell_index=2, cell_id=bad.id, valid=False, invalid_reason=XSS, k=4)],
    }
    res = results_of([(ok, recs[0]), (dup, recs[1]), (bad, recs[2])])
    meta = {"scenario": {"about": f"about {XSS}"}, "versions": {"langgraph": "1.2.24"}, "host": "vm"}
    return res, meta, [r for rs in recs.values() for r in rs]


def test_heatmap_pools_race_cells_into_a_k_by_jitter_grid_coloured_from_ideal_to_saturated():
    res, _, _ = demo_run()
    (m,) = heatmaps(("", c) for c in res.cells)
    assert (m.framework, m.backend, m.ks, m.jitters) == ("langgraph", "sqlite", [2, 4], [0.0, 5.0])
    assert m.at(2, 0.0).saturation == 0.75 and m.at(2, 0.0).status == "violated"
    assert m.at(2, 5.0).saturation == 0.5 and m.at(2, 5.0).excess == 0.0 and m.at(2, 5.0).status == "holds"
    assert m.at(4, 0.0).saturation is None and m.at(4, 5.0) is None
    assert heat_colour(0.0).startswith("hsl(120") and heat_colour(1.0).startswith("hsl(0,")


def test_run_page_names_the_duplicating_cell_first_and_escapes_every_run_string():
    res, meta, records = demo_run()
    html = render_run_html(res, meta, records)
    banner = html[html.index('id="verdict-banner"') : html.index('id="matrix"')]
    assert "k=2,jitter_ms=0" in banner and "CO (consume-once)" in banner and "k=2,jitter_ms=5" not in banner
    assert "<script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;console.error(&#34;xss ran&#34;)&lt;/script&gt;" in html
    assert "racer r0 resumed the interrupt parked at checkpoint step 1 with value True and fired gate:&lt;img" in html
    ET.fromstring(re.search(r"<svg .*?</svg>", html, re.S).group(0))  # the timeline is well-formed SVG
    assert "clocks of different machines are not comparable" not in html
    records[2].ledger[-1]["host"] = "worker-2"
    assert "Racers ran on 2 hosts (vm, worker-2)" in render_run_html(res, meta, records)


def test_the_page_renders_in_chromium_with_heatmap_matrix_and_no_console_message(chromium, tmp_path):
    res, meta, records = demo_run()
    page_file = tmp_path / "report.html"
    page_file.write_text(render_run_html(res, meta, records))
    page = load_page(chromium, page_file)
    assert page.console == [], page.console
    assert 'data-heatmap="langgraph / sqlite"' in page.dom and 'class="matrix"' in page.dom
    assert page.dom.count('class="v violated"') == 1 and "DUPLICATE" in page.dom
    assert "xss ran" in page.dom  # shown as text ...
    assert "<script>" not in page.dom  # ... never as a script element


def test_the_console_check_catches_a_broken_page(chromium, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<!doctype html><html><body><p>report</p><script>console.error('deliberate'); notAFunction();</script></body></html>")
    page = load_page(chromium, broken)
    assert any("deliberate" in m for m in page.console), page.log[-2000:]
    assert any("notAFunction" in m for m in page.console)


DRAWS = """
import sys
from pathlib import Path

from kits.runkit import race_cell, race_record, results_of, verdict_cell

from chaos.records import RunResults, Verdict
from chaos.reports.html import write_run_html

out = Path(sys.argv[1])
sweep = verdict_cell([Verdict(property="EO", status="violated", reason="duplicated 'b'")])
res = RunResults(run_id="s", scenario="sweep", seed=1, exit_code=1, verdict_counts={"violated": 1}, cells=[sweep])
write_run_html(out, res, {}, [])
print("sweep", "matplotlib" in sys.modules, (out / "saturation.png").exists())
cell = race_cell(k=2)
write_run_html(out, results_of([(cell, [race_record("c000-t0000", ["r0"], cell_id=cell.id)])]), {}, [])
print("race", "matplotlib" in sys.modules, (out / "saturation.png").exists())
"""


def test_a_run_without_a_race_cell_writes_its_page_without_loading_matplotlib(tmp_path):
    """matplotlib's import is most of a `chaos run` process's start: a page with nothing to plot
    (a sweep's) leaves it unloaded; a race cell's heatmap still draws its PNG."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-c", DRAWS, str(tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split("\n")[:2] == ["sweep False False", "race True True"], p.stdout
