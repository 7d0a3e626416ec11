"""A desc's DirectML lowering run on the CPU provider: what a DirectML-only bridge computes, checked anywhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from dmlrpc.ops import Call
from dmlrpc.v1.operators_pb2 import OperatorDesc
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits, Plan

_LIMITS = Limits(max_tensor_bytes=1 << 30, max_request_bytes=1 << 30, max_message_bytes=1 << 30)


def directml_plan(operator_desc: OperatorDesc) -> Plan:
    """The server's plan of ``operator_desc`` for DirectML at the latest feature level, under generous limits."""
    case = operator_desc.WhichOneof("desc")
    assert case is not None
    return REGISTRY[case].plan(
        getattr(operator_desc, case), feature_level=LATEST, limits=_LIMITS, provider="DmlExecutionProvider"
    )


def run_directml_lowering(
    call: Call, inputs: Sequence[np.ndarray | None] | None = None
) -> tuple[list[Any], onnx.ModelProto]:
    """The outputs of ``call``'s desc as the server lowers it for DirectML, run on the CPU provider (with the call's
    own inputs unless ``inputs``), and the lowered model."""
    plan = directml_plan(call.operator_desc)
    session = ort.InferenceSession(plan.model.SerializeToString(), providers=["CPUExecutionProvider"])
    arrays = list(call.inputs) if inputs is None else list(inputs)
    return list(plan.finish(session.run(None, plan.prepare(arrays)))), plan.model
