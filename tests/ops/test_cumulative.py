"""CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT over the wire: the pages' examples, and properties against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators import REGISTRY
from tests.directml_lowering import run_directml_lowering
from tests.references import cumulative as ref
from tests.strategies import arrays, broadcast_values, layouts, shapes

INC, DEC = tensor_pb2.AXIS_DIRECTION_INCREASING, tensor_pb2.AXIS_DIRECTION_DECREASING
CASES = ["cumulative_summation", "cumulative_product"]
X = np.array([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]], np.float32)


def run(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of one execution, as host arrays."""
    outputs = client.execute(desc, inputs)
    assert all(isinstance(out, np.ndarray) for out in outputs)
    return [out for out in outputs if isinstance(out, np.ndarray)]


def _dtypes(case: str) -> list[Any]:
    table = REGISTRY[case].support_at(operators_pb2.FEATURE_LEVEL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table["input_tensor"].data_types), key=str)


def scan_desc(
    case: str,
    x: np.ndarray,
    axis: int,
    direction: int,
    exclusive: bool,
    *,
    out: tuple[Any, tuple[int, ...]] | None = None,
    strides: dict[str, tuple[int, ...] | None] | None = None,
) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    flag = "has_exclusive_product" if case == "cumulative_product" else "has_exclusive_sum"
    message = (
        operators_pb2.CumulativeProductOperatorDesc
        if case == "cumulative_product"
        else operators_pb2.CumulativeSummationOperatorDesc
    )
    inner = message(
        input_tensor=tensor_desc(x, strides.get("input")),
        output_tensor=tensor_desc(out or (x.dtype, x.shape), strides.get("output")),
        axis=axis,
        axis_direction=direction,  # type: ignore[arg-type]
        **{flag: exclusive},
    )
    desc = operators_pb2.OperatorDesc()
    getattr(desc, case).CopyFrom(inner)
    return desc


PAGE_EXAMPLES = [
    ("cumulative_summation", 3, INC, False, [[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]]),
    ("cumulative_summation", 3, INC, True, [[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]]),
    ("cumulative_summation", 3, DEC, False, [[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]]),
    ("cumulative_summation", 2, INC, False, [[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]]),
    ("cumulative_product", 3, INC, False, [[2, 2, 6, 30], [3, 24, 168, 504], [9, 54, 108, 432]]),
    ("cumulative_product", 3, INC, True, [[1, 2, 2, 6], [1, 3, 24, 168], [1, 9, 54, 108]]),
    ("cumulative_product", 3, DEC, False, [[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]]),
    ("cumulative_product", 2, INC, False, [[2, 1, 3, 5], [6, 8, 21, 15], [54, 48, 42, 60]]),
]


@pytest.mark.parametrize(("case", "axis", "direction", "exclusive", "expected"), PAGE_EXAMPLES)
def test_page_examples(
    client: dmlrpc.Client, case: str, axis: int, direction: int, exclusive: bool, expected: list[list[int]]
) -> None:
    (out,) = run(client, scan_desc(case, X, axis, direction, exclusive), [X])
    assert out is not None and out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([[expected]], np.float32))


def test_integer_products_wrap(client: dmlrpc.Client) -> None:
    x = np.array([2**31 - 1, 3, -5, 2**20, 7], np.int32)
    (out,) = run(client, scan_desc("cumulative_product", x, 0, INC, False), [x])
    np.testing.assert_array_equal(out, ref.scan(x, 0, False, False, product=True))
    u = np.array([2**63 + 5, 2**40, 3], np.uint64)
    (total,) = run(client, scan_desc("cumulative_summation", u, 0, DEC, True), [u])
    np.testing.assert_array_equal(total, ref.scan(u, 0, True, True, product=False))


@settings(max_examples=30)
@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES), label="case")
    dtype = data.draw(st.sampled_from(_dtypes(case)), label="dtype")
    shape = data.draw(shapes(), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    direction = data.draw(st.sampled_from([INC, DEC]), label="direction")
    exclusive = data.draw(st.booleans(), label="exclusive")
    input_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    output_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    x = broadcast_values(data.draw(arrays(dtype, shape), label="x"), input_layout)
    desc = scan_desc(
        case, x, axis, direction, exclusive, strides={"input": input_layout.strides, "output": output_layout.strides}
    )
    (out,) = run(client, desc, [x])
    assert out is not None and out.dtype == x.dtype and out.shape == shape
    expected = ref.scan(x, axis, direction == DEC, exclusive, product=case == "cumulative_product")
    if out.dtype.kind == "f":
        # The order of the float operations differs (a doubling scan for products): relative tolerances.
        tolerance = 4e-3 if out.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float64), rtol=tolerance, atol=1e-3)
    else:
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("case", CASES)
def test_rejects(client: dmlrpc.Client, case: str) -> None:
    p = f"operator_desc.{case}"
    bad = [
        (scan_desc(case, X, 4, INC, False), f"{p}.axis"),
        (scan_desc(case, X, 0, 2, False), f"{p}.axis_direction"),
        (scan_desc(case, X, 0, INC, False, out=(np.float16, X.shape)), f"{p}.output_tensor.buffer.data_type"),
        (scan_desc(case, X, 0, INC, False, out=(np.float32, (1, 1, 4, 3))), f"{p}.output_tensor.buffer.sizes"),
        (scan_desc(case, X, 0, INC, False, out=(np.float32, (1, 3, 4))), f"{p}.output_tensor.buffer.dimension_count"),
    ]
    for desc, field in bad:
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            client.execute(desc, [X])
        assert caught.value.field_violations[0].field == field
    x64 = X.astype(np.float64)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(scan_desc(case, x64, 0, INC, False), [x64])
    assert caught.value.field_violations[0].field == f"{p}.input_tensor.buffer.data_type"


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("build", [dmlrpc.ops.cumsum, dmlrpc.ops.cumprod])
def test_the_directml_lowering_wraps_in_32_bits(dtype: type, build: Any) -> None:
    # On DirectML, 32-bit integers scan in INT32 (no 64-bit shader operations); run here on the CPU provider, its
    # sums and products must wrap as the INT64 lowering's do.
    info = np.iinfo(dtype)
    x = np.array([[info.max, 3, info.max, 7, 2**16 + 1], [info.min, -1 % (int(info.max) + 1), 5, 2**16, 2**16]])
    x = x.astype(dtype)
    (result,), model = run_directml_lowering(build(x, 1))
    casts = {a.i for n in model.graph.node if n.op_type == "Cast" for a in n.attribute if a.name == "to"}
    assert not casts & {7, 13}  # onnx.TensorProto.INT64, UINT64
    wide = x.astype(np.uint64)
    expected = np.cumsum(wide, axis=1) if build is dmlrpc.ops.cumsum else np.cumprod(wide, axis=1)
    np.testing.assert_array_equal(result, expected.astype(dtype))
