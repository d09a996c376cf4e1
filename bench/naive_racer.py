"""A racer in the style of the published hand probes: a fresh ``python`` that polls a GO file.

Used only by ``bench/racers.py`` as the baseline. It does the racer's work with chaos's own code
(same workload, same ledger, same barriers for kill points) so the comparison is of harness
overhead only; what differs is how it starts (a fresh interpreter importing everything) and how
a race's start gate works: write READY, then poll for GO every ``POLL_S``.

Usage: python bench/naive_racer.py SPEC.json   (spec has "ready" and "go" paths)
"""

from __future__ import annotations

import json
import os
import sys
import time

POLL_S = 0.005  # the probes polled every few milliseconds

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from chaos.racer import barrier  # noqa: E402
from chaos.racer import main as racer  # noqa: E402


def main() -> int:
    with open(sys.argv[1]) as f:
        spec = json.load(f)

    def gate(self) -> None:  # replaces the SIGSTOP gate with READY/GO files
        with open(spec["ready"], "w") as r:
            r.write(str(os.getpid()))
        while not os.path.exists(spec["go"]):
            time.sleep(POLL_S)

    barrier.BarrierClient.gate = gate  # type: ignore[method-assign]
    return racer.serve(spec)


if __name__ == "__main__":
    sys.exit(main())
