"""DML_ELEMENT_WISE_* as one NumPy-style builder."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, DTYPE_NAMES
from dmlrpc.errors import ArgumentTypeError
from dmlrpc.ops._elementwise import _operator_name, _operator_names, _single_output
from dmlrpc.ops._registry import GraphFace, cases, operator, same_shapes
from dmlrpc.ops.base import Call

__all__ = ["element_wise"]


#: Element-wise operators whose output is a 0/1 boolean (UINT8 unless ``output_dtype`` says UINT32).
_BOOLEAN_RESULTS = frozenset(
    {
        "logical_equals",
        "logical_greater_than",
        "logical_less_than",
        "logical_greater_than_or_equal",
        "logical_less_than_or_equal",
        "is_nan",
        "is_infinity",
        "bit_count",
    }
)


#: QUANTIZE_LINEAR and DEQUANTIZE_LINEAR: the input whose type the output takes, and the type without it.
_QUANTIZATION_RESULTS = {"quantize_linear": (2, np.uint8), "dequantize_linear": (1, np.float32)}


@operator(sends=cases("element_wise_"), graph=GraphFace(prepare=same_shapes))
def element_wise(
    name: str, *inputs: npt.ArrayLike | None, output_dtype: npt.DTypeLike | None = None, **attributes: Any
) -> Call:
    """DML_ELEMENT_WISE_<NAME>_OPERATOR_DESC over NumPy-broadcast inputs: ``element_wise("add", a, b)``.

    Inputs broadcast as in NumPy: each is sent once and described with stride 0 along its broadcast dimensions
    (DirectML's way). The output has the broadcast shape (0-d when every input is) and the first input's data type
    (IF: its values'; UINT8 for the comparisons, IS_NAN, IS_INFINITY and BIT_COUNT; QUANTIZE_LINEAR's zero point's,
    else UINT8; DEQUANTIZE_LINEAR's scale's), unless ``output_dtype`` says otherwise:
    ``element_wise("quantize_linear", x, scale, zero_point)`` with a float32 ``scale`` and an int8/uint8
    ``zero_point`` (arrays or NumPy scalars, broadcast as the other operands).
    ``attributes`` are the desc's other fields by their proto names; ``scale_bias=(scale, bias)`` and
    ``fused_activation=activation("relu", ...).operator_desc`` are accepted as shown.

    Data types follow NumPy where DirectML has the type, and are refused before sending where it has not:

    - arrays keep their dtype; a Python list becomes what NumPy makes of it (floats: float64), and a Python
      scalar takes the dtype NumPy's promotion gives it beside the other inputs (``add(x32, 1.5)`` sends 1.5 as
      float32). FLOAT64 is refused, with a hint, by every operator but IDENTITY, IF and the BIT_* ones, as
      DirectML has it nowhere else: pass float32 arrays.
    - DirectML has no BOOL: bool arrays travel as UINT8 0/1 to the logical operators (LOGICAL_AND, _OR, _XOR,
      _NOT give bool back, the comparisons UINT8) and as IF's condition, and are refused elsewhere, where 0/1
      arithmetic would differ from NumPy's bool arithmetic (True + True is 2 in UINT8).

    Raises:
        ArgumentValueError, ArgumentTypeError: an unknown name or attribute, a wrong input count, shapes that do
            not broadcast, a dtype the operator cannot take (each names the argument and its allowed values).
    """
    lowered = _operator_name(name, "element_wise", _ELEMENT_WISE_NAMES)
    where = f"element_wise({lowered!r})"
    output = None
    if output_dtype is not None:
        try:
            output = np.dtype(output_dtype)
        except TypeError:
            raise ArgumentTypeError(
                "output_dtype", f"{where}: output_dtype {output_dtype!r} is not a NumPy dtype", allowed=DTYPE_NAMES
            ) from None
        if output not in DATA_TYPE_BY_DTYPE:
            raise ArgumentTypeError(
                "output_dtype", f"{where}: output_dtype {output} has no DirectML data type", allowed=DTYPE_NAMES
            )
    if output is None and lowered in _BOOLEAN_RESULTS:
        output = np.dtype(np.uint8)
    if output is None and lowered in _QUANTIZATION_RESULTS:
        # The output's type is not the input's: QUANTIZE_LINEAR's is its zero point's (UINT8 without one),
        # DEQUANTIZE_LINEAR's its scale's (FLOAT32 for a Python number).
        position, default = _QUANTIZATION_RESULTS[lowered]
        given = getattr(inputs[position], "dtype", None) if len(inputs) > position else None
        output = given if isinstance(given, np.dtype) else np.dtype(default)
    return _single_output(f"element_wise_{lowered}", where, inputs, output, attributes)


_ELEMENT_WISE_NAMES = _operator_names("element_wise_")
