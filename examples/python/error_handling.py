"""Errors: typed exceptions with the status code and google.rpc.BadRequest field violations."""

from __future__ import annotations

import sys

import numpy as np

import dmlrpc
from dmlrpc.v1 import operators_pb2, tensor_pb2


def main(address: str) -> int:
    """Trigger a broken rule, an out-of-range index, an oversized desc and an overlap; return the exit code."""
    failures = 0
    with dmlrpc.Client(address, timeout=30) as client:
        # A DirectML rule broken in the desc: K larger than the axis.
        try:
            client.top_k(np.arange(4, dtype=np.float32), k=9)
        except dmlrpc.InvalidArgumentError as error:
            print(f"PASS {error}")
            for violation in error.field_violations:
                print(f"     field {violation.field}: {violation.description}")
            failures += [v.field for v in error.field_violations] != ["operator_desc.top_k1.k"]
        else:
            failures += 1

        # A bad value in a buffer: the violation names the binding (inputs[1] is the indices tensor).
        try:
            client.scatter_nd(np.zeros(4, np.float32), np.array([[7]], np.uint32), np.array([1], np.float32))
        except dmlrpc.InvalidArgumentError as error:
            print(f"PASS {error}")
            for violation in error.field_violations:
                print(f"     field {violation.field}: {violation.description}")
            failures += not error.field_violations[0].field.startswith("inputs[1]")
        else:
            failures += 1

        # A desc larger than the server's limits: refused from the desc alone (4 GiB input, no data sent).
        limits = client.get_capabilities().limits
        huge = operators_pb2.OperatorDesc(
            top_k1=operators_pb2.TopK1OperatorDesc(
                input_tensor=dmlrpc.tensor_desc((np.float32, (32768, 32768))),
                output_value_tensor=dmlrpc.tensor_desc((np.float32, (32768, 1))),
                output_index_tensor=dmlrpc.tensor_desc((np.uint32, (32768, 1))),
                axis=1,
                k=1,
                axis_direction=tensor_pb2.AXIS_DIRECTION_DECREASING,
            )
        )
        try:
            client.execute(huge, [b""])
        except dmlrpc.ResourceExhaustedError as error:
            print(f"PASS {error} (max_tensor_bytes = {limits.max_tensor_bytes})")
        else:
            failures += 1

        # Every failure is a dmlrpc.DmlRpcError subclass (never a raw grpc.RpcError), so one handler catches all.
        try:
            client.scatter_elements(np.zeros(3, np.int32), np.array([0, 0], np.int64), np.array([1, 2], np.int32))
        except dmlrpc.DmlRpcError as error:
            print(f"PASS {type(error).__name__}: {error}")
        else:
            failures += 1

        # Which operators does the server execute at all? GetCapabilities says so before anything fails.
        capabilities = client.get_capabilities()
        executable = [op.name for op in capabilities.operators if op.executable]
        print(f"executable here: {', '.join(executable)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "localhost:50051"))
