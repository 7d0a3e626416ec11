"""Who holds the GIL a call: py-spy's native GIL samples of one process of ours and of its floor under one load."""

from __future__ import annotations

import argparse
import base64
import collections
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import h2load
import numpy as np
import procs
import report
from echo_server import tiny_response_bytes, top_k_response_bytes
from h2load import H2load, Load, Run
from run import payload, tiny_calls

from dmlrpc import ops

#: The scenarios, the method and its caveats (``--help``; bench/README.md, "Profiling the server").
_EPILOG = """scenarios:
  tiny             the tiny TOP_K1 of the DirectML docs: our server (--workers 1) against the parsing floor in one
                   process (echo_server.py --mode aio-parse), the 2-core machine's unary goals
  top-k-batching   TOP_K1 of a [1, 32000] FLOAT32 row (K = 8): our server (--workers 1, batching on) against the
                   batching floor (--mode aio-top-k --batch-size 64), the GPU host's batching goal
  top-k-batching-parsing
                   the same against the parsing batching floor (--parse: protobuf parses each request and writes
                   each response)

Each server is warmed up, measured, then measured again while py-spy record --gil --native --threads samples it
(blocking: whole stacks, native frames included). The event loop thread's samples are counted per 1,000 calls by
place: the handler (ours or the floor's), the event loop's own Python, and native code with no Python frame below
the loop's callback (gRPC's Cython core, libc, asyncio's C module). py-spy slows the process it samples, alike for
both: compare ratios and shares, not two runs' counts. Needs py-spy (pip install py-spy) and the right to trace the
server (root, or kernel.yama.ptrace_scope 0)."""
#: The event loop's callback: below it, with no Python frame of anybody's, is native code (gRPC's Cython core
#: driving the calls, asyncio's C tasks and futures, the allocator).
_CALLBACK = "Handle._run"
#: Frames of the code being compared: ours (server and codec) and the floors' handlers.
_HANDLER_FILES = ("dmlrpc_server/", "dmlrpc/", "echo_server.py")
_PYTHON_FRAME = re.compile(r"^(?P<name>.+) \((?P<file>[^()]+\.py):\d+\)$")
_NATIVE_FRAME = re.compile(r"\((?P<library>[^()]+\.so[^()]*)\)$")
#: Native libraries by what they are.
_LIBRARIES = {"cygrpc": "gRPC's Cython core", "libc": "libc (malloc, free, memcpy)", "_asyncio": "asyncio's C module"}


@dataclass(frozen=True)
class Scenario:
    """One comparison: the request, our server's flags, the floor and how its replies are proven."""

    request: bytes
    ours: list[str]
    floor: Callable[[str], procs.Server]
    floor_response_bytes: int


def scenario(name: str, provider: str) -> Scenario:
    if name == "tiny":
        call = tiny_calls()["top-k"]
        return Scenario(
            base64.b64decode(payload(call)),
            ["--workers", "1"],
            lambda _: procs.echo_server("aio-parse"),
            tiny_response_bytes(call.inputs[0]),
        )
    row = np.random.default_rng(0).standard_normal((1, 32000), dtype=np.float32)
    parse = name == "top-k-batching-parsing"
    floor = ["--columns", "32000", "--k", "8", "--batch-size", "64", *(["--parse"] if parse else [])]
    return Scenario(
        base64.b64decode(payload(ops.top_k(row, 8))),
        ["--workers", "1"],
        lambda provider: procs.echo_server("aio-top-k", args=["--provider", provider, *floor]),
        top_k_response_bytes(8, parse=parse),
    )


@dataclass
class Profile:
    """One server's samples, by thread and place, and its calls while sampled."""

    rps: float
    profiled_rps: float
    calls: float
    places: collections.Counter[str]
    frames: collections.Counter[str]
    other_threads: int


def profile(raw: Path) -> tuple[collections.Counter[str], collections.Counter[str], int]:
    """The event loop's samples by place, by our (or the floor's) innermost frame, and the other threads' total."""
    places: collections.Counter[str] = collections.Counter()
    frames: collections.Counter[str] = collections.Counter()
    other = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        samples = int(count)
        parts = stack.split(";")
        if "MainThread" not in parts[0]:
            other += samples
            continue
        python = [match for part in parts if (match := _PYTHON_FRAME.match(part))]
        callbacks = [index for index, match in enumerate(python) if match["name"] == _CALLBACK]
        # NOTE: only what a callback runs counts as the handler's (the entry point's frames are on every stack).
        below = python[callbacks[-1] + 1 :] if callbacks else []
        handler = [match for match in below if any(name in match["file"] for name in _HANDLER_FILES)]
        if handler:
            places["the handler: our code / the floor's"] += samples
            frames[handler[-1]["name"]] += samples
        elif callbacks and not below and parts[-1] != python[-1].string:
            native = _NATIVE_FRAME.search(parts[-1])
            library = native["library"] if native else "?"
            kind = next((label for key, label in _LIBRARIES.items() if key in library), "other native code")
            places[f"native, below {_CALLBACK}: {kind}"] += samples
        else:
            places["the event loop's Python (asyncio, selectors)"] += samples
    return places, frames, other


def measure(
    client: H2load, server: procs.Server, spy: str, load: Load, duration: float, rate: int, proof: dict[str, Any]
) -> Profile:
    """Warm ``server`` up, measure it unprofiled, then again while py-spy samples its (only) worker process."""
    client.run(server.target, load, Run(count=3000), **proof)
    unprofiled = client.run(server.target, load, Run(duration=duration), **proof)
    pids = [pid for pid in server.pids() if pid != server.pid] or [server.pid]
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "samples.txt"
        sampler = subprocess.Popen(
            [spy, "record", "--pid", str(pids[0]), "--rate", str(rate), "--duration", str(int(duration) + 2),
             "--format", "raw", "--output", str(raw), "--threads", "--gil", "--native"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        time.sleep(1.0)  # py-spy attaches
        profiled = client.run(server.target, load, Run(duration=duration), **proof)
        output, _ = sampler.communicate(timeout=duration + 60)
        if sampler.returncode != 0 or not raw.exists():
            raise RuntimeError(f"py-spy failed: {output.strip()[-400:]}")
        places, frames, other = profile(raw)
    return Profile(unprofiled["rps"], profiled["rps"], profiled["rps"] * duration, places, frames, other)


def per_thousand(count: int, calls: float) -> float:
    return 1000 * count / calls


def table(ours: Profile, floor: Profile) -> str:
    lines = [
        "| the event loop's thread, GIL held | ours (samples / 1,000 calls) | the floor's | ours / the floor's |",
        "|---|---|---|---|",
    ]
    places = sorted(set(ours.places) | set(floor.places), key=lambda place: -ours.places[place])
    totals = ("all of it", sum(ours.places.values()), sum(floor.places.values()))
    for place, mine, theirs in [totals, *((p, ours.places[p], floor.places[p]) for p in places)]:
        a, b = per_thousand(mine, ours.calls), per_thousand(theirs, floor.calls)
        lines.append(f"| {place} | {a:.1f} | {b:.1f} | {a / b:.2f}x |" if b else f"| {place} | {a:.1f} | {b:.1f} | |")
    lines.append(
        f"| other threads (batch and operator workers) | {per_thousand(ours.other_threads, ours.calls):.1f} | "
        f"{per_thousand(floor.other_threads, floor.calls):.1f} | |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenario", choices=["tiny", "top-k-batching", "top-k-batching-parsing"], default="tiny")
    parser.add_argument("--provider", default="cpu", help="ONNX Runtime's provider for both servers (cpu, cuda)")
    parser.add_argument("--h2load", help="the h2load binary (default: on PATH; tools/install-h2load.sh)")
    parser.add_argument("--py-spy", default=shutil.which("py-spy"), help="the py-spy binary (default: on PATH)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of each measured run")
    parser.add_argument("--rate", type=int, default=250, help="py-spy's samples a second")
    parser.add_argument("--frames", type=int, default=12, help="our innermost frames to list")
    args = parser.parse_args(argv)
    binary = h2load.find(args.h2load)
    if binary is None or not args.py_spy:
        print(h2load.MISSING if binary is None else "py-spy is not installed: pip install py-spy", file=sys.stderr)
        return 2
    chosen = scenario(args.scenario, args.provider)
    client = H2load(binary, h2load.grpc_frame(chosen.request))
    load = Load(8, 8, 1)
    command = "python bench/gil.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    print(report.conditions_text(report.conditions(command.strip())))
    starts = {
        "ours": lambda: procs.our_server("ours", chosen.ours, provider=args.provider),
        "floor": lambda: chosen.floor(args.provider),
    }
    measured: dict[str, Profile] = {}
    try:
        for name, start in starts.items():
            server = start().wait_ready(180)
            proof = (
                {"metrics_port": server.metrics_port}
                if name == "ours"
                else {"response_bytes": chosen.floor_response_bytes}
            )
            try:
                measured[name] = measure(client, server, args.py_spy, load, args.duration, args.rate, proof)
            finally:
                server.stop()
    finally:
        client.close()
    ours, floor = measured["ours"], measured["floor"]
    print(
        f"\n{args.scenario} at {load.inflight} in flight ({load.label()}): ours {ours.rps:,.0f} req/s unprofiled, "
        f"{ours.profiled_rps:,.0f} sampled; the floor {floor.rps:,.0f} and {floor.profiled_rps:,.0f} "
        f"(ours / the floor's: {ours.rps / floor.rps:.2f}x unprofiled)\n"
    )
    print(table(ours, floor))
    print(f"\nour innermost frames, samples / 1,000 calls (the top {args.frames}):")
    for name, count in ours.frames.most_common(args.frames):
        print(f"  {per_thousand(count, ours.calls):6.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
