"""The transport-free half of both clients: requests from descs and arrays, arrays from responses."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import (
    ELEMENT_BITS,
    TensorLayout,
    decode,
    encode,
    over_element_bound,
    over_request_limits,
    over_tensor_limits,
    packed_bytes,
)
from dmlrpc.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    FieldViolation,
    InvalidArgumentError,
    MalformedResponseError,
    ResourceExhaustedError,
)
from dmlrpc.schema import check_input_count, desc_case, tensor_fields
from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2
from dmlrpc.wire import CHUNK_BYTES, decode_chunk, encode_chunk


class Resident:
    """What a resident-tensor handle object offers a binding: its handle and desc (``dmlrpc.ResidentTensor``)."""

    handle: str
    desc: tensor_pb2.TensorDesc


#: Binding input: an array (laid out per its tensor desc), raw buffer bytes, a resident tensor, or None.
InputValue = npt.ArrayLike | bytes | Resident | None


@dataclass(frozen=True)
class PreparedCall:
    """An operator desc with its input buffers encoded, and how to decode its outputs."""

    operator_desc: operators_pb2.OperatorDesc
    #: Each input's buffer: bytes, a view of the caller's array when it already has the desc's layout, or the
    #: handle (str) of a resident tensor.
    inputs: tuple[bytes | memoryview | str | None, ...]
    outputs: tuple[TensorLayout | None, ...]
    #: Output indices to keep on the server as resident tensors.
    keep: tuple[int, ...] = ()
    #: Per input tensor field: ``None`` for a single tensor, else its tensor array's length (``inputs`` holds the
    #: array's buffers in place). Empty: no arrays.
    input_arrays: tuple[int | None, ...] = ()
    #: DML_EXECUTION_FLAGS bits the desc is compiled with (``ExecutionFlags``).
    execution_flags: int = 0

    @property
    def request(self) -> service_pb2.ExecuteRequest:
        """The unary request."""
        if not self.input_arrays:
            bindings = [_binding(data) for data in self.inputs]
        else:
            bindings = []
            position = 0
            for count in self.input_arrays:
                if count is None:
                    bindings.append(_binding(self.inputs[position]))
                    position += 1
                    continue
                buffers = [
                    service_pb2.BufferBinding(data=bytes(data or b""))  # type: ignore[arg-type]
                    for data in self.inputs[position : position + count]
                ]
                bindings.append(
                    service_pb2.BindingDesc(
                        buffer_array=service_pb2.BufferArrayBinding(binding_count=count, bindings=buffers)
                    )
                )
                position += count
        return service_pb2.ExecuteRequest(
            operator_desc=self.operator_desc,
            inputs=bindings,
            keep_outputs=self.keep,
            execution_flags=self.execution_flags,
        )

    @property
    def resident(self) -> bool:
        """Whether the call binds or keeps resident tensors (only the unary Execute does)."""
        return bool(self.keep) or any(isinstance(data, str) for data in self.inputs)

    @property
    def largest_buffer(self) -> int:
        """The largest input or output buffer in bytes (what decides between Execute and ExecuteStream)."""
        sizes = [len(data) for data in self.inputs if isinstance(data, bytes | memoryview)]
        sizes += [
            layout.total_bytes for i, layout in enumerate(self.outputs) if layout is not None and i not in self.keep
        ]
        return max(sizes, default=0)

    def stream_requests(self, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
        """The ExecuteStream messages as wire bytes: the start, then each input buffer in chunks."""
        yield service_pb2.ExecuteStreamRequest(
            start=service_pb2.ExecuteStreamStart(
                operator_desc=self.operator_desc,
                input_bytes=[0 if data is None else len(data) for data in self.inputs],
                execution_flags=self.execution_flags,
            )
        ).SerializeToString()
        for index, data in enumerate(self.inputs):
            if data is None or isinstance(data, str):
                continue
            view = memoryview(data)
            for offset in range(0, len(view), chunk_bytes):
                yield encode_chunk(index, view[offset : offset + chunk_bytes])


class StreamedOutputs:
    """Reassembles ExecuteStream answers into output arrays (each buffer preallocated from the declared length)."""

    def __init__(self, layouts: Sequence[TensorLayout | None]) -> None:
        self._layouts = layouts
        self._buffers: list[np.ndarray | None] | None = None
        self._filled: list[int] = []

    def add(self, message: bytes) -> None:
        """Take one ExecuteStream answer message (wire bytes)."""
        chunk = decode_chunk(message)
        if chunk is None:
            part = service_pb2.ExecuteStreamResponse.FromString(message)
            if part.WhichOneof("part") == "outputs":
                lengths = list(part.outputs.output_bytes)
                # NOTE: np.empty, not bytearray: every byte is written by a chunk, so zeroing first is wasted.
                self._buffers = [np.empty(n, np.uint8) if n else None for n in lengths]
                self._filled = [0] * len(lengths)
                return
            chunk = part.chunk.binding, memoryview(part.chunk.data)
        if self._buffers is None:
            raise MalformedResponseError("malformed ExecuteStream answer: chunks before the outputs header")
        index, data = chunk
        target = self._buffers[index] if index < len(self._buffers) else None
        if target is None or self._filled[index] + len(data) > len(target):
            raise MalformedResponseError(f"malformed ExecuteStream answer: too many bytes for output {index}")
        target[self._filled[index] : self._filled[index] + len(data)] = np.frombuffer(data, np.uint8)
        self._filled[index] += len(data)

    def arrays(self) -> list[np.ndarray | None]:
        if self._buffers is None:
            raise MalformedResponseError("malformed ExecuteStream answer: no outputs header")
        results: list[np.ndarray | None] = []
        for index, layout in enumerate(self._layouts):
            buffer = self._buffers[index] if index < len(self._buffers) else None
            if layout is None or buffer is None:
                results.append(None)
                continue
            if self._filled[index] != len(buffer):
                raise MalformedResponseError(f"malformed ExecuteStream answer: output {index} is incomplete")
            results.append(decode(buffer, layout))
        return results


def _binding(data: bytes | memoryview | str | None) -> service_pb2.BindingDesc:
    if data is None:
        return service_pb2.BindingDesc()
    if isinstance(data, str):
        return service_pb2.BindingDesc(resident=service_pb2.ResidentTensor(handle=data))
    return service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=bytes(data)))


def kept_outputs(keep: bool | Sequence[int] | None, outputs: Sequence[TensorLayout | None]) -> tuple[int, ...]:
    """``keep=True``: every set output; a sequence: those output indices; ``None``/``False``: none."""
    if keep is None or keep is False:
        return ()
    if keep is True:
        return tuple(i for i, layout in enumerate(outputs) if layout is not None)
    return tuple(keep)


def prepare_execute(
    operator_desc: operators_pb2.OperatorDesc,
    inputs: Sequence[InputValue],
    keep: bool | Sequence[int] | None = None,
    execution_flags: int = 0,
    limits: service_pb2.Limits | None = None,
) -> PreparedCall:
    """Encode ``inputs`` per the desc's input tensor descs and note how to decode its outputs; a desc the server
    would refuse for its tensors' sizes (``check_sizes``) is refused first, before anything is encoded."""
    check_sizes(operator_desc, limits)
    case = desc_case(operator_desc)
    desc = getattr(operator_desc, case)
    input_fields, output_fields = tensor_fields(desc.DESCRIPTOR)
    check_input_count(case, input_fields, len(inputs))
    has_arrays = any(field.array for field in (*input_fields, *output_fields))
    if has_arrays and keep:
        raise ArgumentValueError("keep", f"{case} has tensor-array fields, whose outputs cannot be kept on the server")
    bindings: list[bytes | memoryview | str | None] = []
    for position, (field, value) in enumerate(zip(input_fields, inputs, strict=True)):
        argument = f"inputs[{position}]"
        if field.array:
            descs = getattr(desc, field.name)
            values = list(value) if isinstance(value, list | tuple) else None
            if values is None or len(values) != len(descs):
                raise ArgumentValueError(
                    argument,
                    f"{case}.{field.name} is a tensor array of {len(descs)} tensor descs: pass a list of as many "
                    "arrays",
                )
            for i, (item, tensor) in enumerate(zip(values, descs, strict=True)):
                if isinstance(item, Resident) or item is None:
                    raise ArgumentTypeError(
                        f"{argument}[{i}]", f"{case}.{field.name}[{i}]: a tensor array binds arrays or bytes only"
                    )
                bindings.append(
                    item
                    if isinstance(item, bytes)
                    else _input_buffer(item, tensor.buffer, f"{argument}[{i}]", f"{case}.{field.name}[{i}]")
                )
            continue
        if value is None or not desc.HasField(field.name):
            if value is not None:
                raise ArgumentValueError(argument, f"{case}.{field.name} is unset, so its input must be None")
            bindings.append(None)
            continue
        if isinstance(value, Resident):
            bindings.append(value.handle)
            continue
        tensor = getattr(desc, field.name)
        bindings.append(
            value if isinstance(value, bytes) else _input_buffer(value, tensor.buffer, argument, f"{case}.{field.name}")
        )
    outputs: list[TensorLayout | None] = []
    for f in output_fields:
        if f.array:
            outputs.extend(_layout(tensor.buffer, f"{case}.{f.name}") for tensor in getattr(desc, f.name))
        else:
            outputs.append(_layout(getattr(desc, f.name).buffer, f"{case}.{f.name}") if desc.HasField(f.name) else None)
    input_arrays = tuple(len(getattr(desc, f.name)) if f.array else None for f in input_fields) if has_arrays else ()
    return PreparedCall(
        operator_desc,
        tuple(bindings),
        tuple(outputs),
        kept_outputs(keep, tuple(outputs)),
        input_arrays,
        execution_flags,
    )


def check_sizes(operator_desc: operators_pb2.OperatorDesc, limits: service_pb2.Limits | None = None) -> None:
    """Refuse a desc whose tensors a server refuses for their sizes, with the server's own message: DirectML's bound
    of 2^32 - 1 elements per tensor always, and the server's size limits as ``GetCapabilities`` publishes them
    (``limits``; a limit it leaves 0 is not checked). Costs a pass over the descs' sizes, nothing per element: a
    broadcast of 10^10 elements is refused before its first byte is laid out.

    Raises:
        InvalidArgumentError: a tensor has more elements than DirectML allows (the field names its ``sizes``).
        ResourceExhaustedError: a tensor, or all of them together, over one of ``limits``.
    """
    case = desc_case(operator_desc)
    desc = getattr(operator_desc, case)
    input_fields, output_fields = tensor_fields(desc.DESCRIPTOR)
    unbounded = 1 << 64
    total = elements = 0
    for field in (*input_fields, *output_fields):
        if field.array:
            tensors = [(f"operator_desc.{case}.{field.name}[{i}]", t) for i, t in enumerate(getattr(desc, field.name))]
        elif desc.HasField(field.name):
            tensors = [(f"operator_desc.{case}.{field.name}", getattr(desc, field.name))]
        else:
            continue
        for path, tensor in tensors:
            buffer = tensor.buffer
            count = 1
            for size in buffer.sizes:
                count *= size
            too_many = over_element_bound(count)
            if too_many is not None:
                violation = FieldViolation(f"{path}.buffer.sizes", too_many)
                raise InvalidArgumentError(f"{violation.field}: {too_many}", field_violations=(violation,))
            if limits is None:
                continue
            over = over_tensor_limits(
                f"{path}.buffer",
                buffer.total_tensor_size_in_bytes,
                count,
                max(1, ELEMENT_BITS.get(buffer.data_type, 8) // 8),
                max_tensor_bytes=limits.max_tensor_bytes or unbounded,
                max_tensor_elements=limits.max_tensor_elements or unbounded,
            )
            if over is not None:
                raise ResourceExhaustedError(over)
            total += buffer.total_tensor_size_in_bytes
            elements += count
    if limits is not None:
        over = over_request_limits(
            total,
            elements,
            max_request_bytes=limits.max_request_bytes or unbounded,
            max_request_elements=limits.max_request_elements or unbounded,
        )
        if over is not None:
            raise ResourceExhaustedError(over)


def _input_buffer(value: npt.ArrayLike, buffer: object, argument: str, name: str) -> bytes | memoryview:
    """An input's buffer laid out per its desc; an array of another shape is the caller's argument error."""
    layout = _layout(buffer, name)
    try:
        return _buffer(value, layout)
    except ValueError as error:  # encode's shape check, or a value that does not convert to the desc's dtype
        raise ArgumentValueError(argument, f"{name}: {error}") from None


def _buffer(value: npt.ArrayLike, layout: TensorLayout) -> bytes | memoryview:
    """The buffer for an input: a view of the array's own memory when it already is the layout, else a copy."""
    if isinstance(value, np.ndarray) and value.shape in (layout.sizes, ()):
        view = packed_bytes(value, layout)
        if view is not None:
            return view
    return encode(value, layout)


def _layout(buffer: object, name: str) -> TensorLayout:
    try:
        return TensorLayout.of(buffer)  # type: ignore[arg-type]
    except KeyError:
        raise ArgumentTypeError(name, f"{name} has a data type NumPy cannot hold; pass its buffer as bytes") from None


def decode_outputs(
    response: service_pb2.ExecuteResponse, layouts: Sequence[TensorLayout | None]
) -> list[np.ndarray | None]:
    """Read-only arrays viewing the response's output buffers (no copy), ``None`` for absent outputs; a tensor
    array's buffers in place, one array each."""
    results: list[np.ndarray | None] = []
    for binding, layout in zip(flat_bindings(response.outputs), layouts, strict=False):
        if layout is None or binding.WhichOneof("binding") != "buffer":
            results.append(None)
            continue
        results.append(decode(binding.buffer.data, layout))
    return results


def flat_bindings(bindings: Sequence[service_pb2.BindingDesc]) -> list[service_pb2.BindingDesc]:
    """Response bindings with each buffer array expanded in place into buffer bindings."""
    if not any(binding.WhichOneof("binding") == "buffer_array" for binding in bindings):
        return list(bindings)
    flat: list[service_pb2.BindingDesc] = []
    for binding in bindings:
        if binding.WhichOneof("binding") == "buffer_array":
            flat.extend(service_pb2.BindingDesc(buffer=part) for part in binding.buffer_array.bindings)
        else:
            flat.append(binding)
    return flat


class TensorReader:
    """Reassembles ReadTensor answers (wire bytes) into the tensor's desc and an owned array."""

    def __init__(self) -> None:
        self.tensor: service_pb2.ResidentTensor | None = None
        self._buffer: np.ndarray | None = None
        self._filled = 0

    def add(self, message: bytes) -> None:
        chunk = decode_chunk(message)
        if chunk is None:
            part = service_pb2.ReadTensorResponse.FromString(message)
            if part.WhichOneof("part") == "tensor":
                self.tensor = part.tensor
                self._buffer = np.empty(part.tensor.desc.buffer.total_tensor_size_in_bytes, np.uint8)
                return
            chunk = part.chunk.binding, memoryview(part.chunk.data)
        if self._buffer is None:
            raise MalformedResponseError("malformed ReadTensor answer: chunks before the tensor")
        _, data = chunk
        end = self._filled + len(data)
        if end > len(self._buffer):
            raise MalformedResponseError("malformed ReadTensor answer: more bytes than the desc holds")
        self._buffer[self._filled : end] = np.frombuffer(data, np.uint8)
        self._filled = end

    def array(self) -> np.ndarray:
        if self.tensor is None or self._buffer is None or self._filled != len(self._buffer):
            raise MalformedResponseError("malformed ReadTensor answer: incomplete")
        return decode(self._buffer, _layout(self.tensor.desc.buffer, "tensor.desc"))


def create_requests(
    array: npt.ArrayLike | None, desc: tensor_pb2.TensorDesc, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[bytes]:
    """The CreateTensor messages as wire bytes: the start, then the buffer in chunks (none when ``array`` is None:
    an uninitialized tensor)."""
    yield service_pb2.CreateTensorRequest(
        start=service_pb2.CreateTensorStart(desc=desc, uninitialized=array is None)
    ).SerializeToString()
    if array is None:
        return
    view = memoryview(_buffer(array, _layout(desc.buffer, "desc")))
    for offset in range(0, len(view), chunk_bytes):
        yield encode_chunk(0, view[offset : offset + chunk_bytes])
