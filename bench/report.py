"""Result rows (ours, baseline, ratio, goal), the run's conditions, and their text and Markdown forms."""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

NA = "n/a (not in this build)"


@dataclass
class Row:
    """One figure of ours beside its baseline; ``goal`` is ``("<=", 1.10)`` style on ``ours / baseline``."""

    scenario: str
    metric: str
    ours: float | None
    baseline: float | None = None
    baseline_name: str = ""
    unit: str = ""
    goal: tuple[str, float] | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.ours is None or not self.baseline:
            return None
        return self.ours / self.baseline

    @property
    def met(self) -> bool | None:
        ratio = self.ratio
        if self.goal is None or ratio is None:
            return None
        op, bound = self.goal
        return ratio <= bound if op == "<=" else ratio >= bound

    @property
    def verdict(self) -> str:
        if self.goal is None:
            return ""
        if self.ours is None:
            return "pending"
        met, ratio = self.met, self.ratio
        if met is None or ratio is None:
            return "?"
        op, bound = self.goal
        if met:
            return "met"
        if ratio == 0:
            return "MISSED (no result)"
        # How far off: the factor the figure must improve by to meet the goal.
        factor = ratio / bound if op == "<=" else bound / ratio
        return f"MISSED by {factor:.2f}x"

    def cells(self) -> list[str]:
        ratio = self.ratio
        goal = f"{self.goal[0]} {self.goal[1]:g}x" if self.goal else ""
        return [
            self.scenario,
            self.metric,
            _fmt(self.ours, self.unit) if self.ours is not None else (self.note or NA),
            f"{_fmt(self.baseline, self.unit)} ({self.baseline_name})" if self.baseline is not None else "",
            f"{ratio:.2f}x" if ratio is not None else "",
            goal,
            self.verdict,
        ]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(ratio=self.ratio, met=self.met, verdict=self.verdict)
        return data


HEADER = ["scenario", "metric", "ours", "baseline (same run)", "ratio", "goal", "verdict"]


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{text} {unit}".strip()


def print_row(row: Row) -> None:
    cells = row.cells()
    text = f"{cells[0]:<52} {cells[1]:<26} {cells[2]:>14}"
    if cells[3]:
        text += f"  vs {cells[3]:<34} ratio {cells[4]:>6}"
    if cells[5]:
        text += f"  goal {cells[5]:<8} {cells[6]}"
    if row.note and row.ours is not None:
        text += f"  [{row.note}]"
    print(text, flush=True)


def markdown_table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in rows:
        cells = row.cells()
        if row.note and row.ours is not None:
            cells[1] += f" ({row.note})"
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def conditions(command: str) -> dict[str, Any]:
    """Machine, versions, date and command of this run."""
    cpu = platform.processor() or platform.machine()
    memory = ""
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
        with open("/proc/meminfo") as info:
            kib = int(next(line.split()[1] for line in info if line.startswith("MemTotal")))
            memory = f"{kib / (1 << 20):.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": memory,
        "os": f"{platform.system()} {platform.release()}",
        "libc": " ".join(platform.libc_ver()),
        "python": sys.version.split()[0],
        "grpcio": _version("grpcio"),
        "protobuf": _version("protobuf"),
        "numpy": _version("numpy"),
        "onnxruntime": _module_version("onnxruntime"),
        "command": command,
    }


def _module_version(name: str) -> str:
    """The version of the module that imports as ``name`` (onnxruntime-gpu installs as onnxruntime, and another
    distribution's metadata may sit beside it)."""
    try:
        return str(__import__(name).__version__)
    except (ImportError, AttributeError):
        return _version(name)


def conditions_text(info: dict[str, Any]) -> str:
    return (
        f"{info['date']}; {info['nproc']} CPUs ({info['cpu']}), {info['memory']}, {info['os']}, {info['libc']}; "
        f"Python {info['python']}, grpcio {info['grpcio']}, protobuf {info['protobuf']}, numpy {info['numpy']}, "
        f"onnxruntime {info['onnxruntime']}; command: `{info['command']}`"
    )


def print_goals(rows: list[Row]) -> None:
    """The rows that carry a goal, again, under one heading: the run's verdicts at a glance."""
    print("\n== goals")
    for row in rows:
        if row.goal is not None:
            print_row(row)


def save(
    rows: list[Row], info: dict[str, Any], raw: Any, json_path: Path | None, markdown_path: Path | None, **extra: Any
) -> None:
    """``--json``: the conditions, ``extra``, the rows and the raw results; ``--markdown``: the conditions and the
    rows' table; each where asked."""
    if json_path:
        data = {"conditions": info, **extra, "rows": [row.as_dict() for row in rows], "raw": raw}
        json_path.write_text(json.dumps(data, indent=1, default=str))
    if markdown_path:
        markdown_path.write_text(f"Conditions: {conditions_text(info)}\n\n{markdown_table(rows)}\n")


def finish(rows: list[Row], info: dict[str, Any], raw: Any, args: Any, runs: int, quiet: int) -> int:
    """The end of an interleaved bench: every row, the share of ``runs`` that started on a quiet CPU (``quiet``),
    the goals again, and the results saved where ``args`` (``--json``, ``--markdown``) asks. Returns 0."""
    for row in rows:
        print_row(row)
    print(f"\n{runs} measured runs, each checked; {quiet / max(runs, 1):.0%} started on a quiet CPU")
    print_goals(rows)
    save(rows, info, raw, args.json, args.markdown, args=vars(args) | {"json": None, "markdown": None})
    return 0


def timed(main: Callable[[], int]) -> int:
    """Run a bench's ``main``, print how long it took, return its status."""
    started = time.perf_counter()
    code = main()
    print(f"({(time.perf_counter() - started) / 60:.1f} min)")
    return code
