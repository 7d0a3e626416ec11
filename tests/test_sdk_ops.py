"""The SDK's NumPy-style GEMM and CONVOLUTION functions against NumPy references on the real server: eager
(Client, AsyncClient) and in a Graph, and their argument errors before any request."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from tests.conftest import ServerThread

RNG = np.random.default_rng(7)


def _normal(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _gemm_reference(
    a: np.ndarray, b: np.ndarray, c: Any, trans_a: bool, trans_b: bool, alpha: float, beta: float
) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    a64 = np.swapaxes(a64, -1, -2) if trans_a else a64
    b64 = np.swapaxes(b64, -1, -2) if trans_b else b64
    product = alpha * np.einsum("...mk,...kn->...mn", a64, b64)
    return product if c is None else product + beta * np.asarray(c, np.float64)


def _convolution_reference(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start: tuple[int, ...],
    end: tuple[int, ...],
    groups: int,
    flip: bool = False,
) -> np.ndarray:
    """Forward convolution, tap by tap: the output gathers each filter tap's strided window of the padded input."""
    spatial = x.ndim - 2
    w64 = np.flip(w, axis=tuple(range(2, w.ndim))).astype(np.float64) if flip else w.astype(np.float64)
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *zip(start, end, strict=True)])
    kernel = w.shape[2:]
    sizes = [(padded.shape[2 + d] - ((kernel[d] - 1) * dilations[d] + 1)) // strides[d] + 1 for d in range(spatial)]
    out = np.zeros((x.shape[0], w.shape[0], *sizes))
    per_group_in, per_group_out = x.shape[1] // groups, w.shape[0] // groups
    for g in range(groups):
        inputs = padded[:, g * per_group_in : (g + 1) * per_group_in]
        outputs = slice(g * per_group_out, (g + 1) * per_group_out)
        for tap in itertools.product(*(range(k) for k in kernel)):
            window = tuple(
                slice(tap[d] * dilations[d], tap[d] * dilations[d] + (sizes[d] - 1) * strides[d] + 1, strides[d])
                for d in range(spatial)
            )
            out[:, outputs] += np.einsum("nc...,mc->nm...", inputs[(..., *window)], w64[outputs][(..., *tap)])
    if bias is not None:
        out += bias.reshape(1, -1, *(1,) * spatial)
    return out


def _transposed_reference(
    x: np.ndarray, w: np.ndarray, strides: tuple[int, ...], start: tuple[int, ...], end: tuple[int, ...]
) -> np.ndarray:
    """Backward (transposed) convolution, one group, no dilation: each input element scatters the filter times
    itself; the start and end padding crop the full result."""
    spatial = x.ndim - 2
    kernel = w.shape[2:]
    full = [(x.shape[2 + d] - 1) * strides[d] + kernel[d] for d in range(spatial)]
    out = np.zeros((x.shape[0], w.shape[1], *full))
    for position in itertools.product(*(range(s) for s in x.shape[2:])):
        target = tuple(slice(position[d] * strides[d], position[d] * strides[d] + kernel[d]) for d in range(spatial))
        out[(slice(None), slice(None), *target)] += np.einsum(
            "nc,cm...->nm...", x[(..., *position)].astype(np.float64), w.astype(np.float64)
        )
    return out[(slice(None), slice(None), *(slice(start[d], full[d] - end[d]) for d in range(spatial)))]


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "c_shape", "trans_a", "trans_b", "alpha", "beta"),
    [
        ((3, 4), (4, 5), None, False, False, 1.0, 1.0),
        ((4, 3), (5, 4), (3, 5), True, True, 0.5, 2.0),
        ((2, 3, 4), (4, 6), (6,), False, False, 1.0, -1.0),  # b shared across a's batch, c broadcast
        ((2, 1, 3, 4), (5, 6, 4), (1, 6), False, True, 2.0, 0.5),  # batch dims broadcast as in np.matmul
        ((1, 4), (4, 1), (), False, False, 1.0, 1.0),  # c 0-d
    ],
)
def test_gemm_matches_numpy(
    client: dmlrpc.Client,
    a_shape: tuple[int, ...],
    b_shape: tuple[int, ...],
    c_shape: tuple[int, ...] | None,
    trans_a: bool,
    trans_b: bool,
    alpha: float,
    beta: float,
) -> None:
    a, b = _normal(*a_shape), _normal(*b_shape)
    c = None if c_shape is None else _normal(*c_shape)
    got = client.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta)
    expected = _gemm_reference(a, b, c, trans_a, trans_b, alpha, beta)
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_gemm_float16_and_a_python_scalar_c(client: dmlrpc.Client) -> None:
    a, b = _normal(3, 8, dtype=np.float16), _normal(8, 2, dtype=np.float16)
    got = client.gemm(a, b, 1.5, beta=2.0)
    assert got.dtype == np.float16 and got.shape == (3, 2)
    np.testing.assert_allclose(got, _gemm_reference(a, b, 1.5, False, False, 1.0, 2.0), rtol=1e-2, atol=1e-2)


def test_gemm_desc_is_4d_with_zero_strides_for_broadcast_operands() -> None:
    call = ops.gemm(np.ones((3, 4), np.float32), np.ones((2, 4, 5), np.float32), np.ones(5, np.float32))
    desc = call.operator_desc.gemm
    assert list(desc.a_tensor.buffer.sizes) == [1, 2, 3, 4] and list(desc.a_tensor.buffer.strides) == [12, 0, 4, 1]
    assert list(desc.b_tensor.buffer.sizes) == [1, 2, 4, 5] and not desc.b_tensor.buffer.strides
    assert list(desc.c_tensor.buffer.sizes) == [1, 2, 3, 5] and list(desc.c_tensor.buffer.strides) == [5, 0, 0, 1]
    assert list(desc.output_tensor.buffer.sizes) == [1, 2, 3, 5] and call.output_shapes == ((2, 3, 5),)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "options"),
    [
        ((1, 2, 5, 5), (3, 2, 3, 3), {}),
        ((2, 4, 7, 6), (6, 2, 3, 2), {"strides": 2, "start_padding": (1, 0), "end_padding": 1, "group_count": 2}),
        ((1, 3, 9), (4, 3, 3), {"dilations": 2, "start_padding": 2, "end_padding": 1}),  # 1 spatial dimension
        ((1, 3, 6, 6), (3, 1, 3, 3), {"group_count": 3, "strides": (1, 2), "dilations": (2, 1)}),  # depth-wise
        ((1, 2, 4, 4, 3), (2, 2, 2, 2, 2), {"start_padding": 1}),  # 3 spatial dimensions
    ],
)
@pytest.mark.parametrize("with_bias", [False, True])
def test_convolution_matches_numpy(
    client: dmlrpc.Client,
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    options: dict[str, Any],
    with_bias: bool,
) -> None:
    x, w = _normal(*x_shape), _normal(*w_shape)
    bias = _normal(w_shape[0]) if with_bias else None
    spatial = len(x_shape) - 2

    def each(name: str, default: int) -> tuple[int, ...]:
        value = options.get(name, default)
        return (value,) * spatial if isinstance(value, int) else tuple(value)

    expected = _convolution_reference(
        x,
        w,
        bias,
        each("strides", 1),
        each("dilations", 1),
        each("start_padding", 0),
        each("end_padding", 0),
        options.get("group_count", 1),
    )
    got = client.convolution(x, w, bias, **options)
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_convolution_mode_convolution_flips_the_filter(client: dmlrpc.Client) -> None:
    x, w = _normal(1, 2, 5, 4), _normal(2, 2, 3, 2)
    got = client.convolution(x, w, mode="convolution", start_padding=1, end_padding=1)
    expected = _convolution_reference(x, w, None, (1, 1), (1, 1), (1, 1), (1, 1), 1, flip=True)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_convolution_backward_is_the_transposed_convolution(client: dmlrpc.Client) -> None:
    x, w = _normal(1, 2, 3, 4), _normal(2, 3, 3, 2)  # filter {input channels, output channels, kernel..}
    got = client.convolution(x, w, direction="backward", strides=(2, 1), start_padding=(1, 0), end_padding=(0, 1))
    expected = _transposed_reference(x, w, (2, 1), (1, 0), (0, 1))
    assert got.shape == expected.shape == (1, 3, 6, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_graph_gemm_then_convolution(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    a, b, c = g.input(np.float32, (1, 2, 3, 4)), g.input(np.float32, (1, 2, 4, 5)), g.input(np.float32, (1, 2, 3, 5))
    product = g.gemm(a, b, c, alpha=0.5)
    w, bias = g.input(np.float32, (4, 2, 2, 2)), g.input(np.float32, (1, 4, 1, 1))
    g.output(g.convolution(product, w, bias, start_padding=(1, 0)))
    other = dmlrpc.Graph()  # a graph input that feeds no node would fail the compile of g
    x, w4, flat = (
        other.input(np.float32, (1, 2, 3, 5)),
        other.input(np.float32, (4, 2, 2, 2)),
        other.input(np.float32, (4,)),
    )
    with pytest.raises(dmlrpc.ArgumentValueError, match="bias") as caught:
        other.convolution(x, w4, flat)
    assert caught.value.argument == "bias"
    with pytest.raises(dmlrpc.ArgumentValueError, match="edges do not broadcast") as caught:
        other.gemm(other.input(np.float32, (3, 4)), other.input(np.float32, (2, 4, 5)))
    assert caught.value.argument == "a"
    arrays = [_normal(1, 2, 3, 4), _normal(1, 2, 4, 5), _normal(1, 2, 3, 5), _normal(4, 2, 2, 2), _normal(1, 4, 1, 1)]
    (got,) = client.compile(g)(*arrays)
    gemm = _gemm_reference(*arrays[:3], False, False, 0.5, 1.0).astype(np.float32)
    expected = _convolution_reference(gemm, arrays[3], arrays[4], (1, 1), (1, 1), (1, 0), (0, 0), 1)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_async_client_gemm_and_convolution(server: ServerThread) -> None:
    a, b = _normal(2, 3, 4), _normal(2, 4, 2)
    x, w = _normal(1, 1, 4, 4), _normal(1, 1, 2, 2)

    async def run() -> tuple[np.ndarray, np.ndarray]:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            return await client.gemm(a, b, trans_b=False), await client.convolution(x, w, strides=2)

    product, convolved = asyncio.run(run())
    np.testing.assert_allclose(product, a @ b, rtol=1e-5, atol=1e-5)
    expected = _convolution_reference(x, w, None, (2, 2), (1, 1), (0, 0), (0, 0), 1)
    np.testing.assert_allclose(convolved, expected, rtol=1e-5, atol=1e-5)


F32 = np.ones((2, 3), np.float32)


@pytest.mark.parametrize(
    ("call", "error", "argument"),
    [
        (lambda: ops.gemm(np.ones((2, 3)), F32.T), dmlrpc.ArgumentTypeError, "a"),  # float64
        (lambda: ops.gemm(F32, np.ones((3, 2), np.float16)), dmlrpc.ArgumentTypeError, "b"),
        (lambda: ops.gemm(np.ones((2, 3), np.int32), F32.T), dmlrpc.ArgumentTypeError, "a"),
        (lambda: ops.gemm(np.ones(3, np.float32), F32.T), dmlrpc.ArgumentValueError, "a"),  # 1-D
        (lambda: ops.gemm(np.ones((1, 1, 1, 2, 3), np.float32), F32.T), dmlrpc.ArgumentValueError, "a"),  # 5-D
        (lambda: ops.gemm(F32, F32), dmlrpc.ArgumentValueError, "b"),  # K differs
        (
            lambda: ops.gemm(np.ones((2, 2, 3), np.float32), np.ones((3, 3, 2), np.float32)),
            dmlrpc.ArgumentValueError,
            "b",
        ),
        (lambda: ops.gemm(F32, F32.T, np.ones(3, np.float32)), dmlrpc.ArgumentValueError, "c"),
        (lambda: ops.gemm(F32, F32, trans_b=1), dmlrpc.ArgumentTypeError, "trans_b"),
        (lambda: ops.gemm(F32, F32.T, alpha="2"), dmlrpc.ArgumentTypeError, "alpha"),
        (
            lambda: ops.convolution(np.ones((1, 2, 4, 4), np.float32), np.ones((1, 2, 2), np.float32)),
            dmlrpc.ArgumentValueError,
            "filter",
        ),
        (
            lambda: ops.convolution(np.ones((2, 4), np.float32), np.ones((2, 4), np.float32)),
            dmlrpc.ArgumentValueError,
            "input",
        ),
        (
            lambda: ops.convolution(np.ones((1, 2, 4, 4), np.float32), np.ones((1, 3, 2, 2), np.float32)),
            dmlrpc.ArgumentValueError,
            "filter",
        ),
        (
            lambda: ops.convolution(np.ones((1, 2, 2, 2), np.float32), np.ones((1, 2, 3, 3), np.float32)),
            dmlrpc.ArgumentValueError,
            "filter",
        ),
        (
            lambda: ops.convolution(
                np.ones((1, 3, 4, 4), np.float32), np.ones((1, 1, 2, 2), np.float32), group_count=2
            ),
            dmlrpc.ArgumentValueError,
            "group_count",
        ),
        (
            lambda: ops.convolution(
                np.ones((1, 2, 4, 4), np.float32), np.ones((1, 2, 2, 2), np.float32), strides=(1, 1, 1)
            ),
            dmlrpc.ArgumentValueError,
            "strides",
        ),
        (
            lambda: ops.convolution(np.ones((1, 2, 4, 4), np.float32), np.ones((1, 2, 2, 2), np.float32), dilations=0),
            dmlrpc.ArgumentValueError,
            "dilations",
        ),
        (
            lambda: ops.convolution(
                np.ones((1, 2, 4, 4), np.float32), np.ones((1, 2, 2, 2), np.float32), start_padding=-1
            ),
            dmlrpc.ArgumentValueError,
            "start_padding",
        ),
        (
            lambda: ops.convolution(
                np.ones((1, 2, 4, 4), np.float32), np.ones((1, 2, 2, 2), np.float32), np.ones(2, np.float32)
            ),
            dmlrpc.ArgumentValueError,
            "bias",
        ),
        (
            lambda: ops.convolution(
                np.ones((1, 2, 4, 4), np.float32), np.ones((1, 2, 2, 2), np.float32), direction="sideways"
            ),
            dmlrpc.ArgumentValueError,
            "direction",
        ),
        (
            lambda: ops.convolution(np.ones((1, 2, 4, 4), np.float32), np.ones((1, 2, 2, 2), np.float32), mode=1),
            dmlrpc.ArgumentTypeError,
            "mode",
        ),
    ],
)
def test_argument_errors_before_any_request(call: Any, error: type[Exception], argument: str) -> None:
    with pytest.raises(error) as caught:
        call()
    assert caught.value.argument == argument  # type: ignore[attr-defined]


def test_eager_calls_refuse_before_any_connection() -> None:
    # Port 1 has no server: an RPC would fail UNAVAILABLE, so the argument error shows none was tried.
    with dmlrpc.Client("127.0.0.1:1", timeout=5, retry=None) as client:
        with pytest.raises(dmlrpc.ArgumentTypeError, match="float64"):
            client.gemm(np.ones((2, 2)), np.ones((2, 2)))
        with pytest.raises(dmlrpc.ArgumentValueError, match="group_count"):
            client.convolution(np.ones((1, 3, 4, 4), np.float32), np.ones((1, 1, 2, 2), np.float32), group_count=2)


def test_the_dtypes_refused_here_are_the_ones_the_server_s_tables_lack() -> None:
    from dmlrpc.codec import DTYPE_BY_DATA_TYPE
    from dmlrpc_server.operators import REGISTRY

    for case in ("gemm", "convolution"):
        taken = {
            DTYPE_BY_DATA_TYPE[data_type].name
            for _, table in REGISTRY[case].support
            for rule in table.values()
            for data_type in rule.data_types
        }
        assert taken == set(ops.base._FLOATS), case


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "a_dtype", "b_dtype", "a_zero", "b_zero"),
    [
        ((3, 4), (4, 5), np.uint8, np.uint8, None, None),
        ((2, 3, 4), (4, 2), np.int8, np.uint8, "scalar", "per"),  # signedness may differ; b shared by the batch
        ((1, 2, 3, 6), (2, 6, 4), np.uint8, np.int8, "per", "scalar"),
    ],
)
def test_matrix_multiply_integer_matches_numpy(
    client: dmlrpc.Client,
    a_shape: tuple[int, ...],
    b_shape: tuple[int, ...],
    a_dtype: Any,
    b_dtype: Any,
    a_zero: str | None,
    b_zero: str | None,
) -> None:
    def integers(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)

    a, b = integers(a_shape, a_dtype), integers(b_shape, b_dtype)
    m, n = a_shape[-2], b_shape[-1]
    za = None if a_zero is None else integers(() if a_zero == "scalar" else (m,), a_dtype)
    zb = None if b_zero is None else integers(() if b_zero == "scalar" else (n,), b_dtype)
    got = client.matrix_multiply_integer(a, b, a_zero_point=za, b_zero_point=zb)
    a64 = a.astype(np.int64) - (0 if za is None else za.astype(np.int64).reshape(-1, 1))
    b64 = b.astype(np.int64) - (0 if zb is None else zb.astype(np.int64))
    expected = a64 @ b64
    assert got.dtype == np.int32 and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_graph_and_async_matrix_multiply_integer(server: ServerThread, client: dmlrpc.Client) -> None:
    a, b = RNG.integers(0, 255, (4, 3), np.uint8), RNG.integers(-128, 127, (3, 2), np.int8)
    zero = np.array([[1], [2], [3], [4]], np.uint8)
    expected = (a.astype(np.int64) - zero) @ b.astype(np.int64)
    g = dmlrpc.Graph()
    g.output(
        g.matrix_multiply_integer(
            g.input(np.uint8, (4, 3)), g.input(np.int8, (3, 2)), a_zero_point=g.input(np.uint8, (4, 1))
        )
    )
    np.testing.assert_array_equal(client.compile(g)(a, b, zero)[0], expected)

    async def run() -> np.ndarray:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as sdk:
            return await sdk.matrix_multiply_integer(a, b, a_zero_point=zero)

    np.testing.assert_array_equal(asyncio.run(run()), expected)


@pytest.mark.parametrize(
    ("kwargs", "error", "argument"),
    [
        ({"a": np.ones((2, 3), np.float32)}, dmlrpc.ArgumentTypeError, "a"),
        ({"b": np.ones((3, 2), np.int32)}, dmlrpc.ArgumentTypeError, "b"),
        ({"b": np.ones((2, 2), np.uint8)}, dmlrpc.ArgumentValueError, "b"),
        ({"a_zero_point": np.int8(1)}, dmlrpc.ArgumentTypeError, "a_zero_point"),  # a is uint8
        ({"a_zero_point": np.ones(3, np.uint8)}, dmlrpc.ArgumentValueError, "a_zero_point"),  # M is 2
        ({"b_zero_point": np.ones((2, 1), np.uint8)}, dmlrpc.ArgumentValueError, "b_zero_point"),  # per row
        ({"b_zero_point": -1}, dmlrpc.ArgumentValueError, "b_zero_point"),  # no uint8
    ],
)
def test_matrix_multiply_integer_argument_errors(kwargs: dict[str, Any], error: type[Exception], argument: str) -> None:
    arguments: dict[str, Any] = {"a": np.ones((2, 3), np.uint8), "b": np.ones((3, 2), np.uint8), **kwargs}
    with pytest.raises(error) as caught:
        ops.matrix_multiply_integer(**arguments)
    assert caught.value.argument == argument  # type: ignore[attr-defined]
