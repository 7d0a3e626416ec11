"""ONE_HOT on the real DirectML provider (Wine lane): 32-bit indices stay on the device, and every index answers,
however far out of range, wherever it runs."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dmlrpc import ops
from tests.dml.conftest import WineServer
from tests.dml.fallbacks import FALLBACK_LINE, RUN_FALLBACK_LINE
from tests.references import generators as ref

pytestmark = [pytest.mark.dml, pytest.mark.timeout(600)]

DEPTH = 6


@pytest.mark.parametrize(
    ("index_dtype", "value_dtype", "on_device"),
    [
        (np.uint32, np.uint32, True),
        (np.int32, np.int8, True),
        (np.uint32, np.float32, True),
        # 64-bit indices compare at 64 bits: UINT64's Cast does not compile on this device (no 64-bit integer
        # shader operations), so it runs on the host, where Where on UINT32 and INT8 values (which ONNX Runtime
        # 1.24's CPU provider lacks) runs at 32 bits. Where INT64's graph runs is the device's business.
        (np.uint64, np.uint32, False),
        (np.int64, np.int8, None),
    ],
)
def test_one_hot_answers_far_indices_where_this_device_can(
    dml_server: WineServer, index_dtype: type, value_dtype: type, on_device: bool | None
) -> None:
    info = np.iinfo(index_dtype)
    indices = np.array([0, DEPTH - 1, DEPTH, 3_184_773_681 % (int(info.max) + 1), int(info.max), 2], index_dtype)
    if info.min < 0:
        indices = np.concatenate([indices, np.array([-1, -DEPTH, -DEPTH - 1, info.min], index_dtype)])
    values = np.array([3, 7], value_dtype)
    call = ops.one_hot(indices, DEPTH, values)
    seen = len(dml_server.log)
    (output,) = dml_server.execute(call.operator_desc, list(call.inputs))
    reference = ref.one_hot(indices.reshape(-1, 1), values, 1, DEPTH)
    np.testing.assert_array_equal(np.asarray(output).reshape(len(indices), DEPTH), reference)
    time.sleep(0.1)  # the server's log lines arrive through a pipe, read by another thread
    fell_back = [line for line in dml_server.log[seen:] if FALLBACK_LINE in line or RUN_FALLBACK_LINE in line]
    if on_device is not None:
        assert bool(fell_back) != on_device, "\n".join(dml_server.log[seen:])
