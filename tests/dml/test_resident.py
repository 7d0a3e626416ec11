"""Resident tensors on the real DirectML provider (Wine lane): kept in DirectML device memory, chained, read back."""

from __future__ import annotations

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from tests.dml.conftest import WineServer

pytestmark = [pytest.mark.dml, pytest.mark.timeout(600)]


def test_a_resident_chain_on_directml(dml_server: WineServer) -> None:
    client = dml_server.fresh()  # a worker recycle mid-chain would drop the resident tensors
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6)
    add = ops.element_wise("add", x, x).operator_desc
    relu = ops.activation("relu", x).operator_desc
    with client.upload(x) as resident:
        (doubled,) = client.execute(add, [resident, resident], keep=True)
        (rectified,) = client.execute(relu, [doubled], keep=True)
        np.testing.assert_array_equal(rectified.numpy(), np.maximum(2 * x, 0))
        doubled.release()
        rectified.release()
    with pytest.raises(dmlrpc.NotFoundError):
        resident.numpy()
