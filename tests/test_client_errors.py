"""The SDK's argument errors: raised before any RPC, naming the argument and its allowed values; NumPy's dtypes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.v1 import tensor_pb2
from dmlrpc_server.operators import REGISTRY
from tests.conftest import ServerThread, scrape


def requests(server: ServerThread) -> float:
    """Every call the server has counted, whatever its method or outcome."""
    return sum(value for (name, _), value in scrape(server).items() if name == "dmlrpc_requests_total")


@pytest.fixture
def no_rpc(server: ServerThread) -> Iterator[None]:
    """Fails the test if the server counted a call while it ran."""
    before = requests(server)
    yield
    assert requests(server) == before, "the SDK sent a request for an argument it should have refused"


def refused(
    kind: type[dmlrpc.ArgumentError], builtin: type[Exception], call: Callable[[], Any]
) -> dmlrpc.ArgumentError:
    with pytest.raises(kind) as caught:
        call()
    error = caught.value
    assert type(error) is kind
    assert isinstance(error, dmlrpc.DmlRpcError) and isinstance(error, builtin)
    assert error.request_id is None and error.field_violations[0].field == error.argument
    return error


def test_a_direction_typo_names_the_direction_and_its_values(client: dmlrpc.Client, no_rpc: None) -> None:
    x = np.arange(4, dtype=np.float32)
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.top_k(x, 2, direction="descending"))  # type: ignore[arg-type]
    assert error.argument == "direction"
    assert "'descending'" in str(error)
    assert {"'decreasing'", "'increasing'", "'largest'", "'smallest'"} <= set(error.allowed)
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.top_k(x, 2, direction=1.0))  # type: ignore[arg-type]
    assert error.argument == "direction"


def test_top_k_arguments(client: dmlrpc.Client, no_rpc: None) -> None:
    x = np.zeros((2, 3), np.float32)
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.top_k(x, 1, axis=2))
    assert error.argument == "axis" and "-2 <= axis < 2" in str(error)
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.top_k(x, 1, axis=1.0))  # type: ignore[arg-type]
    assert error.argument == "axis"
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.top_k(x, 0))
    assert error.argument == "k"
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.top_k(x, "2"))  # type: ignore[arg-type]
    assert error.argument == "k"
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.top_k(x, 1, index_dtype="u9"))
    assert error.argument == "index_dtype" and error.allowed == ("uint32", "uint64")
    # NumPy has no axis to sort a 0-d array along either.
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.top_k(np.float32(1), 1))
    assert error.argument == "input"


def test_an_unknown_operator_or_attribute_names_the_allowed_ones(client: dmlrpc.Client, no_rpc: None) -> None:
    x = np.zeros(3, np.float32)
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.element_wise("addd", x, x))
    assert error.argument == "name" and "'addd'" in str(error)
    assert {"add", "multiply", "logical_or"} <= set(error.allowed)
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.activation("rleu", x))
    assert error.argument == "name" and "relu" in error.allowed
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.activation("elu", x, alpah=1.0))
    assert error.argument == "alpah" and "alpha" in error.allowed
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.activation("elu", x, alpha="one"))
    assert error.argument == "alpha"
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.element_wise("add", x))
    assert error.argument == "inputs" and error.allowed == ("2",)


def test_bool_arithmetic_is_refused_where_numpy_means_otherwise(client: dmlrpc.Client, no_rpc: None) -> None:
    t = np.array([True, False, True])
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.element_wise("add", t, t))
    assert error.argument == "inputs[0]" and "dtype bool" in str(error)
    assert "element_wise('logical_or')" in error.allowed
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.activation("relu", t))
    assert error.argument == "inputs[0]"


def test_logical_operators_on_bool_return_bool(client: dmlrpc.Client) -> None:
    a, b = np.array([True, False, True, False]), np.array([True, True, False, False])
    for name, expected in [("logical_or", a | b), ("logical_and", a & b), ("logical_xor", a ^ b)]:
        got = client.element_wise(name, a, b)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(client.element_wise("logical_not", a), ~a)
    # The comparisons keep their documented UINT8; IF takes a bool condition.
    np.testing.assert_array_equal(client.element_wise("logical_equals", a, b), (a == b).astype(np.uint8))
    x, y = np.arange(4, dtype=np.float32), -np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(client.element_wise("if", a, x, y), np.where(a, x, y))


def test_a_0d_input_gives_a_0d_result(client: dmlrpc.Client) -> None:
    got = client.element_wise("add", np.float32(1), np.array(2, np.float32))
    assert got.shape == () and got == 3
    got = client.activation("relu", np.array(-1, np.float32))
    assert got.shape == () and got == 0
    got = client.element_wise("max", np.float32(5), np.zeros((2, 1), np.float32))
    assert got.shape == (2, 1)
    got = client.scatter_elements(np.float32(1), np.array(0, np.int32), np.float32(7))
    assert got.shape == () and got == 7


def test_python_floats_follow_numpy(client: dmlrpc.Client, no_rpc: None) -> None:
    # A list of floats is float64, as in NumPy, which ADD does not take: refused with the way out.
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.element_wise("add", [1.0, 2.0], [3.0, 4.0]))
    assert error.argument == "inputs[0]" and "float64" in str(error) and "np.float32" in str(error)
    assert error.allowed == ("float32", "float16")
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.activation("sigmoid", 0.5))
    assert error.argument == "inputs[0]"
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.top_k([3.0, 1.0], 1))
    assert error.argument == "input"
    # A Python int that does not fit the array's dtype, as NumPy 2 refuses it.
    error = refused(
        dmlrpc.ArgumentValueError, ValueError, lambda: client.element_wise("add", np.zeros(2, np.uint8), 300)
    )
    assert error.argument == "inputs[1]" and "300" in str(error)
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: client.element_wise("add", ["a"], ["b"]))
    assert error.argument == "inputs[0]" and "float32" in error.allowed


def test_python_scalars_take_the_arrays_dtype(server: ServerThread, client: dmlrpc.Client) -> None:
    x = np.arange(4, dtype=np.float32)
    before = requests(server)
    got = client.element_wise("add", x, 1.5)
    assert requests(server) == before + 1  # what no_rpc watches does count calls
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x + 1.5)
    got = client.element_wise("multiply", np.arange(4, dtype=np.int16), 3)
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, np.arange(4, dtype=np.int16) * 3)
    # IDENTITY takes FLOAT64: a list of floats goes as NumPy makes it.
    got = client.element_wise("identity", [0.1, 0.2])
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [0.1, 0.2])


def test_shape_errors_quote_the_caller_s_shapes(no_rpc: None) -> None:
    error = refused(
        dmlrpc.ArgumentValueError,
        ValueError,
        lambda: ops.element_wise("add", np.zeros(3, np.float32), np.zeros((2, 4), np.float32)),
    )
    assert error.argument == "inputs" and "(3,) and (2, 4)" in str(error)
    graph = dmlrpc.Graph()
    a, b = graph.input(np.float32, (3,)), graph.input(np.float32, (4, 1))
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: graph.element_wise("add", a, b))
    assert error.argument == "inputs" and "(3,) and (4, 1)" in str(error)
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: graph.element_wise("add", a, np.zeros(3)))  # type: ignore[arg-type]
    assert error.argument == "inputs[1]"
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: graph.output(a))
    assert error.argument == "tensors"
    error = refused(dmlrpc.ArgumentValueError, ValueError, graph.desc)
    assert error.argument == "graph"


def test_execute_and_descs(client: dmlrpc.Client, no_rpc: None) -> None:
    x = np.zeros(4, np.float32)
    call = ops.top_k(x, 1)
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.execute(call.operator_desc, [x, x]))
    assert error.argument == "inputs" and error.allowed == ("1",)
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.execute(call.operator_desc, [np.zeros(5)]))
    assert error.argument == "inputs[0]" and "(5,)" in str(error)
    error = refused(dmlrpc.ArgumentTypeError, TypeError, lambda: dmlrpc.tensor_desc((np.complex64, (2,))))
    assert "complex64" in str(error) and "float32" in error.allowed
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: dmlrpc.tensor_desc(x, [1, 1]))
    assert error.argument == "strides" and "(4,)" in str(error)
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: client.stream(window=0))
    assert error.argument == "window"
    error = refused(dmlrpc.ArgumentValueError, ValueError, lambda: dmlrpc.Client())
    assert error.argument == "target"


def test_argument_errors_come_before_any_connection() -> None:
    # Port 1 has no server: an RPC would fail UNAVAILABLE, so the argument error shows none was tried.
    with dmlrpc.Client("127.0.0.1:1", timeout=5, retry=None) as client:
        error = refused(
            dmlrpc.ArgumentValueError,
            ValueError,
            lambda: client.top_k(np.zeros(3, np.float32), 1, direction="descending"),  # type: ignore[arg-type]
        )
    assert error.code.name == "INVALID_ARGUMENT"
    assert str(error).startswith("top_k: direction 'descending'")


def test_the_sdk_s_dtype_sets_match_the_server_s_tables() -> None:
    float64 = tensor_pb2.TENSOR_DATA_TYPE_FLOAT64
    uint8 = tensor_pb2.TENSOR_DATA_TYPE_UINT8
    built = {case for case in REGISTRY if case.startswith(("element_wise_", "activation_"))}
    built |= {"top_k1", "scatter_elements", "scatter_nd"}
    built |= {"reduce", "cast", "average_pooling", "max_pooling"}
    built |= {"cumulative_summation", "cumulative_product", "mean_variance_normalization2", "batch_normalization"}
    built |= {"lp_normalization", "one_hot", "fill_value_sequence"}
    built |= {"gather", "slice1", "padding1", "tile", "join", "split"}
    built |= {"slice", "padding", "space_to_depth", "space_to_depth1", "depth_to_space", "depth_to_space1"}
    built |= {"reverse_subsequences", "diagonal_matrix", "diagonal_matrix1", "fill_value_constant"}
    built |= {"value_scale_2d", "upsample_2d", "resample", "resample1", "resample2", "resample3", "lp_pooling"}
    built |= {"lp_pooling1", "max_pooling1", "max_pooling2", "max_unpooling", "roi_pooling", "average_pooling1"}
    built |= {"convolution_integer", "argmin", "argmax", "local_response_normalization", "nonzero_coordinates"}
    built |= {"mean_variance_normalization", "mean_variance_normalization1"}
    built |= {"gather_elements", "gather_nd", "gather_nd1", "top_k", "multihead_attention", "multihead_attention1"}
    built |= {"roi_align_grad"}
    takes_float64 = {
        case
        for case in built
        if any(float64 in rule.data_types for _, table in REGISTRY[case].support for rule in table.values())
    }
    assert takes_float64 == ops.base._FLOAT64_CASES
    for name in ops._elementwise._BOOLEAN_INPUTS:
        operator = REGISTRY[f"element_wise_{name}"]
        assert any(all(uint8 in rule.data_types for rule in table.values()) for _, table in operator.support), name
