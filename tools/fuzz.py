"""Long fuzz run against a server subprocess: executions, statuses seen, crashes and the server's peak RSS."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import grpc
from hypothesis import HealthCheck, Phase, given, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reliability.fuzzing import (  # noqa: E402
    DOCUMENTED,
    EXECUTE,
    EXECUTE_STREAM,
    FUZZ_LIMITS,
    Fuzzed,
    execute_requests,
    stream_sequences,
)
from tests.test_cli import LISTENING, ServerProcess  # noqa: E402

BATCH = 200


def server_flags(limits: dict[str, int]) -> list[str]:
    return [item for name, value in limits.items() for item in (f"--{name.replace('_', '-')}", str(value))]


def proc_status(pid: int, field: str) -> int:
    """A ``VmRSS``/``VmHWM`` style field of /proc/PID/status, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def run(
    address: str,
    server: ServerProcess,
    statuses: Counter[str],
    crashes: list[tuple[str, bytes]],
    stop_at: float,
    examples: int,
    started: float,
) -> None:
    """Fuzz Execute and ExecuteStream in batches until ``stop_at``, ``examples`` executions or a server exit."""
    with grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", 128 << 20)]) as channel:
        execute = channel.unary_unary(EXECUTE, request_serializer=None, response_deserializer=None)
        stream = channel.stream_stream(EXECUTE_STREAM, request_serializer=None, response_deserializer=None)

        def record(method: str, code: grpc.StatusCode, reproducer: bytes) -> None:
            statuses[f"{method} {code.name}"] += 1
            if code not in DOCUMENTED or server.process.poll() is not None:
                crashes.append((f"{method}-{code.name}", reproducer))

        options = settings(
            max_examples=BATCH,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )

        @options
        @given(execute_requests())
        def fuzz_execute(request: Fuzzed) -> None:
            try:
                execute(request.wire, timeout=30)
                record("Execute", grpc.StatusCode.OK, request.wire)
            except grpc.RpcError as error:
                record("Execute", error.code(), request.wire)

        @options
        @given(stream_sequences())
        def fuzz_stream(case: tuple[list[bytes], str]) -> None:
            messages, _ = case
            try:
                for _ in stream(iter(messages), timeout=30):
                    pass
                record("ExecuteStream", grpc.StatusCode.OK, b"\n--\n".join(m.hex().encode() for m in messages))
            except grpc.RpcError as error:
                record("ExecuteStream", error.code(), b"\n--\n".join(m.hex().encode() for m in messages))

        while time.monotonic() < stop_at and server.process.poll() is None:
            fuzz_execute()
            fuzz_stream()
            executions = sum(statuses.values())
            elapsed = time.monotonic() - started
            print(f"{elapsed:7.0f} s  {executions} executions  {len(crashes)} crashes  {dict(statuses)}", flush=True)
            if examples and executions >= examples:
                break


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=5.0, help="stop after this long")
    parser.add_argument("--examples", type=int, default=0, help="stop after this many executions (0: no limit)")
    parser.add_argument("--crash-dir", type=Path, default=Path("fuzz-crashes"), help="where reproducers go")
    args = parser.parse_args()

    server = ServerProcess("--port", "0", "--metrics-port", "0", "--provider", "cpu", *server_flags(FUZZ_LIMITS))
    match = server.wait_for(LISTENING)
    if match is None:
        print(server.log(), file=sys.stderr)
        return 2
    pid = server.process.pid
    address = f"127.0.0.1:{match.group(1)}"
    statuses: Counter[str] = Counter()
    crashes: list[tuple[str, bytes]] = []
    start_rss = proc_status(pid, "VmRSS")
    started = time.monotonic()
    stop_at = started + args.minutes * 60

    try:
        run(address, server, statuses, crashes, stop_at, args.examples, started)
    finally:
        alive = server.process.poll() is None
        end_rss = proc_status(pid, "VmRSS") if alive else 0
        peak_rss = proc_status(pid, "VmHWM") if alive else 0
        server.close()
    elapsed = time.monotonic() - started
    if crashes:
        args.crash_dir.mkdir(parents=True, exist_ok=True)
        for number, (name, data) in enumerate(crashes):
            (args.crash_dir / f"{number:04d}-{name}.bin").write_bytes(data)
    executions = sum(statuses.values())
    print()
    print(f"duration           {elapsed:.0f} s")
    print(f"executions         {executions} ({executions / elapsed:.0f}/s)")
    for name, count in sorted(statuses.items()):
        print(f"  {name:<32} {count}")
    print(f"crashes            {len(crashes)}" + (f" (reproducers in {args.crash_dir})" if crashes else ""))
    print(f"server alive       {alive}")
    print(f"server RSS         start {start_rss >> 20} MiB, end {end_rss >> 20} MiB, peak {peak_rss >> 20} MiB")
    return 1 if crashes or not alive else 0


if __name__ == "__main__":
    sys.exit(main())
