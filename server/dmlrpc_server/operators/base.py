"""The operator contract: tensor fields from the proto schema, support tables by feature level, and plans."""

from __future__ import annotations

import abc
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

import numpy as np
import onnx
from google.protobuf.message import Message

from dmlrpc.codec import TensorLayout, over_request_limits
from dmlrpc.schema import TensorField, snake_case, tensor_fields
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.errors import InvalidArgument, ResourceExhausted
from dmlrpc_server.feature_levels import parse_feature_level

# NOTE: the runtime compiles what this module describes and imports nothing else of operators/: BatchRule is
# re-exported as part of that contract.
from dmlrpc_server.operators import pages
from dmlrpc_server.operators._batching import BatchRule as BatchRule
from dmlrpc_server.settings import PROVIDERS
from dmlrpc_server.tensors import TensorRule, validate_tensor

DescT = TypeVar("DescT", bound=Message)
T = TypeVar("T")

#: ONNX opset and IR version of every lowered model: old enough for every ONNX Runtime build we support
#: (onnxruntime-directml included), new enough for ScatterElements/ScatterND without reduction quirks.
ONNX_OPSET = 17
ONNX_IR_VERSION = 8

SupportTable = Mapping[str, TensorRule]


def support_table(tensors: Mapping[str, pages.Tensor]) -> SupportTable:
    """One page table's rows keyed by proto field name."""
    return {
        snake_case(field): TensorRule.of(
            (row["dims"][0], row["dims"][1]),
            {tensor_pb2.TensorDataType.Value(f"TENSOR_DATA_TYPE_{name}") for name in row["types"]},
        )
        for field, row in tensors.items()
    }


def support_from(page: pages.Page) -> tuple[tuple[int, SupportTable], ...]:
    """A page's tensor-support tables keyed by proto field name, ascending by feature level (the page data's
    corrections applied: where DirectML.h introduces a type at another level than the page, its oldest table
    applies from the header's level)."""
    return tuple((parse_feature_level(table["level"]), support_table(table["tensors"])) for table in page["support"])


@dataclass(frozen=True)
class Limits:
    """Size limits applied while planning (from the server settings)."""

    max_tensor_bytes: int
    max_request_bytes: int
    max_message_bytes: int
    max_tensor_elements: int = 1 << 32
    max_request_elements: int = 1 << 33
    #: Element-operations one run may cost (``runtime.cost.model_work``).
    max_work: int = 1 << 36
    #: Bytes of the tensors one run may hold at once (inputs as read, intermediates, outputs): the server's
    #: --call-memory-bytes, as one call may use it all.
    max_run_bytes: int = 1 << 30


@dataclass(frozen=True)
class Tensors:
    """The validated layouts of a desc's tensor fields; ``None`` for an unset optional tensor."""

    path: str
    layouts: Mapping[str, TensorLayout | None]
    #: The ONNX Runtime execution provider the lowering targets (kernels differ in the types they take).
    provider: str = PROVIDERS["cpu"]
    #: The feature level whose rules apply.
    feature_level: int = operators_pb2.FEATURE_LEVEL_6_4
    #: The layouts of each tensor-array field (``repeated TensorDesc``), in order.
    arrays: Mapping[str, tuple[TensorLayout, ...]] = dataclasses.field(default_factory=dict)
    #: The server's limits: a lowering that builds large tables checks what it would make before making it.
    limits: Limits | None = None

    def __getitem__(self, name: str) -> TensorLayout:
        layout = self.layouts[name]
        if layout is None:  # pragma: no cover - operators only ask for required tensors
            raise KeyError(name)
        return layout

    def field(self, name: str) -> str:
        """The request path of a field of the desc."""
        return f"{self.path}.{name}"

    @property
    def on_directml(self) -> bool:
        """Whether the lowering targets DirectML (whose kernels and devices differ: 64-bit integers, precision)."""
        return self.provider == PROVIDERS["directml"]


#: ``Plan.prepare``: the decoded input arrays (binding order, ``None`` for absent ones) -> the model's feeds.
Prepare = Callable[[Sequence[np.ndarray | None]], dict[str, np.ndarray]]
#: ``Plan.finish``: the model's outputs -> arrays shaped as the output tensors (binding order).
Finish = Callable[[Sequence[np.ndarray]], list[np.ndarray | None]]
#: How a packed input buffer is viewed: its dtype, sizes and total bytes (``Plan.packed_inputs``).
PackedInput = tuple[np.dtype[np.generic], tuple[int, ...], int]
#: What a packed output buffer must be: its dtype and bytes (``Plan.packed_outputs``).
PackedOutput = tuple[np.dtype[np.generic], int]


def _feed_inputs(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:  # pragma: no cover - replaced
    """The marker default of ``Plan.prepare``: ``Plan.__post_init__`` replaces it with the default feeds."""
    raise NotImplementedError


def same_outputs(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
    """The default ``Plan.finish``: the model's outputs are the output tensors, in order."""
    return list(outputs)


def _each_packed(
    layouts: Sequence[TensorLayout | None], describe: Callable[[TensorLayout], T | None]
) -> tuple[T | None, ...] | None:
    """What ``describe`` makes of each set layout (``None`` for an unset tensor), or ``None`` when it refuses one."""
    described: list[T | None] = []
    for layout in layouts:
        item = None if layout is None else describe(layout)
        if layout is not None and item is None:
            return None
        described.append(item)
    return tuple(described)


def _input_view(layout: TensorLayout) -> PackedInput | None:
    return (layout.dtype, layout.sizes, layout.total_bytes) if layout.is_packed else None


def _output_buffer(layout: TensorLayout) -> PackedOutput | None:
    unpadded = layout.is_packed and layout.total_bytes == layout.packed_bytes > 0
    return (layout.dtype, layout.total_bytes) if unpadded else None


@dataclass
class Plan:
    """Everything about one operator desc that does not depend on the bound data.

    ``prepare`` turns the decoded input arrays (binding order, ``None`` for absent ones) into the model's feeds,
    checking data-dependent rules (index ranges, overlapping writes); ``finish`` turns the model's outputs into
    arrays shaped as the output tensors (binding order). Both have defaults: ``prepare`` feeds every set input,
    contiguous and of its layout's type, under its name in ``direct_inputs`` or else under the model's graph
    inputs in order; ``finish`` returns the model's outputs as they are. ``Plan.direct`` also marks both as
    pass-through, for the operators whose bridges do nothing else.
    """

    inputs: tuple[TensorLayout | None, ...]
    outputs: tuple[TensorLayout | None, ...]
    model: onnx.ModelProto
    prepare: Prepare = _feed_inputs
    finish: Finish = same_outputs
    #: Per input, the feed name when ``prepare`` passes that input to the model unchanged and unchecked (so a
    #: device-resident tensor can be bound as it is and ``prepare`` may be given ``None`` for it); else ``None``.
    direct_inputs: tuple[str | None, ...] = ()
    #: Whether ``finish`` returns the model's outputs unchanged (so outputs can stay in device memory).
    direct_outputs: bool = False
    #: Per input tensor field: ``None`` for a single tensor, else the length of its tensor array. ``inputs`` (and
    #: ``prepare``'s arrays) hold each array's tensors in place, one after another. Empty: no arrays.
    input_arrays: tuple[int | None, ...] = ()
    #: The same for the output tensor fields (``outputs`` and ``finish``'s results).
    output_arrays: tuple[int | None, ...] = ()
    #: The arrays of the model's initializers that hold no data of their own (``add_constants``), by name: every
    #: session of the model is given them.
    external: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    #: Per input, how its buffer is viewed (``None``: an unset tensor), when every set input is a packed buffer and
    #: none is in a tensor array; else ``None``. Resolved once here, so that binding a call looks nothing up per input.
    packed_inputs: tuple[PackedInput | None, ...] | None = dataclasses.field(init=False, repr=False)
    #: The same for the outputs, when every set output is packed without padding and holds some bytes: its array
    #: from ``finish`` is then sent as it is, once its dtype and size are checked.
    packed_outputs: tuple[PackedOutput | None, ...] | None = dataclasses.field(init=False, repr=False)
    #: Per input, its feed's name (``None``: not fed) when ``prepare`` is the default, which feeds each set input as
    #: it is once contiguous and of its layout's type: a packed buffer's view already is. Else ``None``.
    plain_feeds: tuple[str | None, ...] | None = dataclasses.field(init=False, repr=False, default=None)
    #: Whether ``finish`` is the default, which returns the model's outputs as they are (then not called).
    plain_outputs: bool = dataclasses.field(init=False, repr=False, default=False)

    def __post_init__(self) -> None:
        self.packed_inputs = None if self.input_arrays else _each_packed(self.inputs, _input_view)
        self.packed_outputs = None if self.output_arrays else _each_packed(self.outputs, _output_buffer)
        self.plain_outputs = self.finish is same_outputs
        if self.prepare is _feed_inputs:
            names = self.plain_feeds = self.direct_inputs or self._feed_names(self.inputs, self.model)
            layouts = self.inputs

            def feed_inputs(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
                return {
                    name: np.ascontiguousarray(array, dtype=layout.dtype)
                    for name, array, layout in zip(names, arrays, layouts, strict=True)
                    if name is not None and array is not None and layout is not None
                }

            self.prepare = feed_inputs

    @classmethod
    def direct(
        cls, inputs: tuple[TensorLayout | None, ...], outputs: tuple[TensorLayout | None, ...], model: onnx.ModelProto
    ) -> Plan:
        """A plan whose model takes the set inputs as they are (its graph inputs, in order) and whose outputs are
        the output tensors: both bridges pass through, so inputs and outputs may stay in device memory."""
        return cls(inputs, outputs, model, direct_inputs=cls._feed_names(inputs, model), direct_outputs=True)

    @staticmethod
    def _feed_names(inputs: tuple[TensorLayout | None, ...], model: onnx.ModelProto) -> tuple[str | None, ...]:
        """Per input, the model's graph input that takes it: the graph inputs in order, one per set input."""
        names = [value.name for value in model.graph.input]
        if len(names) != sum(layout is not None for layout in inputs):
            raise ValueError(f"{len(names)} graph inputs for {len(inputs)} input fields, not one per set input")
        feeds = iter(names)
        return tuple(None if layout is None else next(feeds) for layout in inputs)

    def group_outputs(self, flat: Sequence[T]) -> list[T | list[T]]:
        """Per-output items (``finish``'s order, arrays in place) grouped per output field: a list for an array."""
        if not self.output_arrays:
            return list(flat)
        grouped: list[T | list[T]] = []
        position = 0
        for count in self.output_arrays:
            if count is None:
                grouped.append(flat[position])
                position += 1
            else:
                grouped.append(list(flat[position : position + count]))
                position += count
        return grouped

    @functools.cached_property
    def response_bytes(self) -> int:
        """The bytes of every output buffer (checked against the message limit on every unary call: made once)."""
        return sum(layout.total_bytes for layout in self.outputs if layout is not None)


class Operator(abc.ABC, Generic[DescT]):
    """One executable DirectML operator: validation, output rules and ONNX lowering of its desc."""

    #: The case name in ``OperatorDesc.desc`` (the registry key).
    case: ClassVar[str]
    #: Tensor-support tables, each with the feature level from which it applies (ascending): by default its page's
    #: (``operators/pages/<family>.json``, the page named as the case), read when the class is made.
    support: ClassVar[tuple[tuple[int, SupportTable], ...]]
    inputs: ClassVar[tuple[TensorField, ...]]
    outputs: ClassVar[tuple[TensorField, ...]]
    #: How requests of one desc run as a batch; ``None``: each runs alone.
    batching: ClassVar[BatchRule | None] = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "case" not in cls.__dict__:
            return  # a family base: concrete operators name their case
        oneof = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name.get(cls.case)
        if oneof is None or oneof.message_type is None:
            raise TypeError(f"{cls.__name__}.case {cls.case!r} is not a case of OperatorDesc.desc")
        cls.inputs, cls.outputs = tensor_fields(oneof.message_type)
        if "support" not in cls.__dict__:
            cls.support = support_from(pages.page(cls.case.upper()))
        for _, table in cls.support:
            names = {f.name for f in (*cls.inputs, *cls.outputs)}
            if set(table) != names:
                raise TypeError(
                    f"{cls.__name__}: support table fields {sorted(table)} != tensor fields {sorted(names)}"
                )

    @property
    def type_name(self) -> str:
        """The DML_OPERATOR_TYPE name without its prefix ("TOP_K1"), which also names the operator's page."""
        return self.case.upper()

    @property
    def operator_type(self) -> int:
        return operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name[self.case].number

    @property
    def introduced(self) -> int:
        return self.support[0][0]

    def support_at(self, feature_level: int) -> SupportTable | None:
        """The support table that applies at a feature level, or ``None`` before the operator existed."""
        chosen = None
        for level, table in self.support:
            if level <= feature_level:
                chosen = table
        return chosen

    def plan(self, desc: DescT, *, feature_level: int, limits: Limits, provider: str = PROVIDERS["cpu"]) -> Plan:
        """Validate a desc (generic tensor rules, support table, operator rules) and lower it."""
        table = self.support_at(feature_level)
        if table is None:  # pragma: no cover - the registry refuses such operators first
            raise InvalidArgument(f"operator_desc.{self.case}", "operator not available at this feature level")
        path = f"operator_desc.{self.case}"
        layouts: dict[str, TensorLayout | None] = {}
        arrays: dict[str, tuple[TensorLayout, ...]] = {}
        total = elements = 0
        for tensor in (*self.inputs, *self.outputs):
            if tensor.array:
                descs = getattr(desc, tensor.name)
                if not descs:
                    raise InvalidArgument(f"{path}.{tensor.name}", "a tensor array needs at least one tensor desc")
                checked = tuple(
                    validate_tensor(
                        item,
                        f"{path}.{tensor.name}[{i}]",
                        table[tensor.name],
                        output=tensor.output,
                        max_tensor_bytes=limits.max_tensor_bytes,
                        max_tensor_elements=limits.max_tensor_elements,
                    )
                    for i, item in enumerate(descs)
                )
                arrays[tensor.name] = checked
                total += sum(layout.total_bytes for layout in checked)
                elements += sum(layout.element_count for layout in checked)
                continue
            if not desc.HasField(tensor.name):
                if not tensor.optional:
                    raise InvalidArgument(f"{path}.{tensor.name}", "required tensor desc is not set")
                layouts[tensor.name] = None
                continue
            layout = validate_tensor(
                getattr(desc, tensor.name),
                f"{path}.{tensor.name}",
                table[tensor.name],
                output=tensor.output,
                max_tensor_bytes=limits.max_tensor_bytes,
                max_tensor_elements=limits.max_tensor_elements,
            )
            layouts[tensor.name] = layout
            total += layout.total_bytes
            elements += layout.element_count
        over = over_request_limits(
            total,
            elements,
            max_request_bytes=limits.max_request_bytes,
            max_request_elements=limits.max_request_elements,
        )
        if over is not None:
            raise ResourceExhausted(over)
        tensors = Tensors(path, layouts, provider, feature_level, arrays, limits)
        return self.lower(desc, tensors)

    @abc.abstractmethod
    def lower(self, desc: DescT, tensors: Tensors) -> Plan:
        """Check the operator's own rules and lower the desc to an ONNX model with its feed/result bridges."""


def make_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    initializers: Sequence[onnx.TensorProto] = (),
    opset: int | None = None,
) -> onnx.ModelProto:
    """A one-graph ONNX model at the project's pinned opset (or a newer one a node needs) and IR version."""
    # NOTE: filled in place, not through onnx.helper.make_graph and make_model: those copy the graph twice, which
    # holds the GIL while the event loop waits when the graph is large.
    model = onnx.ModelProto(ir_version=ONNX_IR_VERSION, producer_name="dmlrpc")
    model.opset_import.append(onnx.helper.make_opsetid("", max(opset or 0, ONNX_OPSET)))
    graph = model.graph
    graph.name = "dmlrpc"
    graph.node.extend(nodes)
    graph.input.extend(inputs)
    graph.output.extend(outputs)
    graph.initializer.extend(initializers)
    return model


#: Constants of more bytes than this stay beside the model (``Plan.external``) rather than in it.
EXTERNAL_CONSTANT_BYTES = 1 << 20


def add_constants(model: onnx.ModelProto, constants: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Add ``constants`` to ``model`` as initializers of their names; return those over ``EXTERNAL_CONSTANT_BYTES``,
    whose initializers name data kept beside the model (``Plan.external``), contiguous and little-endian."""
    # NOTE: a constant of tens of MiB inside the model is copied whole, holding the GIL, each time protobuf
    # serializes the model and each time ONNX Runtime's constructor reads it (about 100 ms per compile of a 32 MiB
    # graph constant here). Beside it, ONNX Runtime takes the array's memory as it is.
    external: dict[str, np.ndarray] = {}
    for name, array in constants.items():
        data = np.ascontiguousarray(array, array.dtype.newbyteorder("<"))
        initializer = model.graph.initializer.add()
        initializer.name = name
        initializer.data_type = onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
        initializer.dims.extend(array.shape)
        if data.nbytes <= EXTERNAL_CONSTANT_BYTES:
            initializer.raw_data = data.tobytes()
            continue
        # ONNX Runtime replaces an initializer of external data with the array given under its name
        # (``SessionOptions.add_external_initializers``); the location is only a label.
        initializer.data_location = onnx.TensorProto.EXTERNAL
        initializer.external_data.add(key="location", value=name)
        external[name] = data
    return external


def value_info(name: str, dtype: np.dtype[np.generic], shape: Sequence[int]) -> onnx.ValueInfoProto:
    """A graph input/output of a fixed shape (DirectML's EP prefers fixed shapes)."""
    return onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(dtype), list(shape))


def require(condition: bool, field: str, description: str) -> None:
    """Raise InvalidArgument(field, description) unless ``condition`` holds."""
    if not condition:
        raise InvalidArgument(field, description)
