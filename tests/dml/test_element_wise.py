"""Every element-wise and activation operator on the real DirectML provider (Wine lane) against the NumPy
references: random descs, as on the CPU, each required to run on DirectML itself (no fallback to the host)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence

import grpc
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc
from dmlrpc_server.interceptors import EXECUTED_ON_KEY
from tests.dml.conftest import WineServer, lane_enabled
from tests.dml.fallbacks import FALLBACK_LINE, RUN_FALLBACK_LINE
from tests.dml.lowering import run_failing_desc, uses_64_bit_values
from tests.ops.test_element_wise import ASIN_EDGES, OPERATORS, check_against_reference

pytestmark = [pytest.mark.dml, pytest.mark.timeout(1200)]

#: Each new desc is a new DirectML session (about a second under lavapipe, plus a server restart every few).
EXAMPLES = int(os.environ.get("DMLRPC_DML_ELEMENT_WISE_EXAMPLES", "1"))
#: The lane's device (lavapipe through vkd3d, shader model 5.1) fails to compile some DirectML graphs, and the server
#: then runs them on the host: any graph with 64-bit integers or FLOAT64 values (an integer desc's SCALE_BIAS
#: computes in FLOAT64), and float ELEMENT_WISE_ADD over a multiple of 4 elements (a vectorised shader variant; 6 or
#: 35 elements compile). The random descs here use odd dimension sizes so that a fallback means something new;
#: ``test_what_this_device_cannot_build_runs_on_the_host`` pins the known one.
DEVICE_FALLBACKS: set[str] = set()


@pytest.mark.parametrize("name", OPERATORS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_matches_reference_on_directml(dml_server: WineServer, name: str, data: st.DataObject) -> None:
    def execute(desc: operators_pb2.OperatorDesc, inputs: Sequence[np.ndarray | None]) -> list[np.ndarray | None]:
        starts, seen = dml_server.starts, len(dml_server.log)
        outputs = dml_server.execute(desc, inputs)
        time.sleep(0.1)  # the server's log lines arrive through a pipe, read by another thread
        new = dml_server.log[seen if dml_server.starts == starts else 0 :]
        fell_back = [line for line in new if FALLBACK_LINE in line or RUN_FALLBACK_LINE in line]
        if name not in DEVICE_FALLBACKS and not uses_64_bit_values(desc):
            assert not fell_back, f"{name} did not run on DirectML: {fell_back[-1]}"
        return outputs

    check_against_reference(execute, name, data, device=True, odd_sizes=True)


@pytest.mark.parametrize(("elements", "on_device"), [(4, False), (12, False), (6, True), (35, True)])
def test_what_this_device_cannot_build_runs_on_the_host(dml_server: WineServer, elements: int, on_device: bool) -> None:
    x = np.linspace(-2, 2, elements, dtype=np.float32)
    call = dmlrpc.ops.element_wise("add", x, x)
    starts, seen = dml_server.starts, len(dml_server.log)
    (result,) = dml_server.execute(call.operator_desc, list(call.inputs))
    time.sleep(0.1)
    new = dml_server.log[seen if dml_server.starts == starts else 0 :]
    assert any(FALLBACK_LINE in line for line in new) != on_device
    np.testing.assert_array_equal(result, 2 * x)


@pytest.mark.parametrize(("elements", "on_device"), [(18, True), (24, False), (60, False)])
def test_asin_is_exact_near_zero(dml_server: WineServer, elements: int, on_device: bool) -> None:
    # The lane's own asin gave asin(0) = 6.8e-5 (shader model 5.1 has no asin instruction: the compiler writes a
    # polynomial of that absolute error); the DirectML lowering computes it from products, sums and a square root.
    # Over a multiple of 4 elements this device cannot build a float MUL or ADD of two tensors (the row "Float ADD
    # over 4k elements" of docs/directml-notes.md), so those sizes run on the host, exact too.
    x = np.resize(np.array(ASIN_EDGES + [0.3, -0.9, 2e-3], dtype=np.float32), elements)
    call = dmlrpc.ops.element_wise("asin", x)
    starts, seen = dml_server.starts, len(dml_server.log)
    (result,) = dml_server.execute(call.operator_desc, list(call.inputs))
    time.sleep(0.1)
    new = dml_server.log[seen if dml_server.starts == starts else 0 :]
    assert any(FALLBACK_LINE in line for line in new) != on_device, new
    with np.errstate(invalid="ignore"):
        expected = np.arcsin(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-12)


_I8_EDGES = np.array([-128, -5, 7, 127, 0, -1, -127], np.int8)
_I32_WIDE = np.array([70000, -70000, 200, -200, 40000, 65535, -32769], np.int32)
#: Integer results out of their type's range, which ONNX (and NumPy, and the server's rules) wrap and DirectML's own
#: Cast, Abs and Neg of 8- and 16-bit types saturate on this device (docs/directml-notes.md, "Integer results that
#: leave their type's range"): the lowerings keep the low bits explicitly.
_WRAPPING = {
    "cast int32 to int16": (dmlrpc.ops.cast(_I32_WIDE, np.int16), _I32_WIDE.astype(np.int16)),
    "cast int32 to uint8": (dmlrpc.ops.cast(_I32_WIDE, np.uint8), _I32_WIDE.astype(np.uint8)),
    "cast uint16 to int16": (
        dmlrpc.ops.cast(np.array([65535, 32768, 5, 40000, 1], np.uint16), np.int16),
        np.array([65535, 32768, 5, 40000, 1], np.uint16).astype(np.int16),
    ),
    "cast int8 to uint8": (dmlrpc.ops.cast(_I8_EDGES, np.uint8), _I8_EDGES.astype(np.uint8)),
    "cast int8 to uint16": (dmlrpc.ops.cast(_I8_EDGES, np.uint16), _I8_EDGES.astype(np.uint16)),
    "bit shift left of uint16": (
        dmlrpc.ops.element_wise(
            "bit_shift_left", np.array([35950, 40000, 1, 65535, 3], np.uint16), np.array([1, 2, 3, 1, 15], np.uint16)
        ),
        np.array([6364, 28928, 8, 65534, 32768], np.uint16),
    ),
    "abs of int8": (dmlrpc.ops.element_wise("abs", _I8_EDGES), np.abs(_I8_EDGES)),
    "negate of int8": (dmlrpc.ops.element_wise("negate", _I8_EDGES), -_I8_EDGES),
    "abs of int16": (
        dmlrpc.ops.element_wise("abs", np.array([-32768, -3, 32767], np.int16)),
        np.array([-32768, 3, 32767], np.int16),
    ),
}


@pytest.mark.parametrize("case", list(_WRAPPING))
def test_integer_results_out_of_range_wrap_on_directml(dml_server: WineServer, case: str) -> None:
    call, expected = _WRAPPING[case]
    starts, seen = dml_server.starts, len(dml_server.log)
    (result,) = dml_server.execute(call.operator_desc, list(call.inputs))
    time.sleep(0.1)  # the server's log lines arrive through a pipe, read by another thread
    new = dml_server.log[seen if dml_server.starts == starts else 0 :]
    assert not any(FALLBACK_LINE in line for line in new), new
    assert result is not None and result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def _executed_on(address: str, elements: int) -> str | None:
    x = np.linspace(-2, 2, elements, dtype=np.float32)
    call = dmlrpc.ops.element_wise("add", x, x)
    binding = service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=x.tobytes()))
    request = service_pb2.ExecuteRequest(operator_desc=call.operator_desc, inputs=[binding, binding])
    with grpc.insecure_channel(address) as channel:
        response, rpc = service_pb2_grpc.DirectMLServiceStub(channel).Execute.with_call(request, timeout=300)
    assert np.array_equal(np.frombuffer(response.outputs[0].buffer.data, np.float32), 2 * x)
    return dict(rpc.trailing_metadata() or ()).get(EXECUTED_ON_KEY)


def test_a_host_fallback_is_told_to_the_caller(dml_server: WineServer) -> None:
    assert dml_server.call(_executed_on, dml_server.address, 4) == "CPUExecutionProvider"
    assert dml_server.call(_executed_on, dml_server.address, 6) is None


def test_a_host_fallback_can_be_refused() -> None:
    assert lane_enabled()
    strict = WineServer(extra_args=["--no-cpu-fallback"])
    strict.start()
    try:
        client = strict.connected()
        assert client.get_capabilities().cpu_fallback_refused
        x = np.linspace(-2, 2, 4, dtype=np.float32)
        call = dmlrpc.ops.element_wise("add", x, x)
        with pytest.raises(dmlrpc.UnimplementedError, match="DmlExecutionProvider"):
            client.execute(call.operator_desc, list(call.inputs))
        y = np.linspace(-2, 2, 6, dtype=np.float32)
        (result,) = client.execute(dmlrpc.ops.element_wise("add", y, y).operator_desc, [y, y])
        np.testing.assert_array_equal(result, 2 * y)
        # A session that builds but fails its first run (tests/dml/test_run_fallback.py) is refused the same way.
        with pytest.raises(dmlrpc.UnimplementedError, match=re.escape(RUN_FALLBACK_LINE)):
            client.execute(run_failing_desc(), [])
    finally:
        strict.stop()
