"""Sessions that DirectML builds but cannot run on the lane's device (Wine lane): the desc moves to the host."""

from __future__ import annotations

import time

import grpc
import numpy as np
import pytest

from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc
from dmlrpc_server.interceptors import EXECUTED_ON_KEY
from tests.dml.conftest import WineServer
from tests.dml.fallbacks import RUN_FALLBACK_LINE
from tests.dml.lowering import run_failing_desc
from tests.ops.test_generators import fill_constant_desc, fill_sequence_desc, nonzero_desc

pytestmark = [pytest.mark.dml, pytest.mark.timeout(600)]

# NOTE: the lowerings of an INT64 FILL_VALUE_SEQUENCE and of NONZERO_COORDINATES hold nodes whose shapes are known
# only at run time (after a Range up to a fed limit; NonZero's coordinates), so the DirectML provider leaves them out
# of the graph it compiles with the session and compiles each when it first runs: the strict session builds, and the
# first run fails (MLOperatorAuthorImpl.cpp, 80004005) where they compute 64-bit integers, which this device cannot
# (shader model 5.1). A FILL_VALUE_SEQUENCE of up to 32 bits counts in INT32 wherever that holds every index (an
# integer one counted in INT64 and failed the same way until 2026-11-29) and FILL_VALUE_CONSTANT casts nothing:
# both stay on DirectML.
# Under --no-cpu-fallback such a desc is refused: test_element_wise.py's test_a_host_fallback_can_be_refused.


def _trailer(address: str, desc: operators_pb2.OperatorDesc) -> tuple[bytes, str | None]:
    request = service_pb2.ExecuteRequest(operator_desc=desc)
    with grpc.insecure_channel(address) as channel:
        response, rpc = service_pb2_grpc.DirectMLServiceStub(channel).Execute.with_call(request, timeout=300)
    return response.outputs[0].buffer.data, dict(rpc.trailing_metadata() or ()).get(EXECUTED_ON_KEY)


def test_a_session_that_fails_its_first_run_runs_on_the_host(dml_server: WineServer) -> None:
    client = dml_server.connected()
    seen = len(dml_server.log)
    # The first call is the one whose device run fails: it already answers from the host, and says so.
    data, executed_on = dml_server.call(_trailer, dml_server.address, run_failing_desc())
    assert np.array_equal(np.frombuffer(data, np.int64), [3, 5, 7]) and executed_on == "CPUExecutionProvider"
    assert dml_server.call(_trailer, dml_server.address, run_failing_desc())[1] == "CPUExecutionProvider"
    x = np.array([[0, 2], [3, 0]], np.float32)
    count, coordinates = client.execute(nonzero_desc(x, 2), [x])
    assert count is not None and coordinates is not None
    assert int(count.reshape(-1)[0]) == 2 and coordinates.reshape(4, 2)[:2].tolist() == [[0, 1], [1, 0]]
    time.sleep(0.1)  # the server's log lines arrive through a pipe, read by another thread
    assert any(RUN_FALLBACK_LINE in line for line in dml_server.log[seen:])
    data, executed_on = dml_server.call(
        _trailer, dml_server.address, fill_constant_desc(np.float32, (1, 1, 2, 4), 13.0)
    )
    assert np.array_equal(np.frombuffer(data, np.float32), np.full(8, 13, np.float32)) and executed_on is None
    for dtype in (np.float32, np.int32, np.uint8):
        sequence = fill_sequence_desc(dtype, (1, 1, 1, 3), 3, 2)
        data, executed_on = dml_server.call(_trailer, dml_server.address, sequence)
        # A buffer's size is a multiple of 4 bytes (DMLCalcBufferTensorSize): UINT8 output has one more element.
        assert np.array_equal(np.frombuffer(data, dtype)[:3], [3, 5, 7]) and executed_on is None, dtype
