"""Strided and broadcast buffers: DML_BUFFER_TENSOR_DESC strides (in elements) on inputs and outputs."""

from __future__ import annotations

import sys

import numpy as np

import dmlrpc
from dmlrpc.v1 import operators_pb2, tensor_pb2


def main(address: str) -> int:
    """Run TOP_K1 on a transposed (strided) view and on a broadcast row; return the process exit code."""
    matrix = np.array([[5, 1, 4], [2, 8, 3], [9, 0, 7]], np.float32)
    failures = 0
    with dmlrpc.Client(address, timeout=30) as client:
        # 1. The transpose of `matrix` without copying it: sizes {3,3}, strides {1,3}. The buffer holds `matrix`
        #    as it is (row-major); the strides make the server read it column by column.
        transposed = dmlrpc.tensor_desc((np.float32, (3, 3)), strides=[1, 3])
        desc = operators_pb2.OperatorDesc(
            top_k1=operators_pb2.TopK1OperatorDesc(
                input_tensor=transposed,
                output_value_tensor=dmlrpc.tensor_desc((np.float32, (3, 1))),
                output_index_tensor=dmlrpc.tensor_desc((np.uint32, (3, 1))),
                axis=1,
                k=1,
                axis_direction=tensor_pb2.AXIS_DIRECTION_DECREASING,
            )
        )
        values, indices = client.execute(desc, [matrix.tobytes()])  # raw bytes: laid out as the desc says
        assert values is not None and indices is not None
        ok = np.array_equal(values.ravel(), matrix.max(axis=0)) and np.array_equal(indices.ravel(), [2, 1, 2])
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} column maxima through strides [1, 3]: {values.ravel()} at {indices.ravel()}")

        # 2. Broadcast: one row of 4 values read three times (stride 0 on the first dimension), 16 bytes sent for
        #    a {3,4} tensor. The outputs use a padded layout (row stride 4 for 2 columns): gaps come back zeroed.
        row = np.array([3, 1, 4, 1], np.float32)
        desc = operators_pb2.OperatorDesc(
            top_k1=operators_pb2.TopK1OperatorDesc(
                input_tensor=dmlrpc.tensor_desc((np.float32, (3, 4)), strides=[0, 1]),
                output_value_tensor=dmlrpc.tensor_desc((np.float32, (3, 2)), strides=[4, 1]),
                output_index_tensor=dmlrpc.tensor_desc((np.uint32, (3, 2))),
                axis=1,
                k=2,
                axis_direction=tensor_pb2.AXIS_DIRECTION_INCREASING,
            )
        )
        values, indices = client.execute(desc, [row.tobytes()])  # 16 bytes: total_tensor_size_in_bytes
        assert values is not None and indices is not None
        ok = np.array_equal(values, [[1, 1]] * 3) and np.array_equal(indices, [[1, 3]] * 3)
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} smallest 2 of a broadcast row: {values.tolist()} at {indices.tolist()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "localhost:50051"))
