"""Compiled graphs and operators over the wire: each result equals the same operators executed one by one."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc import ops
from dmlrpc.codec import tensor_desc
from dmlrpc.graph import GraphTensor
from dmlrpc.handles import CompiledOperator
from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2, tensor_pb2
from dmlrpc_server.graphs import strip_owned
from dmlrpc_server.runtime.handles import Handle
from tests.conftest import ServerThread

OWNED = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML
RNG = np.random.default_rng(20261121)
X = RNG.standard_normal((4, 8)).astype(np.float32)
Y = RNG.standard_normal((4, 8)).astype(np.float32)


def _held(server: ServerThread) -> dict[str, Handle]:
    """The server's compiled handles by id (every owner's)."""
    return {entry.handle: entry for entry in server.built.service.handles}


def compiled_kind(server: ServerThread, op: CompiledOperator) -> str:
    return type(_held(server)[op.handle].compiled).__name__


def one(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: Sequence[Any]) -> np.ndarray:
    """The single output of one Execute call (the reference)."""
    (result,) = client.execute(desc, list(inputs))
    assert isinstance(result, np.ndarray)
    return result


def arrays(results: Sequence[Any]) -> list[np.ndarray]:
    assert all(isinstance(r, np.ndarray) for r in results), results
    return list(results)


def reduce_desc(shape: tuple[int, ...], dtype: Any, axes: list[int]) -> operators_pb2.OperatorDesc:
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape))
    return operators_pb2.OperatorDesc(
        reduce=operators_pb2.ReduceOperatorDesc(
            function=operators_pb2.REDUCE_FUNCTION_SUM,
            input_tensor=tensor_desc((dtype, shape)),
            output_tensor=tensor_desc((dtype, out_shape)),
            axis_count=len(axes),
            axes=axes,
        )
    )


def cast_desc(shape: tuple[int, ...], source: Any, target: Any) -> operators_pb2.OperatorDesc:
    return operators_pb2.OperatorDesc(
        cast=operators_pb2.CastOperatorDesc(
            input_tensor=tensor_desc((source, shape)), output_tensor=tensor_desc((target, shape))
        )
    )


def slice1_desc(
    shape: tuple[int, ...], dtype: Any, offsets: list[int], sizes: list[int], strides: list[int]
) -> operators_pb2.OperatorDesc:
    return operators_pb2.OperatorDesc(
        slice1=operators_pb2.Slice1OperatorDesc(
            input_tensor=tensor_desc((dtype, shape)),
            output_tensor=tensor_desc((dtype, tuple(sizes[d] // abs(strides[d]) for d in range(len(shape))))),
            dimension_count=len(shape),
            input_window_offsets=offsets,
            input_window_sizes=sizes,
            input_window_strides=strides,
        )
    )


def gather_desc(
    shape: tuple[int, ...], dtype: Any, indices: tuple[int, ...], index_dtype: Any, out: tuple[int, ...], axis: int
) -> operators_pb2.OperatorDesc:
    return operators_pb2.OperatorDesc(
        gather=operators_pb2.GatherOperatorDesc(
            input_tensor=tensor_desc((dtype, shape)),
            indices_tensor=tensor_desc((index_dtype, indices)),
            output_tensor=tensor_desc((dtype, out)),
            axis=axis,
            index_dimensions=1,
        )
    )


def gather_elements_desc(shape: tuple[int, ...], dtype: Any, index_dtype: Any, axis: int) -> operators_pb2.OperatorDesc:
    return operators_pb2.OperatorDesc(
        gather_elements=operators_pb2.GatherElementsOperatorDesc(
            input_tensor=tensor_desc((dtype, shape)),
            indices_tensor=tensor_desc((index_dtype, shape)),
            output_tensor=tensor_desc((dtype, shape)),
            axis=axis,
        )
    )


def test_a_pass_through_chain_is_one_session(client: dmlrpc.Client, server: ServerThread) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.float32, (4, 8))
    y = g.activation("relu", g.element_wise("add", x, x))
    values, indices = g.top_k(y, 3)
    g.output(values, indices)
    desc = g.desc()
    with client.compile(g) as op:
        got_values, got_indices = arrays(op(X))
        compiled = _held(server)[op.handle].compiled
        assert type(compiled).__name__ == "Compiled"
        planned = 0
        for node in desc.nodes:
            stripped, _ = strip_owned(node.operator.operator, "x")
            planned += len(server.built.catalog.plan_node(stripped, "x")[0].model.graph.node)
        assert len(compiled.plan.model.graph.node) == planned
    doubled = one(client, ops.element_wise("add", X, X).operator_desc, [X, X])
    rectified = one(client, ops.activation("relu", X).operator_desc, [doubled])
    ref_values, ref_indices = arrays(client.execute(ops.top_k(X, 3).operator_desc, [rectified]))
    np.testing.assert_array_equal(got_values, ref_values)
    np.testing.assert_array_equal(got_indices, ref_indices)
    assert got_indices.dtype == np.uint32 and got_values.shape == (4, 3)


def test_fan_out_fan_in_constants_and_several_outputs(client: dmlrpc.Client, server: ServerThread) -> None:
    bias = RNG.standard_normal((4, 8)).astype(np.float32)
    g = dmlrpc.Graph()
    x = g.input(np.float32, (4, 8))
    w = g.input(np.float32, (4, 8))
    a = g.element_wise("add", x, w)  # two graph inputs
    b = g.activation("relu", a)  # a fans out to b, c and e
    c = g.activation("sigmoid", a)
    d = g.element_wise("multiply", b, c)  # fan-in
    e = g.element_wise("subtract", d, g.constant(bias))
    f = g.element_wise("max", e, a)
    h = g.element_wise("multiply", x, x)  # x feeds two nodes (and both inputs of one)
    g.output(f, b, h)
    with client.compile(g) as op:
        got = arrays(op(X, Y))
        assert compiled_kind(server, op) == "Compiled"
        assert [tuple(t.buffer.sizes) for t in op.output_descs] == [(4, 8)] * 3
    ew = ops.element_wise
    ra = one(client, ew("add", X, Y).operator_desc, [X, Y])
    rb = one(client, ops.activation("relu", X).operator_desc, [ra])
    rc = one(client, ops.activation("sigmoid", X).operator_desc, [ra])
    rd = one(client, ew("multiply", X, X).operator_desc, [rb, rc])
    re = one(client, ew("subtract", X, X).operator_desc, [rd, bias])
    rf = one(client, ew("max", X, X).operator_desc, [re, ra])
    rh = one(client, ew("multiply", X, X).operator_desc, [X, X])
    for value, reference in zip(got, [rf, rb, rh], strict=True):
        np.testing.assert_allclose(value, reference, rtol=1e-6, atol=1e-6)


def test_integer_chain_with_cast_reduce_slice_and_gather(client: dmlrpc.Client) -> None:
    xi = RNG.integers(-50, 50, size=(3, 6)).astype(np.int32)
    offset = RNG.integers(-5, 5, size=(3, 6)).astype(np.int32)
    picks = np.array([[1, 0]], np.uint32)
    g = dmlrpc.Graph()
    x = g.input(np.int32, (3, 6))
    shifted = g.element_wise("add", x, g.constant(offset))
    (sliced,) = g.node(slice1_desc((3, 6), np.int32, [0, 1], [3, 4], [1, 2]), [shifted])  # (3, 2)
    (gathered,) = g.node(gather_desc((3, 2), np.int32, (1, 2), np.uint32, (3, 2), 1), [sliced, g.constant(picks)])
    (as_float,) = g.node(cast_desc((3, 2), np.int32, np.float32), [gathered])
    (summed,) = g.node(reduce_desc((3, 2), np.float32, [1]), [as_float])
    (total,) = g.node(reduce_desc((3, 6), np.int32, [0, 1]), [shifted])
    g.output(summed, gathered, total)
    with client.compile(g) as op:
        got = arrays(op(xi))
    r_shifted = one(client, ops.element_wise("add", xi, xi).operator_desc, [xi, offset])
    r_sliced = one(client, slice1_desc((3, 6), np.int32, [0, 1], [3, 4], [1, 2]), [r_shifted])
    r_gathered = one(client, gather_desc((3, 2), np.int32, (1, 2), np.uint32, (3, 2), 1), [r_sliced, picks])
    r_float = one(client, cast_desc((3, 2), np.int32, np.float32), [r_gathered])
    r_summed = one(client, reduce_desc((3, 2), np.float32, [1]), [r_float])
    r_total = one(client, reduce_desc((3, 6), np.int32, [0, 1]), [r_shifted])
    np.testing.assert_allclose(got[0], r_summed)
    np.testing.assert_array_equal(got[1], r_gathered)
    np.testing.assert_array_equal(got[2], r_total)
    assert got[1].dtype == np.int32 and got[2].shape == (1, 1)
    np.testing.assert_array_equal(got[2], [[(xi + offset).sum()]])
    np.testing.assert_array_equal(got[1], (xi + offset)[:, 1:5:2][:, [1, 0]])


def test_unset_optional_input_and_fused_activation(client: dmlrpc.Client) -> None:
    scale = np.full((4, 8), 0.05, np.float32)
    quantize = ops.element_wise("quantize_linear", X, scale, None, output_dtype=np.uint8).operator_desc
    add1 = ops.element_wise("add1", X, X, fused_activation=ops.activation("relu").operator_desc).operator_desc
    g = dmlrpc.Graph()
    x = g.input(np.float32, (4, 8))
    y = g.input(np.float32, (4, 8))
    (fused,) = g.node(add1, [x, y])
    (quantized,) = g.node(quantize, [fused, g.constant(scale), None])  # zero_point_tensor left unset
    g.output(quantized, fused)
    with client.compile(g) as op:
        got_quantized, got_fused = arrays(op(X, Y))
    r_fused = one(client, add1, [X, Y])
    r_quantized = one(client, quantize, [r_fused, scale, None])
    np.testing.assert_array_equal(got_fused, r_fused)
    np.testing.assert_array_equal(got_fused, np.maximum(X + Y, 0))
    np.testing.assert_array_equal(got_quantized, r_quantized)
    assert got_quantized.dtype == np.uint8 and got_quantized.any()


def test_host_checked_inputs_between_nodes_run_staged(client: dmlrpc.Client, server: ServerThread) -> None:
    data = RNG.standard_normal((4, 5)).astype(np.float32)
    raw_indices = np.array([[3], [0]], np.int32)
    updates = RNG.standard_normal((2, 5)).astype(np.float32)
    scatter = ops.scatter_nd(data, raw_indices, updates).operator_desc
    divide = ops.element_wise("divide", data, data).operator_desc
    g = dmlrpc.Graph()
    d = g.input(np.float32, (4, 5))
    i = g.input(np.int32, (2, 1))
    u = g.input(np.float32, (2, 5))
    one_i = g.constant(np.ones((2, 1), np.int32))
    shifted = g.element_wise("subtract", i, one_i)  # an intermediate edge into scatter_nd's host-checked indices
    (scattered,) = g.node(scatter, [d, shifted, u])
    positive = g.element_wise("add", g.activation("relu", scattered), g.constant(np.ones((4, 5), np.float32)))
    (ratio,) = g.node(divide, [d, positive])
    g.output(ratio)
    indices = raw_indices + 1
    with client.compile(g) as op:
        (got,) = arrays(op(data, indices, updates))
        assert compiled_kind(server, op) == "StagedCompiled"
    r_shifted = one(
        client, ops.element_wise("subtract", indices, indices).operator_desc, [indices, np.ones_like(indices)]
    )
    r_scattered = one(client, scatter, [data, r_shifted, updates])
    r_relu = one(client, ops.activation("relu", data).operator_desc, [r_scattered])
    r_positive = one(client, ops.element_wise("add", data, data).operator_desc, [r_relu, np.ones((4, 5), np.float32)])
    r_ratio = one(client, divide, [data, r_positive])
    np.testing.assert_allclose(got, r_ratio, rtol=1e-6)
    expected = data.copy()
    expected[raw_indices[:, 0]] = updates
    np.testing.assert_allclose(got, data / (np.maximum(expected, 0) + 1), rtol=1e-6)


def test_scatter_elements_and_gather_elements_from_node_outputs(client: dmlrpc.Client) -> None:
    data = RNG.standard_normal((3, 4)).astype(np.float32)
    indices = np.array([[2, 0, 1, 2]], np.int32)
    updates = RNG.standard_normal((1, 4)).astype(np.float32)
    order = np.array([[1, 2, 0, 0], [0, 0, 2, 1], [2, 1, 1, 0]], np.uint32)
    scatter = ops.scatter_elements(data, indices, updates, axis=0).operator_desc
    gather = gather_elements_desc((3, 4), np.float32, np.uint32, 0)
    g = dmlrpc.Graph()
    d = g.input(np.float32, (3, 4))
    u = g.input(np.float32, (1, 4))
    (scattered,) = g.node(scatter, [g.element_wise("abs", d), g.constant(indices), u])
    (gathered,) = g.node(gather, [scattered, g.constant(order)])
    g.output(g.element_wise("negate", gathered))
    with client.compile(g) as op:
        (got,) = arrays(op(data, updates))
    r_abs = one(client, ops.element_wise("abs", data).operator_desc, [data])
    r_scattered = one(client, scatter, [r_abs, indices, updates])
    r_gathered = one(client, gather, [r_scattered, order])
    r_negated = one(client, ops.element_wise("negate", data).operator_desc, [r_gathered])
    np.testing.assert_array_equal(got, r_negated)
    expected = np.abs(data)
    np.put_along_axis(expected, indices.astype(np.int64), updates, 0)
    np.testing.assert_array_equal(got, -np.take_along_axis(expected, order.astype(np.int64), 0))


def _scatter_graph(indices_first: bool) -> dmlrpc.Graph:
    g = dmlrpc.Graph()
    i = g.input(np.int32, (2, 1)) if indices_first else None
    d = g.input(np.float32, (4, 5))
    i = g.input(np.int32, (2, 1)) if i is None else i
    u = g.input(np.float32, (2, 5))
    call = ops.scatter_nd(np.zeros((4, 5), np.float32), np.zeros((2, 1), np.int32), np.zeros((2, 5), np.float32))
    (scattered,) = g.node(call.operator_desc, [d, i, u])
    g.output(g.element_wise("negate", scattered))
    return g


def test_data_dependent_error_at_dispatch(client: dmlrpc.Client) -> None:
    data, updates = np.zeros((4, 5), np.float32), np.ones((2, 5), np.float32)
    with client.compile(_scatter_graph(indices_first=False)) as op:
        (good,) = arrays(op(data, np.array([[1], [2]], np.int32), updates))
        np.testing.assert_array_equal(good, -np.array([0, 1, 1, 0], np.float32)[:, None].repeat(5, 1))
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            op(data, np.array([[1], [4]], np.int32), updates)
        assert caught.value.field_violations[0].field == "inputs[1].buffer.data"
        assert "index value 4" in caught.value.field_violations[0].description
        (again,) = arrays(op(data, np.array([[3], [0]], np.int32), updates))  # the handle still works
        np.testing.assert_array_equal(again, -np.array([1, 0, 0, 1], np.float32)[:, None].repeat(5, 1))


def test_data_dependent_error_names_the_graph_input_binding(client: dmlrpc.Client) -> None:
    data, updates = np.zeros((4, 5), np.float32), np.ones((2, 5), np.float32)
    with client.compile(_scatter_graph(indices_first=True)) as op, pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        op(np.array([[1], [4]], np.int32), data, updates)
    assert caught.value.field_violations[0].field == "inputs[0].buffer.data"


def test_integer_divide_by_zero_at_dispatch(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    a = g.input(np.int32, (2, 3))
    b = g.input(np.int32, (2, 3))
    g.output(g.element_wise("divide", g.element_wise("add", a, a), b))
    ones = np.ones((2, 3), np.int32)
    with client.compile(g) as op:
        np.testing.assert_array_equal(arrays(op(ones * 3, ones * 2))[0], ones * 3)
        divisor = ones.copy()
        divisor[1, 2] = 0
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            op(ones, divisor)
    assert caught.value.field_violations[0].field == "inputs[1].buffer.data"
    assert "[1, 2]" in caught.value.field_violations[0].description


@pytest.mark.parametrize(
    "call",
    [
        ops.element_wise("add", X, Y),
        ops.element_wise("multiply", X.astype(np.int32), Y.astype(np.int32) + 3),
        ops.activation("relu", X),
        ops.activation("leaky_relu", X, alpha=0.25),
        ops.top_k(X, 2, 0, direction="increasing"),
        ops.scatter_elements(X, np.array([[1, 3, 0, 2, 1, 0, 3, 2]], np.int32), Y[:1], axis=0),
        ops.scatter_nd(X, np.array([[2], [0]], np.int64), Y[:2]),
    ],
    ids=["add", "multiply_int32", "relu", "leaky_relu", "top_k", "scatter_elements", "scatter_nd"],
)
def test_compiled_operator_equals_execute(client: dmlrpc.Client, call: ops.Call) -> None:
    expected = client.execute(call.operator_desc, list(call.inputs))
    with client.compile(call.operator_desc) as op:
        assert len(op.input_descs) == len(call.inputs) and len(op.output_descs) == len(expected)
        for _ in range(2):
            got = op(*call.inputs)
            assert len(got) == len(expected)
            for value, reference in zip(got, expected, strict=True):
                assert isinstance(value, np.ndarray) and isinstance(reference, np.ndarray)
                assert value.dtype == reference.dtype
                np.testing.assert_array_equal(value, reference)


def test_owned_input_of_a_compiled_operator(client: dmlrpc.Client) -> None:
    weights = RNG.standard_normal((4, 8)).astype(np.float32)
    desc = ops.element_wise("add", X, X).operator_desc
    desc.element_wise_add.a_tensor.buffer.flags |= OWNED
    with client.compile(desc, owned=[weights, None]) as op:
        assert op.input_descs[0].buffer.flags & OWNED and not op.input_descs[1].buffer.flags & OWNED
        for value in (X, Y):
            (got,) = arrays(op(value))
            np.testing.assert_array_equal(got, weights + value)


def test_owned_graph_input(client: dmlrpc.Client, server: ServerThread) -> None:
    weights = RNG.standard_normal((4, 8)).astype(np.float32)
    g = dmlrpc.Graph()
    w = g.input(np.float32, (4, 8))
    x = g.input(np.float32, (4, 8))
    g.output(g.activation("relu", g.element_wise("multiply", w, x)), g.element_wise("add", x, w))
    desc = g.desc()
    # graph input 0 feeds node 0's a_tensor and node 2's b_tensor: flagged on both
    desc.nodes[0].operator.operator.element_wise_multiply.a_tensor.buffer.flags |= OWNED
    desc.nodes[2].operator.operator.element_wise_add.b_tensor.buffer.flags |= OWNED
    request = service_pb2.CompileGraphRequest(
        graph_desc=desc,
        owned_inputs=[
            service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=weights.tobytes())),
            service_pb2.BindingDesc(),
        ],
    )
    # through the client's own channel: a handle belongs to the connection that compiled it
    compiled = client._transport.methods["CompileGraph"](request, timeout=60, metadata=client._transport.metadata)
    assert [bool(d.buffer.flags & OWNED) for d in compiled.input_descs] == [True, False]
    with CompiledOperator(client, compiled) as op:
        rectified, summed = arrays(op(X))
    np.testing.assert_array_equal(rectified, np.maximum(weights * X, 0))
    np.testing.assert_array_equal(summed, X + weights)


def test_resident_inputs_and_kept_outputs(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.float32, (4, 8))
    y = g.input(np.float32, (4, 8))
    values, indices = g.top_k(g.element_wise("subtract", x, y), 2)
    g.output(values, indices)
    with client.compile(g) as op, client.upload(X) as resident:
        host_values, host_indices = arrays(op(X, Y))
        kept_values, kept_indices = op(resident, Y, keep=True)
        assert isinstance(kept_values, dmlrpc.ResidentTensor) and isinstance(kept_indices, dmlrpc.ResidentTensor)
        np.testing.assert_array_equal(kept_values.numpy(), host_values)
        np.testing.assert_array_equal(kept_indices.numpy(), host_indices)
        plain_values, kept_only = op(X, Y, keep=[1])
        assert isinstance(plain_values, np.ndarray) and isinstance(kept_only, dmlrpc.ResidentTensor)
        np.testing.assert_array_equal(plain_values, host_values)
        # A kept output feeds the next dispatch without leaving the server.
        with client.compile(ops.element_wise("negate", host_values).operator_desc) as negate:
            (negated,) = arrays(negate(kept_values))
        np.testing.assert_array_equal(negated, -host_values)
        for tensor in (kept_values, kept_indices, kept_only):
            assert isinstance(tensor, dmlrpc.ResidentTensor)
            tensor.release()
    reference = np.sort(X - Y, axis=1)[:, ::-1][:, :2]
    np.testing.assert_array_equal(host_values, reference)


def test_async_client_compiles_and_dispatches(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=60) as client:
            g = dmlrpc.Graph()
            x = g.input(np.float32, (4, 8))
            g.output(g.activation("sigmoid", g.element_wise("add", x, x)))
            async with await client.compile(g) as op:
                results = await asyncio.gather(*(op(X * k) for k in range(3)))
                handle = op.handle
            with pytest.raises(dmlrpc.NotFoundError):
                await op(X)
            (doubled,) = await client.execute(ops.element_wise("add", X, X).operator_desc, [X, X])
            (reference,) = await client.execute(ops.activation("sigmoid", X).operator_desc, [doubled])
            assert isinstance(reference, np.ndarray)
            np.testing.assert_allclose(arrays(results[1])[0], reference, rtol=1e-6)
            for k, result in enumerate(results):
                (value,) = arrays(result)
                np.testing.assert_allclose(value, 1 / (1 + np.exp(-2 * k * X)), rtol=1e-5, atol=1e-6)
            assert handle not in _held(server)

    asyncio.run(run())


_UNARY = ["relu", "sigmoid", "abs", "negate", "identity"]
_BINARY = ["add", "subtract", "multiply", "max", "min"]


@st.composite
def chains(draw: st.DrawFn) -> tuple[np.dtype[Any], tuple[int, ...], list[tuple[str, int]]]:
    dtype = np.dtype(draw(st.sampled_from([np.float32, np.int32])))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    steps = []
    for position in range(draw(st.integers(2, 10))):
        unary = _UNARY if dtype == np.float32 else [n for n in _UNARY if n != "sigmoid"]
        name = draw(st.sampled_from(unary + _BINARY))
        # a binary node's second input: the graph input (-1) or any earlier node's output
        other = draw(st.integers(-1, position - 1)) if name in _BINARY else -1
        steps.append((name, other))
    return dtype, shape, steps


def _node_desc(name: str, like: np.ndarray) -> operators_pb2.OperatorDesc:
    if name in _BINARY:
        return ops.element_wise(name, like, like).operator_desc
    if name in ("relu", "sigmoid"):
        return ops.activation(name, like).operator_desc
    return ops.element_wise(name, like).operator_desc


@settings(max_examples=15)
@given(case=chains(), seed=st.integers(0, 2**16))
def test_random_chains_equal_one_by_one_execution(
    client: dmlrpc.Client, case: tuple[np.dtype[Any], tuple[int, ...], list[tuple[str, int]]], seed: int
) -> None:
    dtype, shape, steps = case
    rng = np.random.default_rng(seed)
    if dtype == np.int32:
        x = rng.integers(-100, 100, size=shape).astype(np.int32)
    else:
        x = rng.standard_normal(shape).astype(np.float32)
    g = dmlrpc.Graph()
    source = g.input(dtype, shape)
    produced: list[GraphTensor] = []
    reference: list[np.ndarray] = []
    for name, other in steps:
        desc = _node_desc(name, x)
        previous = produced[-1] if produced else source
        previous_value = reference[-1] if reference else x
        if name in _BINARY:
            second = source if other < 0 else produced[other]
            second_value = x if other < 0 else reference[other]
            (out,) = g.node(desc, [previous, second])
            reference.append(one(client, desc, [previous_value, second_value]))
        else:
            (out,) = g.node(desc, [previous])
            reference.append(one(client, desc, [previous_value]))
        produced.append(out)
    # every node output feeds the next node, a later binary node, or else a graph output
    consumed = {k - 1 for k in range(1, len(steps))} | {o for n, o in steps if n in _BINARY and o >= 0}
    outputs = sorted({k for k in range(len(steps)) if k not in consumed} | {len(steps) - 1})
    g.output(*(produced[k] for k in outputs))
    with client.compile(g) as op:
        got = arrays(op(x))
    assert len(got) == len(outputs)
    for value, k in zip(got, outputs, strict=True):
        assert value.dtype == dtype and value.shape == shape
        if dtype == np.int32:
            np.testing.assert_array_equal(value, reference[k])
        else:
            np.testing.assert_allclose(value, reference[k], rtol=1e-6, atol=1e-6)


def test_graph_desc_round_trips_through_the_sdk(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.float32, (2, 2))
    g.output(g.element_wise("negate", x))
    desc: graph_pb2.GraphDesc = g.desc()
    assert (desc.node_count, desc.input_edge_count, desc.output_edge_count) == (1, 1, 1)
    with client.compile(desc) as op:
        (got,) = arrays(op(np.eye(2, dtype=np.float32)))
    np.testing.assert_array_equal(got, -np.eye(2, dtype=np.float32))
