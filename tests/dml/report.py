"""The DirectML lane's closing summary: its tests per family, what its tests asked to be reported, and what its
shared server did."""

# NOTE: printed by the process that ends the run, which under pytest-xdist (the README's test command) is the
# controller: it collects no test and loads no conftest below tests/, so the lane's worker sends its server's
# counts in its worker output (WORKER_OUTPUT) and the rest comes in the test reports themselves.

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tests.provider_cases import family_of

#: What the lane's shared server did, one entry a server: its starts, its workers' recycles, and the sessions a
#: worker may create before it is recycled (None: the server's defaults).
LANE_SERVER: list[tuple[int, int, int | None]] = []
#: The key of the lane's worker output (pytest-xdist) that carries LANE_SERVER to the controller.
WORKER_OUTPUT = "dml_lane_server"
#: The user property a lane test sets (``record_property``) to have a line of its own in the summary.
SUMMARY_LINE = "lane_summary"


def write_summary(terminalreporter: Any) -> None:
    """Print the lane's test count per family (the tests/ops module, or the lane module's own name), the lines its
    tests asked for, and its server's starts and recycles; nothing when no lane test ran."""
    counts: dict[str, Counter[str]] = {}
    lines: list[str] = []
    for outcome in ("passed", "failed", "skipped", "xfailed", "xpassed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if not nodeid.startswith("tests/dml/") or getattr(report, "when", "call") not in ("call", "setup"):
                continue
            lines += [str(value) for name, value in getattr(report, "user_properties", ()) if name == SUMMARY_LINE]
            if report.when == "setup" and outcome == "passed":
                continue
            path, _, name = nodeid.partition("::")
            family = family_of(name) or Path(path).stem.removeprefix("test_")
            counts.setdefault(family, Counter())[outcome] += 1
    if not counts:
        return
    terminalreporter.section("real DirectML lane: tests per family")
    for family, outcomes in sorted(counts.items()):
        terminalreporter.write_line(f"{family:>20}: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())))
    for line in lines:
        terminalreporter.write_line(line)
    for starts, recycles, sessions in LANE_SERVER:
        terminalreporter.write_line(
            f"the lane's server: {starts} starts, {recycles} worker recycles "
            + (f"({sessions} sessions each)" if sessions else "(the server's defaults)")
        )
