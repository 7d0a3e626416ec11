"""ONNX's own operator cases (tests/onnx_node_cases.py) on the real DirectML provider (Wine lane): each case's
outputs against ONNX's, and which descs the server ran on the host instead, by cause."""

from __future__ import annotations

import os

import pytest

from tests import onnx_node_cases
from tests.conformance.test_onnx_node_cases import as_param, check
from tests.dml.conftest import WineServer
from tests.dml.fallbacks import Fallbacks
from tests.onnx_node_cases import NodeCase
from tests.provider_cases import LaneClient

pytestmark = [pytest.mark.dml, pytest.mark.timeout(1200)]

#: Every how-many-th case the lane runs: each new desc is a new DirectML session (about a second under lavapipe), so
#: CI runs a sample and ``DMLRPC_DML_ONNX_CASES=1`` runs them all (docs/directml-notes.md records such a run).
STRIDE = int(os.environ.get("DMLRPC_DML_ONNX_CASES", "10"))
#: Float results on the device may differ from ONNX's by more than ONNX's own tolerance (its shaders' transcendental
#: functions, fused multiply-adds); the element-wise lane allows the same factor over the CPU's tolerance.
DEVICE_TOLERANCE = 10.0
FALLBACKS = Fallbacks()


CASES = [as_param(case) for case in list(onnx_node_cases.mapped_cases())[::STRIDE]]


@pytest.fixture(scope="module")
def client(dml_server: WineServer) -> LaneClient:
    return FALLBACKS.client(dml_server)


@pytest.mark.parametrize("case", CASES)
def test_onnx_node_case_on_directml(client: LaneClient, case: NodeCase) -> None:
    check(case, client.execute(case.operator_desc, list(case.inputs)), tolerance=DEVICE_TOLERANCE)


def test_which_cases_ran_on_the_host(client: LaneClient) -> None:
    # Collected last: by now every case has run on the lane's server.
    print(f"\nONNX node cases run on the lane, by desc: {dict(sorted(client.cases.items()))}")
    print(f"of those, {FALLBACKS.report()}")
    # Every desc that ran on the host has a known cause (docs/directml-notes.md, "ONNX's own operator cases").
    assert not [cause for cause in FALLBACKS.by_cause if ": other" in cause], FALLBACKS.report()
