"""DirectML's documented TOP_K1, SCATTER_ND and SCATTER examples through the Python SDK, checked."""

from __future__ import annotations

import sys

import numpy as np

import dmlrpc


def main(address: str) -> int:
    """Run each example and compare with the result DirectML's pages give; return the process exit code."""
    a = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
    b = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], np.float32)
    # The four examples of the DML_TOP_K1_OPERATOR_DESC page: input, axis, k, direction, values, indices.
    top_k_examples = [
        (a, 3, 2, "decreasing", [[[[11, 10], [9, 8], [7, 6]]]], [[[[3, 2], [2, 3], [3, 2]]]]),
        (a, 2, 2, "decreasing", [[[[4, 5, 10, 11], [3, 2, 9, 8]]]], [[[[2, 2, 0, 0], [1, 1, 1, 1]]]]),
        (b, 3, 3, "decreasing", [[[[3, 2, 2], [5, 5, 4], [6, 6, 6]]]], [[[[3, 1, 2], [2, 3, 1], [0, 1, 2]]]]),
        (b, 3, 3, "increasing", [[[[1, 2, 2], [3, 4, 5], [6, 6, 6]]]], [[[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]]),
    ]
    failures = 0
    with dmlrpc.Client(address, timeout=30) as client:
        for number, (x, axis, k, direction, values, indices) in enumerate(top_k_examples, 1):
            got_values, got_indices = client.top_k(x, k, axis, direction=direction)  # type: ignore[arg-type]
            ok = np.array_equal(got_values, values) and np.array_equal(got_indices, indices)
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} top_k1 example {number}: {got_values.ravel()} {got_indices.ravel()}")

        # DML_SCATTER_ND_OPERATOR_DESC's example: the SDK pads the ranks to DirectML's equal dimension counts.
        out = client.scatter_nd(
            np.arange(1, 9, dtype=np.float32), np.array([[4], [3], [1], [7]]), np.array([9, 10, 11, 12], np.float32)
        )
        ok = np.array_equal(out, [1, 11, 3, 10, 9, 6, 7, 12])
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} scatter_nd example: {out}")

        # DML_SCATTER_ELEMENTS (alias DML_SCATTER) along axis 0.
        out = client.scatter_elements(
            np.zeros((3, 3), np.float32),
            np.array([[1, 0, 2], [0, 2, 1]], np.uint32),
            np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], np.float32),
            axis=0,
        )
        expected = np.array([[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]], np.float32)
        ok = np.array_equal(out, expected)
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} scatter_elements example: {out.tolist()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "localhost:50051"))
