"""asyncio: many concurrent calls through one dmlrpc.AsyncClient channel."""

from __future__ import annotations

import asyncio
import sys

import numpy as np

import dmlrpc


async def main(address: str) -> int:
    """Sort 32 random rows concurrently (TOP_K1 with K = row length) and check them; return the exit code."""
    rng = np.random.default_rng(0)
    rows = [rng.standard_normal(16).astype(np.float32) for _ in range(32)]
    async with dmlrpc.AsyncClient(address, timeout=30) as client:
        results = await asyncio.gather(*(client.top_k(row, k=row.size, direction="increasing") for row in rows))
    failures = 0
    for row, (values, indices) in zip(rows, results, strict=True):
        failures += not (np.array_equal(values, np.sort(row)) and np.array_equal(row[indices], values))
    print(f"{'PASS' if not failures else 'FAIL'} {len(rows)} concurrent sorts, {failures} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "localhost:50051")))
