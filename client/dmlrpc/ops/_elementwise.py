"""The element-wise and activation builders' common part: operands broadcast as NumPy does, attributes set by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from google.protobuf import message_factory

from dmlrpc.codec import packed_strides, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops.base import Call, _array, _check_float64, _is_python_scalar, _wrap
from dmlrpc.schema import tensor_fields
from dmlrpc.v1 import operators_pb2

#: Element-wise operators that read UINT8 0/1 as booleans, so that NumPy bool arrays mean the same to them as to
#: NumPy. Every other operator would do arithmetic on the 0/1 (True + True = 2, where NumPy's is True).
_BOOLEAN_INPUTS = frozenset(
    {
        "logical_and",
        "logical_or",
        "logical_xor",
        "logical_not",
        "logical_equals",
        "logical_greater_than",
        "logical_less_than",
        "logical_greater_than_or_equal",
        "logical_less_than_or_equal",
    }
)


def _operator_names(prefix: str) -> tuple[str, ...]:
    return tuple(
        sorted(
            f.name.removeprefix(prefix)
            for f in operators_pb2.OperatorDesc.DESCRIPTOR.fields
            if f.name.startswith(prefix) and f.message_type is not None
        )
    )


def _operator_name(name: object, function: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(name, str):
        raise ArgumentTypeError("name", f"{function}: name must be a str; got {type(name).__name__}")
    lowered = name.lower()
    if lowered not in allowed:
        raise ArgumentValueError("name", f"{function}: no operator named {name!r}", allowed=allowed)
    return lowered


def _single_output(
    case: str,
    where: str,
    inputs: tuple[npt.ArrayLike | None, ...],
    output: np.dtype[Any] | None,
    attributes: dict[str, Any],
) -> Call:
    descriptor = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name[case].message_type
    assert descriptor is not None  # every OperatorDesc case is a desc message (the names were checked)
    message = message_factory.GetMessageClass(descriptor)()
    fields, (output_field, *_) = tensor_fields(message.DESCRIPTOR)
    _set_attributes(message, where, {f.name for f in fields} | {output_field.name}, attributes)
    if not inputs:
        return Call(_wrap(case, message), ())
    if len(inputs) != len(fields):
        names = ", ".join(f.name for f in fields)
        raise ArgumentValueError(
            "inputs", f"{where} takes {len(fields)} inputs ({names}); got {len(inputs)}", allowed=(str(len(fields)),)
        )
    arrays = _convert_inputs(case, where, inputs)
    present = [a for a in arrays if a is not None]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in present))
    except ValueError:
        shapes = " and ".join(str(a.shape) for a in present)
        raise ArgumentValueError(
            "inputs", f"{where}: inputs of shapes {shapes} do not broadcast to one shape (NumPy's rule)"
        ) from None
    wire = shape or (1,)  # DirectML has no 0-d tensors: a 0-d result travels as a {1} tensor
    bound: list[np.ndarray | None] = []
    for tensor_field, array in zip(fields, arrays, strict=True):
        if array is None:
            bound.append(None)
            continue
        padded = array.reshape((1,) * (len(wire) - array.ndim) + array.shape)
        strides = [
            0 if size == 1 and full != 1 else stride
            for size, full, stride in zip(padded.shape, wire, packed_strides(padded.shape), strict=True)
        ]
        broadcast = any(size == 1 and full != 1 for size, full in zip(padded.shape, wire, strict=True))
        getattr(message, tensor_field.name).CopyFrom(tensor_desc((padded.dtype, wire), strides if broadcast else None))
        bound.append(np.broadcast_to(padded, wire) if broadcast else padded)
    # IF's output has its values' type (A and B), not its condition's.
    first = arrays[1] if case == "element_wise_if" and arrays[1] is not None else present[0]
    dtype = output if output is not None else first.dtype
    getattr(message, output_field.name).CopyFrom(tensor_desc((dtype, wire)))
    # bool travels as UINT8 and comes back as UINT8 unless told: the logical operators return the inputs' type.
    result_dtype = dtype if dtype == np.bool_ else None
    return Call(_wrap(case, message), tuple(bound), (shape,), (result_dtype,))


def _set_attributes(message: Any, where: str, tensors: set[str], attributes: dict[str, Any]) -> None:
    if "scale_bias" in attributes and isinstance(attributes["scale_bias"], tuple):
        scale, bias = attributes.pop("scale_bias")
        attributes["scale_bias"] = operators_pb2.ScaleBias(scale=scale, bias=bias)
    if "axes" in attributes and "axis_count" not in attributes:
        attributes["axis_count"] = len(attributes["axes"])
    names = tuple(f.name for f in message.DESCRIPTOR.fields if f.name not in tensors)
    for key, value in attributes.items():
        if key not in names:
            has = "" if names else " (it has none)"
            raise ArgumentValueError(key, f"{where} has no attribute {key!r}{has}", allowed=names)
        target = getattr(message, key)
        try:
            if hasattr(target, "CopyFrom"):
                target.CopyFrom(value)
            elif hasattr(target, "extend"):
                target.extend(value)
            else:
                setattr(message, key, value)
        except TypeError as error:
            raise ArgumentTypeError(key, f"{where}: attribute {key}={value!r}: {error}") from None
        except ValueError as error:  # a number the field cannot hold (a negative count, an enum out of range)
            raise ArgumentValueError(key, f"{where}: attribute {key}={value!r}: {error}") from None


def _convert_inputs(case: str, where: str, inputs: tuple[npt.ArrayLike | None, ...]) -> list[np.ndarray | None]:
    """The inputs as arrays, as NumPy converts operands: arrays and lists first, then each Python scalar in the
    dtype NumPy's promotion gives it beside them (a weak scalar: ``x32 + 1.5`` stays float32)."""
    arrays: list[np.ndarray | None] = [
        None if value is None or _is_python_scalar(value) else _array(value, f"inputs[{i}]", where)
        for i, value in enumerate(inputs)
    ]
    dtypes = [a.dtype for a in arrays if a is not None]
    for i, value in enumerate(inputs):
        if value is not None and arrays[i] is None:
            dtype = np.result_type(*dtypes, value) if dtypes else None
            arrays[i] = _array(value, f"inputs[{i}]", where, dtype)
    operator = case.removeprefix("element_wise_")
    for i, array in enumerate(arrays):
        if array is None:
            continue
        _check_float64(case, f"inputs[{i}]", array, where)
        if array.dtype == np.bool_ and operator not in _BOOLEAN_INPUTS and not (operator == "if" and i == 0):
            raise ArgumentTypeError(
                f"inputs[{i}]",
                f"{where}: inputs[{i}] has dtype bool, which DirectML has no data type for: "
                f"DML_OPERATOR_{case.upper()} would read it as UINT8 0/1 and compute on numbers (True + True = 2), "
                f"not as NumPy does on bool; pass a uint8 array to compute on 0/1, or use a logical operator",
                allowed=tuple(f"element_wise({name!r})" for name in sorted(_BOOLEAN_INPUTS)),
            )
    return arrays
