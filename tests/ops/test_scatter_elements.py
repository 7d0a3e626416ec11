"""SCATTER_ELEMENTS over the wire: examples, and properties against the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from tests.references import dml
from tests.strategies import INDEX_DTYPES, SCATTER_DTYPES, arrays, broadcast_values, layouts, shapes


def scatter_elements_desc(x, indices, updates, axis, strides=None):  # type: ignore[no-untyped-def]
    strides = strides or {}
    return operators_pb2.OperatorDesc(
        scatter_elements=operators_pb2.ScatterElementsOperatorDesc(
            input_tensor=tensor_desc(x, strides.get("input")),
            indices_tensor=tensor_desc(indices, strides.get("indices")),
            updates_tensor=tensor_desc(updates, strides.get("updates")),
            output_tensor=tensor_desc(x, strides.get("output")),
            axis=axis,
        )
    )


def test_docs_example(client: dmlrpc.Client) -> None:
    # ONNX's ScatterElements example (axis 0), which DirectML's semantics give the same way.
    x = np.zeros((3, 3), np.float32)
    indices = np.array([[1, 0, 2], [0, 2, 1]], np.uint32)
    updates = np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], np.float32)
    out = client.scatter_elements(x, indices, updates, axis=0)
    np.testing.assert_array_equal(out, np.array([[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]], np.float32))


def test_negative_axis_and_indices(client: dmlrpc.Client) -> None:
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = client.scatter_elements(x, np.array([[-1], [0]], np.int64), np.array([[7], [8]], np.int16), axis=-1)
    np.testing.assert_array_equal(out, [[0, 1, 7], [8, 4, 5]])


@st.composite
def scatter_elements_cases(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    shape = draw(shapes(), label="shape")
    axis = draw(st.integers(0, len(shape) - 1), label="axis")
    dtype = draw(st.sampled_from(SCATTER_DTYPES), label="dtype")
    index_dtype = draw(st.sampled_from(INDEX_DTYPES), label="index dtype")
    count = draw(st.integers(1, shape[axis]), label="indices along axis")
    indices_shape = list(shape)
    indices_shape[axis] = count
    # Distinct targets per column: a random permutation along the axis, truncated.
    keys = draw(arrays(np.float32, tuple(shape)).map(lambda a: a + np.arange(a.size).reshape(a.shape) * 1e-3))
    order = np.argsort(keys, axis=axis, kind="stable").take(range(count), axis=axis)
    if np.dtype(index_dtype).kind == "i" and draw(st.booleans(), label="negative"):
        order = order - shape[axis] * draw(arrays(np.int8, tuple(indices_shape)).map(lambda a: a % 2))
    mode = draw(st.sampled_from(["valid", "valid", "valid", "duplicate", "out of range"]), label="mode")
    flat = order.reshape(-1)
    if mode == "duplicate" and count > 1:
        flat[...] = 0
    elif mode == "out of range":
        flat[draw(st.integers(0, flat.size - 1))] = shape[axis] + draw(st.integers(0, 3))
    indices = order.astype(index_dtype)
    x = draw(arrays(dtype, tuple(shape)))
    updates = draw(arrays(dtype, tuple(indices_shape)))
    return x, indices, updates, axis


@given(case=scatter_elements_cases(), data=st.data())
def test_matches_reference(client: dmlrpc.Client, case, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    x, indices, updates, axis = case
    strides = {}
    layout = data.draw(layouts(x.shape, allow_broadcast=True), label="input layout")
    strides["input"], x = layout.strides, broadcast_values(x, layout)
    layout = data.draw(layouts(indices.shape, allow_broadcast=True), label="indices layout")
    strides["indices"], indices = layout.strides, broadcast_values(indices, layout)
    layout = data.draw(layouts(updates.shape, allow_broadcast=True), label="updates layout")
    strides["updates"], updates = layout.strides, broadcast_values(updates, layout)
    strides["output"] = data.draw(layouts(x.shape, allow_broadcast=False), label="output layout").strides

    expected = dml.scatter_elements(x, indices, updates, axis)
    desc = scatter_elements_desc(x, indices, updates, axis, strides)
    if isinstance(expected, str):
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            client.execute(desc, [x, indices, updates])
        assert caught.value.field_violations[0].field == "inputs[1].buffer.data"
        assert ("out of range" in caught.value.message) == (expected == "out of range")
        return
    (out,) = client.execute(desc, [x, indices, updates])
    assert out is not None and out.dtype == x.dtype
    np.testing.assert_array_equal(out, expected)
