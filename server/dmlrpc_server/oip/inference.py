"""ModelInfer's tensors: a request's inputs read into feeds (raw, typed or shared-memory contents) within the
server's limits, and its outputs written back (raw, or into the client's shared memory regions)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from dmlrpc.wire import fields, varint
from dmlrpc_server.errors import InvalidArgument, ResourceExhausted, Unimplemented
from dmlrpc_server.oip.models import Feeds, ModelVersion, RequestLayout, TensorSpec
from dmlrpc_server.oip.protocol import service_pb2
from dmlrpc_server.oip.repository import Repository
from dmlrpc_server.oip.shm import SharedMemory
from dmlrpc_server.oip.tensors import Datatype, element_count, from_contents, from_raw, raw_bytes
from dmlrpc_server.operators.base import Limits

pb = service_pb2


def _tag(message: Any, field: str) -> int:
    """The one-byte tag of a length-delimited field of ``message`` (every ModelInfer field number is below 16)."""
    return int(message.DESCRIPTOR.fields_by_name[field].number) << 3 | 2


_MODEL_NAME = _tag(pb.ModelInferRequest, "model_name")
_MODEL_VERSION = _tag(pb.ModelInferRequest, "model_version")
_ID = _tag(pb.ModelInferRequest, "id")
_INPUT = _tag(pb.ModelInferRequest, "inputs")
_OUTPUT = _tag(pb.ModelInferRequest, "outputs")
_RAW_INPUT = _tag(pb.ModelInferRequest, "raw_input_contents")
_ID_BYTES = bytes((_tag(pb.ModelInferResponse, "id"),))
_RAW_OUTPUT_BYTES = bytes((_tag(pb.ModelInferResponse, "raw_output_contents"),))


@functools.lru_cache(maxsize=1024)
def _raw_entry_head(length: int) -> bytes:
    """What goes in front of ``length`` bytes of a raw output entry: its tag and length (a model's outputs have the
    same few lengths)."""
    return _RAW_OUTPUT_BYTES + varint(length)


_EMPTY = memoryview(b"")
#: The longest inputs-and-outputs fields whose layout a model version keeps (a request's metadata is a few dozen
#: bytes; longer ones are read again each time rather than held).
LAYOUT_KEY_BYTES = 4096


@dataclass(eq=False, slots=True)
class Inference:
    """One ModelInfer request (or stream item) on its way through the stages: its model version, its inputs as
    feeds, what the reader found out about them, and what the writer answers."""

    model: ModelVersion
    feeds: Feeds
    batch: int
    #: The outputs to answer, in order, each with its shared-memory parameters (None: raw in the response).
    requested: Sequence[tuple[str, Any]]
    id: str
    #: The call memory it reserves: twice its inputs (the request and its feeds) and its outputs.
    memory: int


class InferCodec:
    """Reads a ModelInfer request's inputs and writes its response's outputs, for the servicer (thin) to call.

    A request of the common form (raw inputs, no parameters) is read from its wire bytes (``read``): its inputs'
    metadata is recognised by its bytes (a ``RequestLayout`` its model version keeps) and each input is a view of
    the request's bytes. Every other request is parsed by protobuf and read by ``decode``; the checks are the same.
    """

    def __init__(self, limits: Limits, shared_memory: SharedMemory | None) -> None:
        self.limits = limits
        self._shm = shared_memory

    def read(self, repository: Repository, raw: bytes) -> Inference | None:
        """The inference in ``raw`` (a serialized ModelInferRequest) when it has the common form and its inputs
        fit their layout, else ``None`` (protobuf then reads it, and ``decode`` names what is wrong).

        Raises:
            ServiceError: the model it names is not served, or its inputs' metadata is refused (``decode``'s
                checks).
        """
        view = memoryview(raw)
        name = version = request_id = _EMPTY
        tensors_start = tensors_stop = -1  # the inputs and outputs asked, contiguous: their layout's key
        begin = 0  # where the field at hand begins: where the one before it stopped
        contents: list[memoryview] = []
        try:
            for tag, start, stop in fields(view):
                if tag == _RAW_INPUT:
                    contents.append(view[start:stop])
                elif tag in (_INPUT, _OUTPUT):
                    if tensors_start < 0:
                        tensors_start = begin
                    elif tensors_stop != begin:
                        return None
                    tensors_stop = stop
                elif tag == _MODEL_NAME:
                    name = view[start:stop]
                elif tag == _MODEL_VERSION:
                    version = view[start:stop]
                elif tag == _ID:
                    request_id = view[start:stop]
                else:
                    return None  # parameters, or a field this protocol version does not have
                begin = stop
            model_name = str(name, "utf-8")
            model_version = str(version, "utf-8") if version else ""  # NOTE: most requests name neither
            identifier = str(request_id, "utf-8") if request_id else ""
        except (IndexError, ValueError):  # UnicodeDecodeError too: protobuf refuses it as it refuses the rest
            return None
        if tensors_start < 0:
            return None
        model = repository.get(model_name, model_version)
        key = raw[tensors_start:tensors_stop]
        layouts = model.layouts
        if key in layouts:
            layout = layouts[key]
        else:
            layout = self._layout(model, key)
            if len(key) <= LAYOUT_KEY_BYTES:
                model.keep(layouts, key, layout)  # None too: those fields always go to protobuf
        if layout is None:
            return None
        inputs = layout.inputs
        if len(contents) != len(inputs):
            return None
        feeds: Feeds = {}
        for (input_name, dtype, expected, shape), data in zip(inputs, contents):  # noqa: B905 - lengths checked
            if len(data) != expected:
                return None
            feeds[input_name] = np.frombuffer(data, dtype).reshape(shape)
        return Inference(model, feeds, layout.batch, layout.requested, identifier, layout.memory)

    def _layout(self, model: ModelVersion, tensors: bytes) -> RequestLayout | None:
        """What requests whose inputs and outputs asked are ``tensors`` (their fields' bytes) mean for ``model``;
        ``None`` for inputs in typed contents or shared memory, BYTES inputs or outputs into shared memory.

        Raises:
            ServiceError: ``decode``'s checks of the inputs' metadata and the outputs asked.
        """
        try:
            request = pb.ModelInferRequest.FromString(tensors)
        except DecodeError:
            return None  # protobuf refuses the whole request, and says so
        given, inline, with_contents, batch = self._inputs(model, request)
        if with_contents or len(inline) != len(given):
            return None
        inputs: list[tuple[str, np.dtype[Any], int, tuple[int, ...]]] = []
        total = 0
        for index, tensor, spec, shape in given:
            if spec.datatype.size == 0:
                return None
            expected = self._sized(index, shape, spec.datatype)
            total += expected
            model_shape = tuple(model.model_shape(spec, shape, batch))
            inputs.append((tensor.name, np.dtype(spec.datatype.numpy), expected, model_shape))
        self._within_request_limit(total)
        requested = self.requested(model, request)
        for _, params in requested:
            if params is not None:
                return None
        return RequestLayout(tuple(inputs), batch, requested, call_memory(model, batch, total))

    def decode(self, model: ModelVersion, request: Any) -> Inference:
        """The inference of a parsed request: its inputs as the model's feeds, checked against its config."""
        given, inline, with_contents, batch = self._inputs(model, request)
        raw = request.raw_input_contents
        if raw and with_contents:
            raise InvalidArgument("raw_input_contents", "an input sets contents while raw_input_contents is used")
        if len(raw) != len(inline):
            raise InvalidArgument(
                "raw_input_contents",
                f"holds {len(raw)} entries; the inputs without contents or shared memory need {len(inline)}",
            )
        feeds: Feeds = {}
        total = 0
        position = 0  # the next raw_input_contents entry
        for index, tensor, spec, shape in given:
            datatype = spec.datatype
            expected = self._sized(index, shape, datatype)
            if position < len(inline) and inline[position] == index:
                array = from_raw(raw[position], datatype, shape, f"raw_input_contents[{position}]")
                position += 1
            elif tensor.HasField("contents"):
                if "shared_memory_region" in tensor.parameters:
                    raise InvalidArgument(f"inputs[{index}].contents", "an input in shared memory cannot set contents")
                array = from_contents(tensor.contents, datatype, shape, f"inputs[{index}].contents")
            else:
                params = tensor.parameters
                data = self.shm_slice(params, f"inputs[{index}].parameters")
                array = from_raw(data, datatype, shape, f'inputs[{index}].parameters["shared_memory_byte_size"]')
                array = array.copy()  # the client may overwrite the region once it has the response
            total += array.nbytes if array.dtype != object else expected
            if datatype.size == 0:
                array = _text(array, f"inputs[{index}]")
            feeds[tensor.name] = array.reshape(model.model_shape(spec, shape, batch))
        self._within_request_limit(total)
        requested = self.requested(model, request)
        return Inference(model, feeds, batch, requested, request.id, call_memory(model, batch, total))

    def _inputs(
        self, model: ModelVersion, request: Any
    ) -> tuple[list[tuple[int, Any, TensorSpec, list[int]]], list[int], bool, int]:
        """The request's inputs checked against the model's config: each (index, tensor, spec, shape) in request
        order, the indices of those read from raw_input_contents, whether any has typed contents, and the batch
        size."""
        shapes: dict[str, list[int]] = {}
        given: list[tuple[int, Any, TensorSpec, list[int]]] = []
        inline: list[int] = []
        with_contents = False
        input_by_name = model.input_by_name
        for index, tensor in enumerate(request.inputs):
            name = tensor.name
            spec = input_by_name.get(name)
            if spec is None:
                raise InvalidArgument(
                    f"inputs[{index}].name",
                    f"unexpected inference input '{name}' for model '{model.name}'; its inputs are "
                    f"{[s.name for s in model.inputs]}",
                )
            if name in shapes:
                raise InvalidArgument(f"inputs[{index}].name", f"input '{name}' is given twice")
            if tensor.datatype != spec.datatype.name:
                raise InvalidArgument(
                    f"inputs[{index}].datatype",
                    f"'{name}' is {spec.datatype.name} in model '{model.name}', not '{tensor.datatype}'",
                )
            shape = tensor.shape[:]  # NOTE: a slice, a third of list()'s cost
            if shape and min(shape) < 0:
                raise InvalidArgument(f"inputs[{index}].shape", f"{shape} has a negative dimension")
            shapes[name] = shape
            given.append((index, tensor, spec, shape))
            if tensor.HasField("contents"):
                with_contents = True
            elif "shared_memory_region" not in tensor.parameters:
                inline.append(index)
        if len(shapes) < len(model.inputs):
            missing = [s.name for s in model.inputs if s.name not in shapes and not s.optional]
            if missing:
                raise InvalidArgument("inputs", f"model '{model.name}' expects inputs {missing} that the request lacks")
        return given, inline, with_contents, model.batch_of(shapes)

    def _sized(self, index: int, shape: list[int], datatype: Datatype) -> int:
        """An input's bytes (its elements' for BYTES), refused over the server's tensor limits."""
        count = element_count(shape)
        expected = count * datatype.size
        if expected > self.limits.max_tensor_bytes or count > self.limits.max_tensor_elements:
            raise ResourceExhausted(
                f"inputs[{index}]: {count:,} elements ({expected:,} bytes) exceed the server's tensor limits"
            )
        return expected

    def _within_request_limit(self, total: int) -> None:
        if total > self.limits.max_request_bytes:
            raise ResourceExhausted(f"the inputs hold {total:,} bytes, over the server's request limit")

    def requested(self, model: ModelVersion, request: Any) -> Sequence[tuple[str, Any]]:
        """The outputs to answer, in order (all of the model's when the request names none), with their params."""
        if not request.outputs:
            return model.every_output
        seen: list[tuple[str, Any]] = []
        names: set[str] = set()
        for index, output in enumerate(request.outputs):
            if output.name not in model.output_by_name:
                raise InvalidArgument(
                    f"outputs[{index}].name",
                    f"unexpected inference output '{output.name}' for model '{model.name}'; its outputs are "
                    f"{[s.name for s in model.outputs]}",
                )
            if output.name in names:  # as Triton: each would be a copy of the same output in the response
                raise InvalidArgument(f"outputs[{index}].name", f"output '{output.name}' is asked twice")
            names.add(output.name)
            params = output.parameters
            if "shared_memory_region" in params:
                if self._shm is None:
                    raise Unimplemented("client shared memory is off (start the server with --allow-client-shm)")
                self.shm_slice(params, f"outputs[{index}].parameters")  # checked before the model runs
            seen.append((output.name, params if "shared_memory_region" in params else None))
        return seen

    def shm_slice(self, params: Any, field: str) -> memoryview:
        if self._shm is None:
            raise Unimplemented("client shared memory is off (start the server with --allow-client-shm)")
        if "shared_memory_byte_size" not in params:
            raise InvalidArgument(field, "shared_memory_region needs shared_memory_byte_size")
        region = params["shared_memory_region"].string_param
        size = _int_param(params["shared_memory_byte_size"])
        offset = _int_param(params["shared_memory_offset"]) if "shared_memory_offset" in params else 0
        return self._shm.slice(region, offset, size, field)

    def encode(self, inference: Inference, outputs: dict[str, np.ndarray]) -> bytes:
        """The serialized ModelInferResponse (the bytes protobuf writes for it): its model name, version and output
        tensors' metadata (serialized once per model, outputs asked and their shapes), its id and one raw entry per
        output, empty for one written into the client's shared memory, joined once from the output buffers."""
        model = inference.model
        # NOTE: loops, not comprehensions (a frame each): this runs on every ModelInfer.
        arrays: list[np.ndarray] = []
        names: list[str] = []
        shapes: list[tuple[int, ...]] = []
        for name, _ in inference.requested:
            array = outputs[name]
            arrays.append(array)
            names.append(name)
            shapes.append(array.shape)
        key = (tuple(names), inference.batch, tuple(shapes))
        head = model.response_heads.get(key)
        if head is None:
            head = self._head(model, inference.batch, arrays, names)
            model.keep(model.response_heads, key, head)
        named, described = head
        parts: list[bytes | memoryview] = [named]
        if inference.id:
            identifier = inference.id.encode()
            parts += (_ID_BYTES, varint(len(identifier)), identifier)
        parts.append(described)
        for index, (name, params) in enumerate(inference.requested):
            data = raw_bytes(arrays[index], model.output_by_name[name].datatype)
            if params is not None:
                field = f"outputs[{index}].parameters"
                region = self.shm_slice(params, field)
                if len(data) > len(region):
                    raise InvalidArgument(
                        f'{field}["shared_memory_byte_size"]',
                        f"output '{name}' is {len(data)} bytes; the region given holds {len(region)}",
                    )
                region[: len(data)] = data
                data = _EMPTY  # every output has its raw entry, empty in shared memory (clients index them)
            parts += (_raw_entry_head(len(data)), data)
        return b"".join(parts)

    def _head(self, model: ModelVersion, batch: int, arrays: list[np.ndarray], names: list[str]) -> tuple[bytes, bytes]:
        """A response's serialized model name and version, and its output tensors (the id goes between them)."""
        described = pb.ModelInferResponse()
        for array, name in zip(arrays, names, strict=True):
            spec = model.output_by_name[name]
            shape = list(array.shape)
            if spec.reshape is not None and -1 not in spec.dims:
                shape = ([batch] if model.max_batch > 0 else []) + list(spec.dims)
            described.outputs.add(name=name, datatype=spec.datatype.name, shape=shape)
        named = pb.ModelInferResponse(model_name=model.name, model_version=str(model.version))
        return named.SerializeToString(), described.SerializeToString()


def _int_param(value: Any) -> int:
    which = value.WhichOneof("parameter_choice")
    if which in {"int64_param", "uint64_param"}:
        return int(getattr(value, which))
    raise InvalidArgument("parameters", f"expected an integer parameter, got {which}")


def _text(array: np.ndarray, field: str) -> np.ndarray:
    """BYTES elements as the str objects ONNX Runtime's string tensors take (UTF-8, as it stores them)."""
    out = np.empty(array.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        try:
            flat[i] = item.decode()
        except UnicodeDecodeError:
            raise InvalidArgument(
                field, f"BYTES element {i} is not UTF-8 text, which ONNX string tensors hold"
            ) from None
    return out


def call_memory(model: ModelVersion, batch: int, received: int) -> int:
    """The call memory a request with ``received`` input bytes reserves: twice its inputs (the request and its
    feeds) and what its outputs will take (their sizes where the config fixes them, else its inputs' size each)."""
    total = 2 * received
    for spec in model.outputs:
        if spec.datatype.size == 0 or -1 in spec.dims:
            total += received
        else:
            total += element_count(([batch] if model.max_batch > 0 else []) + list(spec.dims)) * spec.datatype.size
    return total
