"""A desc's DirectML lowering run on the CPU provider: what a DirectML-only bridge computes, checked anywhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from dmlrpc.ops import Call
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits

_LIMITS = Limits(max_tensor_bytes=1 << 30, max_request_bytes=1 << 30, max_message_bytes=1 << 30)


def run_directml_lowering(
    call: Call, inputs: Sequence[np.ndarray | None] | None = None
) -> tuple[list[Any], onnx.ModelProto]:
    """The outputs of ``call``'s desc as the server lowers it for DirectML, run on the CPU provider (with the call's
    own inputs unless ``inputs``), and the lowered model."""
    case = call.operator_desc.WhichOneof("desc")
    assert case is not None
    plan = REGISTRY[case].plan(
        getattr(call.operator_desc, case), feature_level=LATEST, limits=_LIMITS, provider="DmlExecutionProvider"
    )
    session = ort.InferenceSession(plan.model.SerializeToString(), providers=["CPUExecutionProvider"])
    arrays = list(call.inputs) if inputs is None else list(inputs)
    return list(plan.finish(session.run(None, plan.prepare(arrays)))), plan.model
