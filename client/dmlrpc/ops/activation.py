"""DML_ACTIVATION_* as one NumPy-style builder."""

from __future__ import annotations

from typing import Any

import numpy.typing as npt

from dmlrpc.ops._elementwise import _operator_name, _operator_names, _single_output
from dmlrpc.ops._registry import GraphFace, cases, operator, same_shapes
from dmlrpc.ops.base import Call

__all__ = ["activation"]


@operator(sends=cases("activation_"), graph=GraphFace(prepare=same_shapes))
def activation(name: str, *inputs: npt.ArrayLike | None, **attributes: Any) -> Call:
    """DML_ACTIVATION_<NAME>_OPERATOR_DESC: ``activation("leaky_relu", x, alpha=0.1)``,
    ``activation("softmax1", x, axes=[1])`` (``axis_count`` is filled in). With no inputs, the desc is one to
    use as a fused activation (its tensors unset). Inputs convert as ``element_wise``'s do; no activation takes
    FLOAT64 or bool.

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``element_wise``.
    """
    lowered = _operator_name(name, "activation", _ACTIVATION_NAMES)
    return _single_output(f"activation_{lowered}", f"activation({lowered!r})", inputs, None, attributes)


_ACTIVATION_NAMES = _operator_names("activation_")
