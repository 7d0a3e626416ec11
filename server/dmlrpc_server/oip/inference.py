"""ModelInfer's tensors: a request's inputs read into feeds (raw, typed or shared-memory contents) within the
server's limits, and its outputs written back (raw, or into the client's shared memory regions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc_server.errors import InvalidArgument, ResourceExhausted, Unimplemented
from dmlrpc_server.oip.models import Feeds, ModelVersion, TensorSpec
from dmlrpc_server.oip.protocol import service_pb2
from dmlrpc_server.oip.shm import SharedMemory
from dmlrpc_server.oip.tensors import element_count, from_contents, from_raw, to_raw
from dmlrpc_server.operators.base import Limits

pb = service_pb2


class InferCodec:
    """Reads a ModelInfer request's inputs and writes its response's outputs, for the servicer (thin) to call."""

    def __init__(self, limits: Limits, shared_memory: SharedMemory | None) -> None:
        self.limits = limits
        self._shm = shared_memory

    def decode(self, model: ModelVersion, request: Any) -> tuple[Feeds, int, int]:
        """The request's inputs as the model's feeds, checked against its config; its batch size and bytes."""
        # NOTE: plain loops, no generator expressions, each message field read once (a repeated field's list costs
        # more than a slice of it): this runs on every ModelInfer.
        shapes: dict[str, list[int]] = {}
        given: list[tuple[int, Any, TensorSpec, list[int]]] = []  # (index, tensor, spec, shape) in request order
        inline: list[int] = []  # the inputs read from raw_input_contents, in order
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
            shape = tensor.shape[:]
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
        batch = model.batch_of(shapes)
        limits = self.limits
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
            count = element_count(shape)
            expected = count * datatype.size
            if expected > limits.max_tensor_bytes or count > limits.max_tensor_elements:
                raise ResourceExhausted(
                    f"inputs[{index}]: {count:,} elements ({expected:,} bytes) exceed the server's tensor limits"
                )
            if position < len(inline) and inline[position] == index:
                data = raw[position]
                if datatype.size and len(data) == expected:  # NOTE: the common case, read without from_raw's checks
                    array = np.frombuffer(data, datatype.numpy)
                else:
                    array = from_raw(data, datatype, shape, f"raw_input_contents[{position}]")
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
        if total > limits.max_request_bytes:
            raise ResourceExhausted(f"the inputs hold {total:,} bytes, over the server's request limit")
        return feeds, batch, total

    def requested(self, model: ModelVersion, request: Any) -> Sequence[tuple[str, Any]]:
        """The outputs to answer, in order (all of the model's when the request names none), with their params."""
        if not request.outputs:
            return model.every_output
        seen: list[tuple[str, Any]] = []
        for index, output in enumerate(request.outputs):
            if output.name not in model.output_by_name:
                raise InvalidArgument(
                    f"outputs[{index}].name",
                    f"unexpected inference output '{output.name}' for model '{model.name}'; its outputs are "
                    f"{[s.name for s in model.outputs]}",
                )
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

    def encode(
        self,
        model: ModelVersion,
        request: Any,
        batch: int,
        outputs: dict[str, np.ndarray],
        requested: Sequence[tuple[str, Any]],
    ) -> Any:
        """The response: its outputs' metadata (built once per model, outputs asked and their shapes) and one raw
        entry per output, empty for one written into the client's shared memory."""
        # NOTE: loops, not comprehensions (a frame each): this runs on every ModelInfer.
        arrays: list[np.ndarray] = []
        shapes: list[tuple[int, ...]] = []
        for name, _ in requested:
            array = outputs[name]
            arrays.append(array)
            shapes.append(array.shape)
        every = requested is model.every_output
        key = (batch, tuple(shapes))
        head = model.response_heads.get(key) if every else None
        if head is None:
            head = self._head(model, batch, arrays, requested)
            if every:
                model.keep_response_head(key, head)
        response = pb.ModelInferResponse()
        # NOTE: merged from the bytes of its model name, version and output tensors: a third of building them
        response.MergeFromString(head)
        if request.id:
            response.id = request.id
        raw: list[bytes] = []
        for index, (name, params) in enumerate(requested):
            spec = model.output_by_name[name]
            data = to_raw(arrays[index], spec.datatype)
            if params is None:
                raw.append(data)
                continue
            field = f"outputs[{index}].parameters"
            region = self.shm_slice(params, field)
            if len(data) > len(region):
                raise InvalidArgument(
                    f'{field}["shared_memory_byte_size"]',
                    f"output '{name}' is {len(data)} bytes; the region given holds {len(region)}",
                )
            region[: len(data)] = data
            raw.append(b"")  # every output has its raw entry, empty for one in shared memory (clients index them)
        response.raw_output_contents.extend(raw)
        return response

    def _head(
        self, model: ModelVersion, batch: int, arrays: list[np.ndarray], requested: Sequence[tuple[str, Any]]
    ) -> bytes:
        """The serialized model name, version and output tensors of a response."""
        response = pb.ModelInferResponse(model_name=model.name, model_version=str(model.version))
        for array, (name, _) in zip(arrays, requested, strict=True):
            spec = model.output_by_name[name]
            shape = list(array.shape)
            if spec.reshape is not None and -1 not in spec.dims:
                shape = ([batch] if model.max_batch > 0 else []) + list(spec.dims)
            response.outputs.add(name=name, datatype=spec.datatype.name, shape=shape)
        head: bytes = response.SerializeToString()
        return head

    # -- shared memory ------------------------------------------------------------------------------------------


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


def expected_output_bytes(model: ModelVersion, batch: int, received: int) -> int:
    """What a request's outputs will take: their sizes where the config fixes them, else its inputs' size."""
    total = 0
    for spec in model.outputs:
        if spec.datatype.size == 0 or -1 in spec.dims:
            total += received
        else:
            total += element_count(([batch] if model.max_batch > 0 else []) + list(spec.dims)) * spec.datatype.size
    return total
