"""Story: CI reads junit.xml: one test case per cell and property, violated fails, unknown skips."""

import xml.etree.ElementTree as ET

from test_html import XSS, demo_run

from chaos.reports.junit import junit_xml


def test_each_cell_and_property_is_a_case_violations_fail_unknowns_skip_with_their_reason():
    res, _, _ = demo_run()
    root = ET.fromstring(junit_xml([res]))
    (suite,) = root.findall("testsuite")
    cases = {(c.get("classname"), c.get("name").split()[0]): c for c in suite.findall("testcase")}
    # CO, LIVENESS and LC (the thread's chain, issue 26: unknown here, the demo read no checkpoint tree) per race cell
    assert len(cases) == 9 and suite.get("tests") == "9" and root.get("tests") == "9"
    failed = cases[("chaos.race_demo.k=2,jitter_ms=0", "CO")].find("failure")
    assert failed is not None and "fired more than once in 1/2 valid trials" in failed.get("message")
    assert "c001-t0000" in failed.text and "ledger seqs: 2, 3" in failed.text
    skipped = cases[("chaos.race_demo.k=4,jitter_ms=0", "CO")].find("skipped")
    assert skipped is not None and skipped.get("message").startswith("unknown: no valid trial") and XSS in skipped.get("message")
    passed = cases[("chaos.race_demo.k=2,jitter_ms=5", "CO")]
    assert list(passed) == []
    assert (suite.get("failures"), suite.get("skipped"), suite.get("errors")) == ("1", "5", "0")
