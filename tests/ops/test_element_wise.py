"""Every ELEMENT_WISE_* and ACTIVATION_* operator over the wire against its NumPy reference: random shapes, strides
(broadcast included), data types from its support table and attribute values; then the validation rules."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.schema import tensor_fields
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY
from tests.directml_lowering import run_directml_lowering
from tests.references.element_wise import REFERENCES
from tests.strategies import Layout, broadcast_values, layouts

LATEST = operators_pb2.FEATURE_LEVEL_6_4
OPERATORS = sorted(name for name in REFERENCES)
FUSABLE = [
    "ACTIVATION_ELU", "ACTIVATION_HARD_SIGMOID", "ACTIVATION_IDENTITY", "ACTIVATION_LEAKY_RELU",
    "ACTIVATION_LINEAR", "ACTIVATION_PARAMETRIC_SOFTPLUS", "ACTIVATION_RELU", "ACTIVATION_SCALED_ELU",
    "ACTIVATION_SCALED_TANH", "ACTIVATION_SIGMOID", "ACTIVATION_SOFTPLUS", "ACTIVATION_SOFTSIGN", "ACTIVATION_TANH",
    "ACTIVATION_THRESHOLDED_RELU", "ACTIVATION_SHRINK", "ACTIVATION_CELU",
]  # fmt: skip

# Input value ranges (floats) where the default [-8, 8] would say little about the function.
DOMAINS: dict[str, tuple[float, float]] = {
    "ELEMENT_WISE_ACOS": (-1, 1),
    "ELEMENT_WISE_ASIN": (-1, 1),
    "ELEMENT_WISE_ATANH": (-0.875, 0.875),
    "ELEMENT_WISE_ACOSH": (1, 8),
    "ELEMENT_WISE_LOG": (-1, 8),
    "ELEMENT_WISE_SQRT": (-1, 8),
    "ELEMENT_WISE_POW": (-4, 4),
}
# Operators whose float inputs include NaN and infinities.
SPECIALS = {"ELEMENT_WISE_IS_NAN", "ELEMENT_WISE_IS_INFINITY", "ELEMENT_WISE_SIGN", "ELEMENT_WISE_ROUND"}
# Tensors whose data type differs from the first input's: the operator's own type rules (from the pages).
COMPARISONS = {
    "ELEMENT_WISE_LOGICAL_EQUALS", "ELEMENT_WISE_LOGICAL_GREATER_THAN", "ELEMENT_WISE_LOGICAL_LESS_THAN",
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL", "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL",
}  # fmt: skip
OWN_OUTPUT_TYPE = COMPARISONS | {"ELEMENT_WISE_IS_NAN", "ELEMENT_WISE_IS_INFINITY", "ELEMENT_WISE_BIT_COUNT"}


def _case(name: str) -> str:
    return name.lower()


def _desc_type(name: str) -> Any:
    return operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name[_case(name)].message_type


def _table(name: str) -> dict[str, list[np.dtype[Any]]]:
    support = REGISTRY[_case(name)].support_at(LATEST)
    assert support is not None
    return {field: [DTYPE_BY_DATA_TYPE[t] for t in sorted(rule.data_types)] for field, rule in support.items()}


def _draw_types(data: st.DataObject, name: str) -> dict[str, np.dtype[Any]]:
    """A data type for every tensor field, honouring the operator's documented type groups."""
    table = _table(name)
    inputs, outputs = tensor_fields(_desc_type(name))
    first = inputs[0].name if name != "ELEMENT_WISE_IF" else "a_tensor"
    main = data.draw(st.sampled_from(table[first]), label="dtype")
    chosen = {field: main for field in table}
    if name in OWN_OUTPUT_TYPE:
        chosen[outputs[0].name] = data.draw(st.sampled_from(table[outputs[0].name]), label="output dtype")
    if name == "ELEMENT_WISE_IF":
        chosen["condition_tensor"] = np.dtype("u1")
    if name == "ELEMENT_WISE_POW":
        chosen["exponent_tensor"] = data.draw(st.sampled_from(table["exponent_tensor"]), label="exponent dtype")
    if name == "ELEMENT_WISE_QUANTIZE_LINEAR":
        chosen["scale_tensor"] = np.dtype("<f4") if main.kind == "i" else main
        chosen["output_tensor"] = chosen["zero_point_tensor"] = data.draw(st.sampled_from(table["output_tensor"]))
    if name == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
        chosen["output_tensor"] = chosen["scale_tensor"] = data.draw(st.sampled_from(table["output_tensor"]))
    if name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
        for prefix in ("a", "b", "output"):
            dtype = data.draw(st.sampled_from(table[f"{prefix}_tensor"]), label=f"{prefix} dtype")
            chosen[f"{prefix}_tensor"] = chosen[f"{prefix}_zero_point_tensor"] = dtype
            chosen[f"{prefix}_scale_tensor"] = np.dtype("<f4")
    return chosen


def _values(data: st.DataObject, name: str, dtype: np.dtype[Any], shape: tuple[int, ...], label: str) -> np.ndarray:
    if dtype.kind == "f":
        low, high = DOMAINS.get(name, (-8.0, 8.0))
        elements: st.SearchStrategy[float] = st.floats(low, high, width=8 * dtype.itemsize).map(lambda v: round(v, 1))
        if name in SPECIALS:
            elements = st.one_of(elements, st.sampled_from([math.nan, math.inf, -math.inf, 0.5, -2.5]))
        return data.draw(hnp.arrays(dtype, shape, elements=elements), label=label)
    info = np.iinfo(dtype)
    small = hnp.arrays(dtype, shape, elements=st.integers(max(info.min, -4), min(info.max, 4)))
    return data.draw(st.one_of(small, hnp.arrays(dtype, shape)), label=label)


#: Attributes where an activation jumps: values drawn at them would test float rounding, not the operator.
_THRESHOLDS = {("ACTIVATION_THRESHOLDED_RELU", "alpha"), ("ACTIVATION_SHRINK", "threshold")}


def _attribute(data: st.DataObject, name: str, field: FieldDescriptor, chosen: dict[str, np.dtype[Any]]) -> Any:
    label = field.name
    if name == "ACTIVATION_SOFTPLUS" and field.name == "steepness":
        return data.draw(st.sampled_from([1.0, 1.5, 3.0]), label=label)
    if name == "ACTIVATION_CELU" and field.name == "alpha":
        return data.draw(st.sampled_from([0.5, 1.0, 2.0]), label=label)
    if (name, field.name) in _THRESHOLDS:
        # Off the data's 0.1 grid: a value that is exactly the threshold in decimal is a float rounding away from
        # either side of it, and float32 and float64 arithmetic round it differently.
        return data.draw(st.floats(-4, 4).map(lambda v: round(v * 4) / 4 + 0.125), label=label)
    if field.name == "rounding_mode":
        return data.draw(st.integers(0, 2), label=label)
    if field.name == "infinity_mode":
        return data.draw(st.integers(0, 2), label=label)
    if field.type == FieldDescriptor.TYPE_FLOAT:
        return data.draw(st.floats(-4, 4).map(lambda v: round(v * 4) / 4), label=label)
    raise AssertionError(f"no strategy for {name}.{field.name}")


def _scalar(value: Any, dtype: np.dtype[Any], use_bytes: bool) -> operators_pb2.ScalarUnion:
    if use_bytes:
        raw = np.array([value], dtype=dtype).tobytes()
        return operators_pb2.ScalarUnion(bytes=raw.ljust(8, b"\0"))
    member = {"f": "float32" if dtype.itemsize <= 4 else "float64"}.get(
        dtype.kind, f"{'u' if dtype.kind == 'u' else ''}int{8 * dtype.itemsize}"
    )
    return operators_pb2.ScalarUnion(**{member: value.item() if hasattr(value, "item") else value})


Execute = Callable[[operators_pb2.OperatorDesc, list[np.ndarray | None]], list[np.ndarray | None]]


@pytest.mark.parametrize("name", OPERATORS)
@settings(max_examples=15)
@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, name: str, data: st.DataObject) -> None:
    check_against_reference(client.execute, name, data)  # type: ignore[arg-type]


@dataclass
class Case:
    """A drawn desc of one operator with its input arrays (binding order) and its output's type and shape."""

    name: str
    desc: Any
    arrays: list[np.ndarray | None]
    output_dtype: np.dtype[Any]
    shape: tuple[int, ...]

    @property
    def operator_desc(self) -> operators_pb2.OperatorDesc:
        return operators_pb2.OperatorDesc(**{_case(self.name): self.desc})


def draw_case(data: st.DataObject, name: str, *, odd_sizes: bool = False) -> Case:
    """A valid desc of operator ``name``: a data type per its tables and type groups, 1-8 dimensions, strided and
    broadcast layouts, attribute values, and input values inside the operator's defined domain."""
    message = _desc_type(name)
    inputs, outputs = tensor_fields(message)
    chosen = _draw_types(data, name)
    support = REGISTRY[_case(name)].support_at(LATEST)
    assert support is not None
    low = max(rule.min_dimension_count for rule in support.values())
    high = 8 if name not in ("ACTIVATION_HARDMAX", "ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX") else 2
    rank = data.draw(st.integers(low, high), label="rank")
    sides = st.sampled_from([1, 3, 5]) if odd_sizes else st.integers(1, 4)
    shape = tuple(data.draw(st.lists(sides, min_size=rank, max_size=rank), label="shape"))
    if int(np.prod(shape)) > 256:
        shape = shape[:2] + (1,) * (rank - 2)
    desc = message._concrete_class()
    arrays: list[np.ndarray | None] = []
    for field in inputs:
        dtype = chosen[field.name]
        if field.optional and not data.draw(st.booleans(), label=f"{field.name} set"):
            arrays.append(None)
            continue
        per_tensor = name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD" and ("scale" in field.name or "zero" in field.name)
        tensor_shape = (1,) * rank if per_tensor else shape
        layout = (
            Layout(None) if per_tensor else data.draw(layouts(tensor_shape, allow_broadcast=True), label=field.name)
        )
        values = broadcast_values(_values(data, name, dtype, tensor_shape, field.name), layout)
        if "scale" in field.name and dtype.kind == "f":
            values = np.where(values == 0, dtype.type(0.5), values).astype(dtype)
        arrays.append(values)
        getattr(desc, field.name).CopyFrom(tensor_desc((dtype, tensor_shape), layout.strides))
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    out_dtype = chosen[outputs[0].name]
    getattr(desc, outputs[0].name).CopyFrom(tensor_desc((out_dtype, shape), out_layout.strides))
    _fix_values(name, arrays)
    _set_attributes(data, name, desc, chosen, shape)
    return Case(name, desc, arrays, out_dtype, shape)


def check_against_reference(
    execute: Execute, name: str, data: st.DataObject, *, device: bool = False, odd_sizes: bool = False
) -> None:
    """Draw a desc of operator ``name`` with its bindings, execute it and compare with the NumPy reference.

    ``device``: the answer comes from a GPU provider, whose shaders approximate: 10x the float tolerances, values
    at a type's overflow edge compared as the largest finite value, and 0 ** 0 left out (DirectML's POW gives 0).
    ``odd_sizes``: only odd dimension sizes (see the Wine lane: its device fails some shapes of 4k elements).
    """
    case = draw_case(data, name, odd_sizes=odd_sizes)
    arrays, out_dtype, shape = case.arrays, case.output_dtype, case.shape
    if device and name in ("ELEMENT_WISE_POW", "ELEMENT_WISE_CONSTANT_POW"):
        base = arrays[0]
        assert base is not None
        arrays[0] = np.where(base == 0, base.dtype.type(1), base).astype(base.dtype)

    (result,) = execute(case.operator_desc, arrays)

    expected = REFERENCES[name](arrays, case.desc, out_dtype)
    assert result is not None and result.dtype == out_dtype and result.shape == shape
    if out_dtype.kind == "f":
        tolerance = {2: 2e-3, 4: 1e-4, 8: 1e-10}[out_dtype.itemsize] * (10 if device else 1)
        if device:
            largest = np.finfo(out_dtype).max
            result, expected = (np.clip(v, -largest, largest) for v in (result, expected))
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("name", OPERATORS)
@settings(max_examples=3)
@given(data=st.data())
def test_each_operator_refuses_mismatched_sizes_and_unsupported_types(
    client: dmlrpc.Client, name: str, data: st.DataObject
) -> None:
    case = draw_case(data, name)
    inputs, _ = tensor_fields(case.desc.DESCRIPTOR)
    first = next(f.name for f in inputs if case.desc.HasField(f.name) and "scale" not in f.name)
    path = f"operator_desc.{_case(name)}.{first}.buffer"
    original = getattr(case.desc, first).buffer

    # One more element along the last dimension than the output: sizes must match exactly.
    resized = list(original.sizes)
    resized[-1] += 1
    wrong = tensor_desc((DTYPE_BY_DATA_TYPE[original.data_type], resized))
    mutated = type(case.desc)()
    mutated.CopyFrom(case.desc)
    getattr(mutated, first).CopyFrom(wrong)
    _invalid_desc(client, operators_pb2.OperatorDesc(**{_case(name): mutated}), f"{path}.sizes")

    supported = {DTYPE_BY_DATA_TYPE[t] for t in REGISTRY[_case(name)].support_at(LATEST)[first].data_types}  # type: ignore[index]
    outside = [dtype for dtype in DTYPE_BY_DATA_TYPE.values() if dtype not in supported]
    if outside:
        retyped = type(case.desc)()
        retyped.CopyFrom(case.desc)
        getattr(retyped, first).CopyFrom(
            tensor_desc((outside[0], list(original.sizes)), list(original.strides) or None)
        )
        _invalid_desc(client, operators_pb2.OperatorDesc(**{_case(name): retyped}), f"{path}.data_type")


def _invalid_desc(client: dmlrpc.Client, operator_desc: operators_pb2.OperatorDesc, field: str) -> None:
    """The desc is refused before any data is looked at: empty buffers are enough to see the violation."""
    case = operator_desc.WhichOneof("desc")
    assert case is not None
    desc = getattr(operator_desc, case)
    inputs, _ = tensor_fields(desc.DESCRIPTOR)
    buffers = [b"" if desc.HasField(f.name) else None for f in inputs]
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(operator_desc, buffers)
    assert [v.field for v in caught.value.field_violations] == [field], caught.value


def _fix_values(name: str, arrays: list[np.ndarray | None]) -> None:
    """Values outside an operator's defined domain are refused (tested separately): keep them out here."""
    if name in ("ELEMENT_WISE_DIVIDE", "ELEMENT_WISE_MODULUS_TRUNCATE", "ELEMENT_WISE_MODULUS_FLOOR"):
        b = arrays[1]
        assert b is not None
        if b.dtype.kind != "f":
            arrays[1] = np.where(b == 0, b.dtype.type(1), b).astype(b.dtype)
    if name == "ELEMENT_WISE_POW":
        base, exponent = arrays
        assert base is not None and exponent is not None
        # Zero bases become 1 wherever any exponent is negative: replacing only the elements paired with a negative
        # exponent would break a broadcast (stride-0) base's constancy along its broadcast dimensions.
        if base.dtype.kind != "f" and exponent.dtype.kind != "f" and (exponent < 0).any():
            arrays[0] = np.where(base == 0, base.dtype.type(1), base).astype(base.dtype)


def _set_attributes(
    data: st.DataObject, name: str, desc: Any, chosen: dict[str, np.dtype[Any]], shape: tuple[int, ...]
) -> None:
    for field in desc.DESCRIPTOR.fields:
        if field.message_type is not None and field.message_type.name == "TensorDesc":
            continue
        if field.name == "scale_bias":
            if data.draw(st.booleans(), label="scale_bias set"):
                scale = data.draw(st.sampled_from([0.5, 1.0, -2.0, 0.25]), label="scale")
                # A zero bias is left out: whether x * scale + 0 keeps a negative zero is up to the runtime's optimiser.
                bias = data.draw(st.sampled_from([0.25, 1.0, -0.5]), label="bias")
                desc.scale_bias.CopyFrom(operators_pb2.ScaleBias(scale=scale, bias=bias))
        elif field.name == "fused_activation":
            if chosen["output_tensor"].kind == "f" and data.draw(st.booleans(), label="fused"):
                fused = data.draw(st.sampled_from(FUSABLE), label="fused activation")
                inner = getattr(desc.fused_activation, _case(fused))
                inner.SetInParent()
                _set_attributes(data, fused, inner, chosen, shape)
        elif field.name == "min_max_data_type":
            dtype = chosen["output_tensor" if "output_tensor" in chosen else "output_gradient_tensor"]
            desc.min_max_data_type = next(k for k, v in DTYPE_BY_DATA_TYPE.items() if v == dtype)
            values = _values(data, name, dtype, (2,), "min/max")
            use_bytes = (dtype.kind == "f" and dtype.itemsize == 2) or data.draw(st.booleans(), label="as bytes")
            desc.min.CopyFrom(_scalar(values[0], dtype, use_bytes))
            desc.max.CopyFrom(_scalar(values[1], dtype, use_bytes))
        elif field.name == "axes":
            axes = data.draw(
                st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True), label="axes"
            )
            desc.axes.extend(axes)
            desc.axis_count = len(axes)
        elif field.name == "axis_count" or (
            field.name in ("min", "max") and "min_max_data_type" in desc.DESCRIPTOR.fields_by_name
        ):
            continue
        else:
            setattr(desc, field.name, _attribute(data, name, field, chosen))


# -- DirectML's examples --------------------------------------------------------------------------------------------


def _unary(
    client: dmlrpc.Client, name: str, x: np.ndarray, out: np.dtype[Any] | None = None, **attrs: Any
) -> np.ndarray:
    message = _desc_type(name)._concrete_class(
        input_tensor=tensor_desc(x), output_tensor=tensor_desc((out or x.dtype, x.shape)), **attrs
    )
    (result,) = client.execute(operators_pb2.OperatorDesc(**{_case(name): message}), [x])
    assert result is not None
    return result


def test_bit_not_example(client: dmlrpc.Client) -> None:
    x = np.array([0, 128, 42, 255], np.uint8)
    np.testing.assert_array_equal(_unary(client, "ELEMENT_WISE_BIT_NOT", x), [255, 127, 213, 0])


def test_bit_count_example(client: dmlrpc.Client) -> None:
    x = np.array([0, 123, 456, 789], np.uint32)
    np.testing.assert_array_equal(_unary(client, "ELEMENT_WISE_BIT_COUNT", x, np.dtype("u1")), [0, 6, 4, 5])


def test_round_modes_on_halves(client: dmlrpc.Client) -> None:
    # 0.49999997 + 0.5 rounds to 1 in FLOAT32, and 2**23 - 0.5 is the largest FLOAT32 half.
    x = np.array([2.5, -2.5, 0.5, 1.5, -0.4999999701976776, 2.7, 0.4999999701976776, 8388607.5, -np.inf], np.float32)
    expected = {
        0: [2, -2, 0, 2, -0.0, 3, 0, 8388608, -np.inf],
        1: [2, -2, 0, 1, -0.0, 2, 0, 8388607, -np.inf],
        2: [3, -3, 1, 2, -0.0, 3, 0, 8388608, -np.inf],
    }
    for mode, values in expected.items():
        np.testing.assert_array_equal(_unary(client, "ELEMENT_WISE_ROUND", x, rounding_mode=mode), values)


def test_integer_division_truncates_and_wraps(client: dmlrpc.Client) -> None:
    a = np.array([7, -7, 7, -7, -(2**31)], np.int32)
    b = np.array([2, 2, -2, -2, -1], np.int32)
    desc = operators_pb2.ElementWiseDivideOperatorDesc(
        a_tensor=tensor_desc(a), b_tensor=tensor_desc(b), output_tensor=tensor_desc(a)
    )
    (result,) = client.execute(operators_pb2.OperatorDesc(element_wise_divide=desc), [a, b])
    np.testing.assert_array_equal(result, [3, -3, -3, 3, -(2**31)])


def test_broadcast_through_zero_strides(client: dmlrpc.Client) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    row = np.array([10, 20, 30], np.float32)
    desc = operators_pb2.ElementWiseAddOperatorDesc(
        a_tensor=tensor_desc(a), b_tensor=tensor_desc((np.float32, (2, 3)), [0, 1]), output_tensor=tensor_desc(a)
    )
    (result,) = client.execute(operators_pb2.OperatorDesc(element_wise_add=desc), [a, np.broadcast_to(row, (2, 3))])
    np.testing.assert_array_equal(result, a + row)


def test_fused_activation_applies_after_the_add(client: dmlrpc.Client) -> None:
    a = np.array([-2, -1, 0, 1], np.float32)
    desc = operators_pb2.ElementWiseAdd1OperatorDesc(
        a_tensor=tensor_desc(a),
        b_tensor=tensor_desc(a),
        output_tensor=tensor_desc(a),
        fused_activation=operators_pb2.OperatorDesc(activation_relu=operators_pb2.ActivationReluOperatorDesc()),
    )
    (result,) = client.execute(operators_pb2.OperatorDesc(element_wise_add1=desc), [a, a])
    np.testing.assert_array_equal(result, [0, 0, 0, 2])


# -- validation -----------------------------------------------------------------------------------------------------


def _invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any], field: str) -> str:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert [v.field for v in caught.value.field_violations] == [field], caught.value
    return str(caught.value)


def test_sizes_must_match_the_output(client: dmlrpc.Client) -> None:
    a = np.zeros((2, 3), np.float32)
    desc = operators_pb2.ElementWiseAddOperatorDesc(
        a_tensor=tensor_desc(a), b_tensor=tensor_desc((np.float32, (3,))), output_tensor=tensor_desc(a)
    )
    _invalid(
        client,
        operators_pb2.OperatorDesc(element_wise_add=desc),
        [a, a[0]],
        "operator_desc.element_wise_add.b_tensor.buffer.sizes",
    )


def test_types_must_match(client: dmlrpc.Client) -> None:
    a = np.zeros(3, np.float32)
    desc = operators_pb2.ElementWiseAddOperatorDesc(
        a_tensor=tensor_desc(a), b_tensor=tensor_desc(a.astype(np.float16)), output_tensor=tensor_desc(a)
    )
    _invalid(
        client,
        operators_pb2.OperatorDesc(element_wise_add=desc),
        [a, a.astype(np.float16)],
        "operator_desc.element_wise_add.b_tensor.buffer.data_type",
    )


def test_unsupported_data_type_is_refused(client: dmlrpc.Client) -> None:
    x = np.zeros(3, np.uint8)
    desc = operators_pb2.ElementWiseSinOperatorDesc(input_tensor=tensor_desc(x), output_tensor=tensor_desc(x))
    _invalid(
        client,
        operators_pb2.OperatorDesc(element_wise_sin=desc),
        [x],
        "operator_desc.element_wise_sin.input_tensor.buffer.data_type",
    )


def test_integer_division_by_zero_is_refused(client: dmlrpc.Client) -> None:
    a = np.array([1, 2, 3], np.int32)
    b = np.array([1, 0, 1], np.int32)
    desc = operators_pb2.ElementWiseModulusFloorOperatorDesc(
        a_tensor=tensor_desc(a), b_tensor=tensor_desc(b), output_tensor=tensor_desc(a)
    )
    message = _invalid(
        client, operators_pb2.OperatorDesc(element_wise_modulus_floor=desc), [a, b], "inputs[1].buffer.data"
    )
    assert "[1]" in message


@pytest.mark.parametrize(("field", "value"), [("rounding_mode", 3), ("rounding_mode", -1)])
def test_unknown_enum_values_are_refused(client: dmlrpc.Client, field: str, value: int) -> None:
    x = np.zeros(2, np.float32)
    desc = operators_pb2.ElementWiseRoundOperatorDesc(input_tensor=tensor_desc(x), output_tensor=tensor_desc(x))
    setattr(desc, field, value)
    _invalid(
        client, operators_pb2.OperatorDesc(element_wise_round=desc), [x], f"operator_desc.element_wise_round.{field}"
    )


def test_fused_activation_rules(client: dmlrpc.Client) -> None:
    a = np.zeros(2, np.float32)

    def add1(fused: operators_pb2.OperatorDesc) -> operators_pb2.OperatorDesc:
        return operators_pb2.OperatorDesc(
            element_wise_add1=operators_pb2.ElementWiseAdd1OperatorDesc(
                a_tensor=tensor_desc(a), b_tensor=tensor_desc(a), output_tensor=tensor_desc(a), fused_activation=fused
            )
        )

    path = "operator_desc.element_wise_add1.fused_activation"
    softmax = operators_pb2.OperatorDesc(activation_softmax=operators_pb2.ActivationSoftmaxOperatorDesc())
    _invalid(client, add1(softmax), [a, a], f"{path}.activation_softmax")
    with_tensor = operators_pb2.OperatorDesc(
        activation_relu=operators_pb2.ActivationReluOperatorDesc(input_tensor=tensor_desc(a))
    )
    _invalid(client, add1(with_tensor), [a, a], f"{path}.activation_relu.input_tensor")
    bad_steepness = operators_pb2.OperatorDesc(
        activation_softplus=operators_pb2.ActivationSoftplusOperatorDesc(steepness=0)
    )
    _invalid(client, add1(bad_steepness), [a, a], f"{path}.activation_softplus.steepness")


def test_scalar_union_must_match_its_data_type(client: dmlrpc.Client) -> None:
    x = np.zeros(2, np.int32)
    desc = operators_pb2.ElementWiseClip1OperatorDesc(
        input_tensor=tensor_desc(x),
        output_tensor=tensor_desc(x),
        min_max_data_type=operators_pb2.TENSOR_DATA_TYPE_INT32
        if hasattr(operators_pb2, "TENSOR_DATA_TYPE_INT32")
        else 6,
        min=operators_pb2.ScalarUnion(float32=1.0),
        max=operators_pb2.ScalarUnion(int32=3),
    )
    _invalid(client, operators_pb2.OperatorDesc(element_wise_clip1=desc), [x], "operator_desc.element_wise_clip1.min")
    desc.min.CopyFrom(operators_pb2.ScalarUnion(bytes=b"\0" * 4))
    _invalid(
        client, operators_pb2.OperatorDesc(element_wise_clip1=desc), [x], "operator_desc.element_wise_clip1.min.bytes"
    )
    desc.min.CopyFrom(operators_pb2.ScalarUnion(int32=0))
    desc.min_max_data_type = 1  # FLOAT32, not the output's INT32
    _invalid(
        client,
        operators_pb2.OperatorDesc(element_wise_clip1=desc),
        [x],
        "operator_desc.element_wise_clip1.min_max_data_type",
    )


def test_softmax_takes_rows_only(client: dmlrpc.Client) -> None:
    x = np.zeros((1, 2, 3, 4), np.float32)
    desc = operators_pb2.ActivationSoftmaxOperatorDesc(input_tensor=tensor_desc(x), output_tensor=tensor_desc(x))
    _invalid(
        client,
        operators_pb2.OperatorDesc(activation_softmax=desc),
        [x],
        "operator_desc.activation_softmax.input_tensor.buffer.sizes",
    )


def test_softmax1_axes_rules(client: dmlrpc.Client) -> None:
    x = np.zeros((2, 3), np.float32)
    for axes, field in (([2], "axes[0]"), ([0, 0], "axes"), ([], "axes")):
        desc = operators_pb2.ActivationSoftmax1OperatorDesc(
            input_tensor=tensor_desc(x), output_tensor=tensor_desc(x), axis_count=len(axes), axes=axes
        )
        _invalid(
            client,
            operators_pb2.OperatorDesc(activation_softmax1=desc),
            [x],
            f"operator_desc.activation_softmax1.{field}",
        )
    desc = operators_pb2.ActivationSoftmax1OperatorDesc(
        input_tensor=tensor_desc(x), output_tensor=tensor_desc(x), axis_count=2, axes=[1]
    )
    _invalid(
        client,
        operators_pb2.OperatorDesc(activation_softmax1=desc),
        [x],
        "operator_desc.activation_softmax1.axis_count",
    )


def test_capabilities_list_the_family_as_executable(client: dmlrpc.Client) -> None:
    caps = client.get_capabilities()
    executable = {entry.name for entry in caps.operators if entry.executable}
    assert {_case(name) for name in OPERATORS} <= executable
    # Every operator type the proto mirrors executes: none is listed as unimplemented.
    assert [entry.name for entry in caps.operators if not entry.executable] == []
    assert len(caps.operators) == len(operators_pb2.OperatorDesc.DESCRIPTOR.oneofs_by_name["desc"].fields)


def test_an_unset_operator_desc_is_answered_clearly(client: dmlrpc.Client) -> None:
    # With every mirrored type executable, what remains is a desc without a case, which the SDK refuses before
    # sending (the server's INVALID_ARGUMENT for it and its UNIMPLEMENTED for a case newer than its proto are
    # tested over raw bytes in tests/test_validation.py).
    with pytest.raises(dmlrpc.ArgumentValueError, match="no operator desc set"):
        client.execute(operators_pb2.OperatorDesc(), [])


# -- the SDK's typed calls ------------------------------------------------------------------------------------------


def test_sdk_element_wise_broadcasts_like_numpy(client: dmlrpc.Client) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(client.element_wise("add", a, b), a + b)
    np.testing.assert_array_equal(client.element_wise("logical_greater_than", a, b), (a > b).astype(np.uint8))
    np.testing.assert_array_equal(client.element_wise("identity", b, scale_bias=(2.0, 1.0)), 2 * b + 1)
    relu = dmlrpc.ops.activation("relu").operator_desc
    np.testing.assert_array_equal(client.element_wise("add1", -a, b, fused_activation=relu), np.maximum(b - a, 0))


def test_sdk_activation_with_axes(client: dmlrpc.Client) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = client.activation("softmax1", x, axes=[0])
    np.testing.assert_allclose(got, np.exp(x) / np.exp(x).sum(axis=0, keepdims=True), rtol=1e-6)
    with pytest.raises(dmlrpc.ArgumentValueError, match="has no attribute 'gamma'"):
        client.activation("relu", x, gamma=1.0)


#: ONNX's test_logsoftmax_large_number, and rows larger still: exact only where the max is subtracted first.
LARGE_INPUTS = np.array(
    [[0, 1, 2, 3], [10000, 10001, 10002, 10003], [-1e6 + i for i in range(4)], [1e6 + i for i in range(4)]],
    np.float32,
)


def check_log_softmax_of_large_inputs(client: dmlrpc.Client) -> None:
    """LOG_SOFTMAX and LOG_SOFTMAX1 of rows near 10^4 and 10^6 against NumPy in FLOAT64: every row's answer is
    that of [0, 1, 2, 3]. (ONNX Runtime's CUDA LogSoftmax was 2.4e-4 off at 10^4: it subtracted max + log(sum) in
    FLOAT32.)"""
    wide = LARGE_INPUTS.astype(np.float64)
    shifted = wide - wide.max(axis=-1, keepdims=True)
    expected = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    for output in (
        client.activation("log_softmax", LARGE_INPUTS),
        client.activation("log_softmax1", LARGE_INPUTS, axes=[1]),
    ):
        np.testing.assert_allclose(output, expected, rtol=0, atol=1e-6)


def test_log_softmax_of_large_inputs_subtracts_the_max_first(client: dmlrpc.Client) -> None:
    check_log_softmax_of_large_inputs(client)


#: Values where an approximate asin shows: 0 and tiny values (asin(x) ~ x), both sides of 1/2, the ends, and
#: outside the domain.
ASIN_EDGES = [0.0, 1e-30, 1e-7, 1e-4, -1e-3, 0.25, 0.5, -0.5, 0.5000001, 0.7, 0.99, 1.0, -1.0, 1.0000001, -2.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_asin_as_lowered_for_directml_is_within_three_ulp(dtype: type) -> None:
    # The DirectML lowering computes asin from products, sums and a square root (the device's own asin may be a
    # coarse polynomial); run here on the CPU provider, it must be as exact as asin itself, near 0 too.
    x = np.concatenate([ASIN_EDGES, np.random.default_rng(3).uniform(-1, 1, 20_000)]).astype(dtype)
    (result,), model = run_directml_lowering(dmlrpc.ops.element_wise("asin", x))
    assert "Asin" not in {node.op_type for node in model.graph.node}
    assert result is not None and result.dtype == dtype
    with np.errstate(invalid="ignore"):
        expected = np.arcsin(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    finite = ~np.isnan(expected)
    error = np.abs(result[finite].astype(np.float64) - expected[finite])
    assert np.all(error <= 3 * np.spacing(np.abs(expected[finite]).astype(dtype)).astype(np.float64))
