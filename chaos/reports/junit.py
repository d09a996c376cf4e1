"""JUnit XML for CI systems: one test case per cell and property.

A violated property is a ``<failure>`` (its reason as the message, the evidence as the text), an
unknown one is ``<skipped>`` with its reason, a holding one passes; a violation a baseline accepts
(``chaos.accepted``) is ``<skipped>`` with the baseline's reason. A cell that failed outright
adds an ``<error>`` case. One ``<testsuite>`` per run; a nightly writes all its runs in one file.
ElementTree does the escaping, so any string from a run is safe in the XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from chaos.kinds import property_names
from chaos.records import RunResults


def _suite(results: RunResults, prefix: str = "", accepted: dict[tuple[str, str], str] | None = None) -> ET.Element:
    suite = ET.Element("testsuite", name=f"{prefix}{results.scenario}")
    tests = failures = skipped = errors = 0
    names = property_names()
    for c in results.cells:
        classname = f"chaos.{prefix}{results.scenario}.{c.cell_id}"
        for v in c.verdicts:
            tests += 1
            case = ET.SubElement(
                suite, "testcase", classname=classname, name=f"{v.property} ({names.get(v.property, v.property)})", time="0"
            )
            why = (accepted or {}).get((c.cell_id, v.property))
            if v.status == "violated" and why is not None:
                skipped += 1
                ET.SubElement(case, "skipped", message=f"accepted by the baseline: {why} (violated: {v.reason})")
            elif v.status == "violated":
                failures += 1
                f = ET.SubElement(case, "failure", message=v.reason, type="violated")
                ev = v.evidence
                f.text = (
                    f"trials: {', '.join(ev.trial_ids) or '-'}\npoints: {', '.join(ev.points) or '-'}\n"
                    f"ledger seqs: {', '.join(map(str, ev.ledger_seqs)) or '-'}\n{ev.note}"
                ).strip()
            elif v.status == "unknown":
                skipped += 1
                ET.SubElement(case, "skipped", message=f"unknown: {v.reason}")
        if c.failure:
            tests += 1
            errors += 1
            case = ET.SubElement(suite, "testcase", classname=classname, name="cell ran", time="0")
            ET.SubElement(case, "error", message=c.failure, type="cell_failed")
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", str(errors))
    return suite


def junit_xml(runs: list[RunResults], name: str = "chaos", accepted: dict[tuple[str, str], str] | None = None) -> str:
    """``accepted``: (cell id, property) -> the baseline's reason, for a single run's file."""
    root = ET.Element("testsuites", name=name)
    for r in runs:
        root.append(_suite(r, accepted=accepted))
    for key in ("tests", "failures", "skipped", "errors"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, runs: list[RunResults], name: str = "chaos", accepted: dict[tuple[str, str], str] | None = None) -> None:
    from chaos.running.runfolder import write_atomic  # masked, atomic: as every file of a run folder

    write_atomic(Path(path), junit_xml(runs, name, accepted))
