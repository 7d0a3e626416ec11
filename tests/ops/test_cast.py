"""CAST over the wire: every pair of types in the 6.4 table against the NumPy reference, and the chosen rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import cast as ref
from tests.strategies import arrays, broadcast_values, layouts, shapes


def run(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of one execution, as host arrays."""
    outputs = client.execute(desc, inputs)
    assert all(isinstance(out, np.ndarray) for out in outputs)
    return [out for out in outputs if isinstance(out, np.ndarray)]


def _dtypes(field: str) -> list[Any]:
    table = REGISTRY["cast"].support_at(operators_pb2.FEATURE_LEVEL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table[field].data_types), key=str)


def cast_desc(
    x: np.ndarray,
    dtype: Any,
    shape: tuple[int, ...] | None = None,
    strides: dict[str, tuple[int, ...] | None] | None = None,
) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    return operators_pb2.OperatorDesc(
        cast=operators_pb2.CastOperatorDesc(
            input_tensor=tensor_desc(x, strides.get("input")),
            output_tensor=tensor_desc((dtype, x.shape if shape is None else shape), strides.get("output")),
        )
    )


def _run(client: dmlrpc.Client, x: np.ndarray, dtype: Any) -> np.ndarray:
    (out,) = run(client, cast_desc(x, dtype), [x])
    assert out is not None and out.dtype == np.dtype(dtype) and out.shape == x.shape
    return out


@settings(max_examples=30)
@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(_dtypes("input_tensor")), label="from")
    target = data.draw(st.sampled_from(_dtypes("output_tensor")), label="to")
    shape = data.draw(shapes(), label="shape")
    input_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    output_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    # Small values (ties, exact conversions) or the whole range (NaN, infinities, saturation, wrap-around).
    values = data.draw(st.one_of(arrays(source, shape), hnp.arrays(source, shape)), label="x")
    x = broadcast_values(values, input_layout)
    desc = cast_desc(x, target, strides={"input": input_layout.strides, "output": output_layout.strides})
    (out,) = run(client, desc, [x])
    assert out is not None and out.dtype == target and out.shape == shape
    np.testing.assert_array_equal(out, ref.cast(x, target))


SPECIAL = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.5, -2.5, 0.99, -0.99, 2.0**63, 2.0**64, -(2.0**63)])


@pytest.mark.parametrize("target", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("source", [np.float64, np.float32])
def test_float_to_integer_truncates_and_saturates(client: dmlrpc.Client, source: Any, target: Any) -> None:
    x = SPECIAL.astype(source)
    info = np.iinfo(target)
    out = _run(client, x, target)
    top, bottom = int(info.max), int(info.min)
    expected = [0, top, bottom, top, bottom, 2, max(-2, bottom), 0, 0, min(2**63, top), top, max(-(2**63), bottom)]
    assert out.tolist() == expected


def test_float16_to_integer(client: dmlrpc.Client) -> None:
    x = np.array([np.nan, np.inf, -65504, 300.5, -1.5], np.float16)
    assert _run(client, x, np.int8).tolist() == [0, 127, -128, 127, -1]
    assert _run(client, x, np.uint16).tolist() == [0, 65535, 0, 300, 0]


def test_integers_wrap(client: dmlrpc.Client) -> None:
    x = np.array([-1, 2**63 - 1, -(2**63), 300], np.int64)
    assert _run(client, x, np.uint8).tolist() == [255, 255, 0, 44]
    assert _run(client, x, np.uint64).tolist() == [2**64 - 1, 2**63 - 1, 2**63, 300]
    assert _run(client, x.astype(np.uint64), np.int64).tolist() == x.tolist()


def test_float64_to_float16_rounds_once(client: dmlrpc.Client) -> None:
    # Values just beside FLOAT16 midpoints, whose FLOAT32 rounding lands on the midpoint (double rounding).
    halves = np.arange(1, 0x7C00, 7, dtype=np.uint16).view(np.float16).astype(np.float64)  # finite FLOAT16s
    midpoints = halves[:-1] + np.diff(halves) / 2
    x = np.concatenate(
        [
            midpoints * (1 + 1e-12),
            midpoints * (1 - 1e-12),
            midpoints,
            -midpoints * (1 + 1e-12),
            [65519.999999999, 65520.0],
        ]
    )
    np.testing.assert_array_equal(_run(client, x, np.float16), ref.cast(x, np.float16))


def test_64_bit_integers_to_floats(client: dmlrpc.Client) -> None:
    x = np.array([2**53 + 1, 2**62 + 2**38 + 1, -(2**63), 2**63 - 1], np.int64)
    np.testing.assert_array_equal(_run(client, x, np.float64), ref.cast(x, np.float64))
    np.testing.assert_array_equal(_run(client, x, np.float32), ref.cast(x, np.float32))
    u = np.array([2**64 - 1, 2**63 + 2**39 + 1], np.uint64)
    np.testing.assert_array_equal(_run(client, u, np.float64), ref.cast(u, np.float64))


X = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize(
    ("shape", "field"),
    [
        ((3, 2), "operator_desc.cast.output_tensor.buffer.sizes"),
        ((1, 2, 3), "operator_desc.cast.output_tensor.buffer.dimension_count"),
    ],
)
def test_rejects_other_sizes(client: dmlrpc.Client, shape: tuple[int, ...], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(cast_desc(X, np.int32, shape), [X])
    assert caught.value.field_violations[0].field == field
