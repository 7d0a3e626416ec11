"""ExecuteMany: many operator calls over one stream with Client.map, and a failed item that fails alone."""

from __future__ import annotations

import sys

import numpy as np

import dmlrpc


def main(address: str) -> int:
    """Sort 500 rows over one stream, then send a bad item between good ones; return the exit code."""
    rng = np.random.default_rng(0)
    rows = [rng.standard_normal(16).astype(np.float32) for _ in range(500)]
    sort = dmlrpc.ops.top_k(rows[0], 16, direction="increasing").operator_desc  # one desc for every row
    failures = 0
    with dmlrpc.Client(address, timeout=60) as client:
        # In input order; at most the server's max_stream_items_in_flight rows are read ahead.
        for row, (values, indices) in zip(rows, client.map(sort, ([row] for row in rows)), strict=True):
            assert values is not None and indices is not None  # None only for unset optional outputs
            failures += not (np.array_equal(values, np.sort(row)) and np.array_equal(row[indices], values))
        print(f"{'PASS' if not failures else 'FAIL'} {len(rows)} sorts over one ExecuteMany stream, {failures} wrong")

        # Submit as you go: each item gets a Future; the bad one (a buffer too short) fails with the error its
        # unary call raises, and the items after it still run.
        with client.stream() as stream:
            before = stream.submit(sort, [rows[1]])
            bad = stream.submit(sort, [b"\0" * 8])
            after = stream.submit(sort, [rows[2]])
        error = bad.exception()
        (first, _), (last, _) = before.result(), after.result()
        ok = (
            isinstance(error, dmlrpc.InvalidArgumentError)
            and first is not None
            and np.array_equal(first, np.sort(rows[1]))
            and last is not None
            and np.array_equal(last, np.sort(rows[2]))
        )
        print(f"{'PASS' if ok else 'FAIL'} the bad item failed alone: {error}")
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "localhost:50051"))
