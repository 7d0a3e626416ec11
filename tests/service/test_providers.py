"""Execution flags (half precision off unless asked, cached apart) and the CPU-fallback switch, on the CPU provider."""

from __future__ import annotations

import grpc
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dmlrpc
from dmlrpc import ops
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc_server.catalog import cache_key, compile_flags
from dmlrpc_server.errors import OperatorUnavailable
from dmlrpc_server.interceptors import EXECUTED_ON_KEY
from dmlrpc_server.runtime.compiler import _host_session
from dmlrpc_server.runtime.providers import Provider, device_options
from dmlrpc_server.settings import PROVIDERS, load_settings
from tests.conftest import ServerThread, scrape, start_server

HALF = service_pb2.EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION
KNOWN = HALF | service_pb2.EXECUTION_FLAG_DISABLE_META_COMMANDS | service_pb2.EXECUTION_FLAG_DESCRIPTORS_VOLATILE


def test_cuda_computes_float32_as_float32_unless_half_precision_is_allowed() -> None:
    options = device_options("cuda", 1)
    assert options == {"device_id": "1", "use_tf32": "0"}
    cuda = Provider(PROVIDERS["cuda"], options, "CUDA device 1", False, 1)
    assert cuda.allowing_half_precision().options == {"device_id": "1", "use_tf32": "1"}
    assert cuda.options["use_tf32"] == "0"  # the default provider is left as it was
    assert "use_tf32" not in device_options("directml", 0)
    cpu = Provider(PROVIDERS["cpu"], {}, "CPU", False, 1)
    assert cpu.allowing_half_precision() is cpu


def test_only_half_precision_changes_how_a_desc_compiles() -> None:
    assert compile_flags(0) == 0
    assert compile_flags(KNOWN) == HALF
    assert compile_flags(service_pb2.EXECUTION_FLAG_DISABLE_META_COMMANDS) == 0
    desc = b"\x0a\x02\x08\x01"
    assert cache_key(desc, 0) == desc
    assert cache_key(desc, HALF) != desc and cache_key(desc, HALF).endswith(desc)


def test_half_precision_is_cached_apart_and_gives_the_same_results_on_the_cpu(
    server: ServerThread, client: dmlrpc.Client
) -> None:
    a = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    call = ops.gemm(a, a.T)
    cache = server.built.catalog.cache
    misses = cache.stats.misses
    (plain,) = client.execute(call.operator_desc, list(call.inputs))
    (half,) = client.execute(call.operator_desc, list(call.inputs), execution_flags=HALF)
    (again,) = client.execute(call.operator_desc, list(call.inputs), execution_flags=HALF)
    (streamed,) = client.execute(call.operator_desc, list(call.inputs), execution_flags=HALF, stream=True)
    assert cache.stats.misses - misses == 2
    for result in (half, again, streamed):
        np.testing.assert_array_equal(result, plain)
    # Flags that do not change compilation share the plain entry.
    client.execute(
        call.operator_desc, list(call.inputs), execution_flags=service_pb2.EXECUTION_FLAG_DESCRIPTORS_VOLATILE
    )
    assert cache.stats.misses - misses == 2


@pytest.mark.parametrize("stream", [False, True])
def test_unknown_execution_flags_are_invalid(client: dmlrpc.Client, stream: bool) -> None:
    x = np.ones(4, np.float32)
    call = ops.activation("relu", x)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(call.operator_desc, [x], execution_flags=8, stream=stream)
    assert caught.value.field_violations[0].field == ("start.execution_flags" if stream else "execution_flags")


def test_compile_operator_checks_its_execution_flags(server: ServerThread) -> None:
    x = np.ones(4, np.float32)
    request = service_pb2.CompileOperatorRequest(
        operator_desc=ops.activation("relu", x).operator_desc, execution_flags=1 << 8
    )
    with grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.CompileOperator(request, timeout=30)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        request.execution_flags = HALF
        assert stub.CompileOperator(request, timeout=30).handle


def test_a_call_on_its_own_provider_has_no_executed_on_trailer(server: ServerThread) -> None:
    x = np.ones(4, np.float32)
    request = service_pb2.ExecuteRequest(
        operator_desc=ops.activation("relu", x).operator_desc,
        inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=x.tobytes()))],
    )
    with grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        _, call = stub.Execute.with_call(request, timeout=30)
    assert EXECUTED_ON_KEY not in dict(call.trailing_metadata() or ())
    assert not server.built.catalog.cache.stats.fallbacks
    assert not [key for key in scrape(server) if key[0].startswith("dmlrpc_provider_fallbacks")]


def test_the_fallback_switch_reaches_capabilities(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DMLRPC_CPU_FALLBACK", raising=False)
    assert load_settings([]).cpu_fallback
    assert not load_settings(["--no-cpu-fallback"]).cpu_fallback
    monkeypatch.setenv("DMLRPC_CPU_FALLBACK", "false")
    assert not load_settings([]).cpu_fallback
    strict = start_server(cpu_fallback=False)
    try:
        with dmlrpc.Client(strict.address, timeout=30) as sdk:
            assert sdk.get_capabilities().cpu_fallback_refused
            x = np.ones(4, np.float32)
            (result,) = sdk.execute(ops.activation("relu", x).operator_desc, [x])
            np.testing.assert_array_equal(result, x)
    finally:
        strict.stop()


def test_a_host_session_without_a_kernel_is_unimplemented_not_internal() -> None:
    # The DirectML wheel's CPU provider (ONNX Runtime 1.24) lacks kernels Linux's has (Where on UINT32 and INT8):
    # a desc that falls back to it and finds no kernel answers UNIMPLEMENTED naming why, never INTERNAL. Here the
    # CPU provider's missing kernel is Where on UINT16, which no build has.
    inputs = [helper.make_tensor_value_info("c", TensorProto.BOOL, [2])]
    inputs += [helper.make_tensor_value_info(name, TensorProto.UINT16, [2]) for name in "ab"]
    graph = helper.make_graph(
        [helper.make_node("Where", ["c", "a", "b"], ["y"])],
        "where",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.UINT16, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    device = Provider(PROVIDERS["directml"], {}, "a DirectML device", True, 1)
    with pytest.raises(OperatorUnavailable) as raised:
        _host_session(model.SerializeToString(), device, {})
    assert raised.value.code == grpc.StatusCode.UNIMPLEMENTED
    assert "cannot run it either" in str(raised.value) and "Where" in str(raised.value)
