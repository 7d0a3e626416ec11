"""The element-wise family base: DirectML's shared rules (one size for every tensor, broadcasting through strides,
ScaleBias, type groups) and the lowering flow; each operator adds only its function as a few ONNX nodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators._batching import BatchRule
from dmlrpc_server.operators._graph import BOOL, F16, F32, F64, FLOATS, NUMERIC, U8, U16, U32, U64, DType, Graph, Value
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

#: The same-width unsigned type a bitwise function sees a tensor's raw bits as.
_BITS: dict[int, DType] = {1: U8, 2: U16, 4: U32, 8: U64}


@dataclass(frozen=True)
class Context:
    """What a function may need beyond its input values: the desc, the validated tensors and the output."""

    desc: Any
    #: None for a fused activation, whose tensors are the host operator's.
    tensors: Tensors | None
    output: np.dtype[Any]
    feature_level: int
    #: The desc's request path.
    path: str

    def field(self, name: str) -> str:
        return f"{self.path}.{name}"


#: A function lowers the operator's math: its input values (FLOAT16 already widened to FLOAT32) -> its result.
Function = Callable[[Graph, Sequence[Value], Context], Value]
#: Checks of the desc's attributes, before lowering.
Check = Callable[[Any, Context], None]
#: A check of the bound data: the input arrays in binding order.
DataCheck = Callable[[Sequence[np.ndarray | None]], None]


class ElementWise(Operator[Any]):
    """An element-wise or activation operator: every tensor has the output's sizes (inputs broadcast through
    stride-0 dimensions), type groups share a data type, an optional ScaleBias applies to the first input."""

    #: DirectML's operator type name (the page key).
    #: Groups of tensor fields that share one data type; ``None``: all of them.
    same_type: ClassVar[tuple[tuple[str, ...], ...] | None] = None
    #: Fields whose sizes need not equal the output's (per-tensor quantisation parameters).
    free_sizes: ClassVar[frozenset[str]] = frozenset()
    #: The function works on raw bits: tensors are viewed as same-width unsigned integers.
    bitwise: ClassVar[bool] = False
    batching: ClassVar[BatchRule | None] = BatchRule()

    def function(self, graph: Graph, values: Sequence[Value], context: Context) -> Value:
        """The operator's math (set by ``define``)."""
        raise NotImplementedError

    def check(self, desc: Any, context: Context) -> None:
        """Checks of the desc's attributes."""

    def data_check(self, tensors: Tensors) -> DataCheck | None:
        """A check of the bound data, if the operator has data-dependent rules."""
        return None

    def lower(self, desc: Any, tensors: Tensors) -> Plan:
        (output_field,) = self.outputs
        output = tensors[output_field.name]
        present = [(f, tensors.layouts[f.name]) for f in self.inputs]
        for field, layout in present:
            if layout is None or field.name in self.free_sizes:
                continue
            require(
                list(layout.sizes) == list(output.sizes),
                f"{tensors.field(field.name)}.buffer.sizes",
                f"sizes {list(layout.sizes)} must equal {output_field.name}'s sizes {list(output.sizes)} "
                "(element-wise operators broadcast through zero strides, not through sizes)",
            )
        self._check_types(tensors)
        context = Context(desc, tensors, output.dtype, tensors.feature_level, tensors.path)
        self.check(desc, context)

        graph = Graph()
        values: list[Value] = []
        feed_types: list[np.dtype[Any] | None] = []
        for index, (_, layout) in enumerate(present):
            if layout is None:
                feed_types.append(None)
                continue
            dtype = _BITS[layout.dtype.itemsize] if self.bitwise else layout.dtype
            feed_types.append(dtype)
            value = graph.input(f"input{index}", dtype, layout.sizes)
            values.append(graph.cast(value, F32) if value.dtype == F16 else value)
        if "scale_bias" in desc.DESCRIPTOR.fields_by_name and desc.HasField("scale_bias"):
            values[0] = scale_bias(graph, values[0], desc.scale_bias)
        result = self.function(graph, values, context)
        out_type = _BITS[output.dtype.itemsize] if self.bitwise else output.dtype
        graph.output(graph.cast(result, out_type), "output", output.sizes)
        check = self.data_check(tensors)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            if check is not None:
                check(arrays)
            feeds = {}
            for index, (array, dtype) in enumerate(zip(arrays, feed_types, strict=True)):
                if array is not None and dtype is not None:
                    feeds[f"input{index}"] = np.ascontiguousarray(array).view(dtype)
            return feeds

        def finish(results: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            return [results[0].view(output.dtype)]

        inputs = tuple(layout for _, layout in present)
        # Unless the bits are reinterpreted or the data checked, inputs and the output pass through unchanged.
        direct = not self.bitwise and check is None
        direct_inputs = tuple(
            f"input{index}" if direct and dtype is not None else None for index, dtype in enumerate(feed_types)
        )
        return Plan(inputs, (output,), graph.model(), prepare, finish, direct_inputs, not self.bitwise)

    def _check_types(self, tensors: Tensors) -> None:
        groups = self.same_type or (tuple(f.name for f in (*self.inputs, *self.outputs)),)
        for group in groups:
            layouts = [(name, tensors.layouts[name]) for name in group]
            first_name, first = next((n, t) for n, t in layouts if t is not None)
            for name, layout in layouts:
                if layout is not None and layout.data_type != first.data_type:
                    raise InvalidArgument(
                        f"{tensors.field(name)}.buffer.data_type", f"must equal {first_name}'s data type"
                    )


def scale_bias(graph: Graph, value: Value, parameters: operators_pb2.ScaleBias) -> Value:
    """DML_SCALE_BIAS: ``x * Scale + Bias`` before the function. Integer tensors compute it in FLOAT64 and convert
    back truncating toward zero, saturated to the type's range (DirectML's pages do not define this case)."""
    if value.dtype.kind == "f":
        scaled = graph.op("Mul", value, graph.const(parameters.scale, value.dtype))
        return graph.op("Add", scaled, graph.const(parameters.bias, value.dtype))
    wide = graph.cast(value, F64)
    scaled = graph.op(
        "Add", graph.op("Mul", wide, graph.const(parameters.scale, F64)), graph.const(parameters.bias, F64)
    )
    return saturate(graph, scaled, value.dtype)


def saturate(graph: Graph, value: Value, dtype: DType) -> Value:
    """A FLOAT64 value converted to integer ``dtype``: truncated toward zero, saturated to its range, NaN to 0."""
    info = np.iinfo(dtype)
    bool_ = np.dtype(np.bool_)
    value = graph.where(graph.op("IsNaN", value, dtype=bool_), graph.const(0, F64), value)
    # The largest FLOAT64 that converts: a 64-bit maximum itself is not one (2**63 - 1 rounds up to 2**63).
    top = float(info.max) if dtype.itemsize < 8 else float(np.nextafter(np.float64(info.max), 0))
    clipped = graph.op("Clip", value, graph.const(float(info.min), F64), graph.const(top, F64))
    converted = graph.cast(clipped, dtype)
    if dtype.itemsize < 8:
        return converted
    above = graph.op("Greater", value, graph.const(top, F64), dtype=bool_)
    return graph.where(above, graph.const(info.max, dtype), converted)


def _method(function: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: ElementWise, *args: Any) -> Any:
        return function(*args)

    return method


def camel(type_name: str) -> str:
    return "".join(part.capitalize() for part in type_name.split("_"))


def define(
    type_name: str,
    function: Function,
    *,
    base: type[ElementWise] = ElementWise,
    **options: Any,
) -> ElementWise:
    """One operator of the family (its support tables are its page's): its function and any options (ClassVars)."""
    namespace: dict[str, Any] = {
        "case": type_name.lower(),
        "function": _method(function),
    }
    for name, value in options.items():
        namespace[name] = _method(value) if name in ("check", "data_check") else value
    cls = type(camel(type_name), (base,), namespace)
    return cls()  # type: ignore[no-any-return]


def minimum(g: Graph, a: Value, b: Value) -> Value:
    """min(a, b): ONNX Min for floats (NaN propagates); a comparison for integers, because ONNX Runtime's CPU
    Min/Max kernels for INT64 compare truncated 32-bit values (min(-1, -2**31 - 1) gives -1)."""
    if a.dtype.kind == "f":
        return g.op("Min", a, b)
    return g.where(g.kernel("Less", NUMERIC, b, a, dtype=BOOL), b, a)


def maximum(g: Graph, a: Value, b: Value) -> Value:
    """max(a, b), as ``minimum``."""
    if a.dtype.kind == "f":
        return g.op("Max", a, b)
    return g.where(g.kernel("Greater", NUMERIC, b, a, dtype=BOOL), b, a)


def unary(op_type: str, supported: frozenset[DType] = FLOATS) -> Any:
    """The function of a one-input ONNX operator whose kernel takes ``supported`` (other types widen exactly)."""

    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        return g.kernel(op_type, supported, xs[0])

    return function


def binary(op_type: str, supported: frozenset[np.dtype[Any]] = NUMERIC) -> Any:
    """The function of a two-input ONNX operator, as ``unary``."""

    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        return g.kernel(op_type, supported, xs[0], xs[1])

    return function
