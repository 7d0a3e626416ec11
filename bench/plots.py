#!/usr/bin/env python3
"""PNG plots of the main series from bench JSON (``--json`` of run.py and native.py, or bench/recorded/).

    pip install -e '.[bench]'            # matplotlib: the bench's own extra, not in the base install
    python bench/plots.py                # bench/recorded/*.json -> docs/images/*.png
    python bench/plots.py --out DIR results.json scaling.json ...

Two figures, each from the files whose rows hold its series (others are ignored):

- ``latency-vs-inflight.png``: p50 latency of the tiny operators against calls in flight (run.py's "<op> @N in
  flight" rows), ours with batching off and on beside the aio echo measured in the same run.
- ``rps-vs-workers.png``: req/s against server processes: native.py --scaling runs (ours at each ``--workers``, the
  single-process echo under the same load beside it), and its serving runs with the floor (the aio echo that also
  runs ONNX Runtime, in 1 and N processes) beside ours at the default workers and the echo.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "bench" / "recorded"
OUT = ROOT / "docs" / "images"

_INFLIGHT = re.compile(r"^(?P<op>.+) @(?P<n>\d+) in flight$")
_P50 = re.compile(r"^p50 latency \(batching (?P<batching>on|off)\)$")
_WORKERS = re.compile(r"^req/s, --workers (?P<n>\d+)$")
_FLOOR = re.compile(r"^req/s, floor \((?P<n>\d+) process(es, one port)?\)$")
_DEFAULT = re.compile(r"^req/s, default workers \((?P<n>\d+)\)$")


def load(paths: list[Path]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each file's label (``info.label``, else the file's stem) and rows."""
    files = []
    for path in paths:
        data = json.loads(path.read_text())
        files.append((str(data.get("info", {}).get("label") or path.stem), data["rows"]))
    return files


def latency_series(files: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, dict[str, dict[int, float]]]:
    """{operator: {series: {in flight: p50 µs}}}, series "ours, batching off/on" and the baseline's name."""
    series: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for _, rows in files:
        for row in rows:
            where, what = _INFLIGHT.match(row["scenario"]), _P50.match(row["metric"])
            if where is None or what is None or row["ours"] is None:
                continue
            n, lines = int(where["n"]), series[where["op"]]
            lines[f"ours, batching {what['batching']}"][n] = row["ours"]
            if row.get("baseline"):
                lines[row["baseline_name"]][n] = row["baseline"]
    return series


def scaling_series(files: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, tuple[dict[int, float], float]]:
    """{file: ({workers: req/s}, the echo's req/s)} of native.py --scaling runs (h2load's; run.py's Python loader
    runs are left out: their load differs)."""
    found = {}
    for name, rows in files:
        scaling = [
            (match, row) for row in rows if (match := _WORKERS.match(row["metric"])) and "h2load" in row["scenario"]
        ]
        points = {int(match["n"]): row["ours"] for match, row in scaling if row["ours"]}
        echoes = [row["baseline"] for _, row in scaling if row.get("baseline")]
        if points:
            found[name] = (points, statistics.median(echoes) if echoes else 0.0)
    return found


def floor_series(files: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, dict[int, float]]:
    """Medians over native.py's serving runs (h2load's): {"floor": {processes: req/s}, "ours": {workers: req/s},
    "echo": {1: req/s}}."""
    runs: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for _, rows in files:
        for row in (row for row in rows if "h2load" in row["scenario"]):
            for key, pattern in (("floor", _FLOOR), ("ours", _DEFAULT)):
                match = pattern.match(row["metric"])
                if match and row["ours"]:
                    runs[key][int(match["n"] or 1)].append(row["ours"])
                    if row.get("baseline"):
                        runs["echo"][1].append(row["baseline"])
    return {key: {n: statistics.median(values) for n, values in points.items()} for key, points in runs.items()}


def plot_latency(series: dict[str, dict[str, dict[int, float]]], out: Path) -> Path:
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(series), figsize=(5.5 * len(series), 4.2), squeeze=False)
    for ax, (operator, lines) in zip(axes[0], sorted(series.items(), key=lambda item: item[0].lower()), strict=True):
        for label, points in sorted(lines.items()):
            xs = sorted(points)
            style = "--" if not label.startswith("ours") else "-"
            ax.plot(xs, [points[x] / 1000 for x in xs], style, marker="o", label=label)
        ax.set(xscale="log", yscale="log", xlabel="calls in flight", ylabel="p50 latency (ms)", title=operator)
        ax.set_xticks(sorted({x for points in lines.values() for x in points}))
        ax.get_xaxis().set_major_formatter(plt.ScalarFormatter())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    figure.suptitle("Tiny operators: p50 latency against calls in flight (one connection)")
    return _save(figure, out / "latency-vs-inflight.png")


def plot_workers(
    scaling: dict[str, tuple[dict[int, float], float]], floor: dict[str, dict[int, float]], out: Path
) -> Path:
    import matplotlib.pyplot as plt

    panels = int(bool(scaling)) + int(bool(floor))
    figure, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.4), squeeze=False)
    index = 0
    if scaling:
        ax = axes[0][index]
        index += 1
        for name, (points, echo) in sorted(scaling.items()):
            xs = sorted(points)
            line = ax.plot(xs, [points[x] for x in xs], marker="o", label=f"ours, {name}")[0]
            if echo:
                ax.axhline(echo, linestyle="--", color=line.get_color(), alpha=0.7, label="aio echo, 1 process")
        ax.set(xlabel="--workers", ylabel="req/s", title="Worker scaling (h2load, 256 in flight)")
        ax.set_xticks(sorted({x for points, _ in scaling.values() for x in points}))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    if floor:
        ax = axes[0][index]
        for key, label, style in (
            ("echo", "aio echo (no work)", "s"),
            ("floor", "floor: aio echo + ONNX Runtime", "o--"),
            ("ours", "ours (default workers)", "D"),
        ):
            points = floor.get(key, {})
            xs = sorted(points)
            if xs:
                ax.plot(xs, [points[x] for x in xs], style, markersize=8, label=label)
        ax.set(xlabel="server processes", ylabel="req/s", title="Against the floor (2 cores, 64 in flight)")
        ax.set_xticks(sorted({x for points in floor.values() for x in points}))
        ax.set_ylim(0, 1.25 * max(v for points in floor.values() for v in points.values()))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="lower center")
    figure.suptitle("Tiny TOP_K1 unary calls: req/s against server processes (medians)")
    return _save(figure, out / "rps-vs-workers.png")


def _save(figure: Any, path: Path) -> Path:
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # No creation date or version in the file: the same numbers make the same PNG.
    figure.savefig(path, dpi=110, metadata={"Software": None})
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="bench JSON files (default: bench/recorded/*.json)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the PNGs go (default: docs/images)")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    files = load(args.files or sorted(RECORDED.glob("*.json")))
    written = []
    latency = latency_series(files)
    if latency:
        written.append(plot_latency(latency, args.out))
    scaling, floor = scaling_series(files), floor_series(files)
    if scaling or floor:
        written.append(plot_workers(scaling, floor, args.out))
    for path in written:
        print(path)
    if not written:
        parser.error("no series found in these files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
