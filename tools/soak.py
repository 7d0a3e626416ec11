"""Soak run against a server subprocess: mixed load at the saturation point, errors, p50/p99 over time, RSS."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reliability.soaking import CONCURRENCY, Interval, soak  # noqa: E402
from tests.test_cli import LISTENING, ServerProcess  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=5.0, help="measured duration, after the warm-up")
    parser.add_argument("--warmup-seconds", type=float, default=20.0)
    parser.add_argument("--interval-seconds", type=float, default=30.0)
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    parser.add_argument("server_args", nargs="*", help="extra dmlrpc-server flags (after --)")
    args = parser.parse_args()

    server = ServerProcess("--port", "0", "--metrics-port", "0", "--provider", "cpu", *args.server_args)
    match = server.wait_for(LISTENING)
    if match is None:
        print(server.log(), file=sys.stderr)
        return 2

    def show(interval: Interval) -> None:
        print(
            f"{interval.end_s:7.0f} s  {interval.calls:7d} calls  p50 {interval.p50_ms:7.2f} ms  "
            f"p99 {interval.p99_ms:7.2f} ms  RSS {interval.rss_bytes / (1 << 20):7.1f} MiB  errors {interval.errors}",
            flush=True,
        )

    try:
        report = asyncio.run(
            soak(
                f"127.0.0.1:{match.group(1)}",
                server.process.pid,
                args.minutes * 60,
                warmup_s=args.warmup_seconds,
                concurrency=args.concurrency,
                interval_s=args.interval_seconds,
                on_interval=show,
            )
        )
        alive = server.process.poll() is None
    finally:
        server.close()
    print()
    print(f"duration        {report.seconds:.0f} s after {report.warmup_s:.0f} s warm-up, {args.concurrency} in flight")
    print(f"calls           {report.calls} ({report.throughput:.0f}/s)")
    print(f"statuses        {dict(report.statuses)}")
    print(f"wrong results   {report.wrong}")
    print(
        f"server RSS      start {report.rss_start / (1 << 20):.1f} MiB, end {report.rss_end / (1 << 20):.1f} MiB, "
        f"growth {report.rss_growth:+.2%}"
    )
    print(f"server alive    {alive}")
    ok = alive and not report.unexpected_errors and not report.wrong and report.rss_growth < 0.05
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
