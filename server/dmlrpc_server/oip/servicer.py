"""inference.GRPCInferenceService, thin: each method reads its message, makes one call into the repository, the
model's batcher or the shared memory table, and answers; inference goes through the serving core's gate,
admission turns, call memory, limits and worker threads, as DirectMLService's calls do."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import numpy as np
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from dmlrpc_server.errors import InvalidArgument, NotFound, ResourceExhausted, ServiceError, Unavailable, Unimplemented
from dmlrpc_server.oip.config import ModelConfig
from dmlrpc_server.oip.models import Feeds, ModelVersion
from dmlrpc_server.oip.protocol import SERVICE_NAME, service_pb2
from dmlrpc_server.oip.repository import Repository
from dmlrpc_server.oip.shm import SharedMemory
from dmlrpc_server.oip.tensors import element_count, from_contents, from_raw, to_raw
from dmlrpc_server.service import Service

pb = service_pb2
#: Request metadata with which a client asks a stream to end at its first error (Triton's opt-in).
STREAM_ERROR_HEADER = "triton_grpc_error"
#: The extensions this server implements (ServerMetadata lists only these).
EXTENSIONS = ("model_repository", "model_configuration", "statistics")
SHM_EXTENSION = "system_shared_memory"


class InferenceServicer:
    """The Open Inference Protocol methods over the model repository and the serving core."""

    def __init__(
        self,
        service: Service,
        repository: Repository | None,
        *,
        version: str,
        shared_memory: SharedMemory | None,
    ) -> None:
        self._service = service
        self._repository = repository
        self._version = version
        self._shm = shared_memory
        #: Set once the provider has warmed up, cleared when shutdown starts (ServerReady).
        self.serving = False

    @property
    def repository(self) -> Repository:
        if self._repository is None:
            raise Unavailable("this server has no model repository (start it with --model-repository DIR)")
        return self._repository

    # -- health and metadata ------------------------------------------------------------------------------------

    async def ServerLive(self, request: Message, context: Any) -> Any:  # noqa: N802
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(self, request: Message, context: Any) -> Any:  # noqa: N802
        return pb.ServerReadyResponse(ready=self.serving and not self._service.scheduler.closing)

    async def ModelReady(self, request: Any, context: Any) -> Any:  # noqa: N802
        if not self.serving:
            raise Unavailable("the server is not ready")
        ready = self._repository is not None and self._repository.is_ready(request.name, request.version)
        return pb.ModelReadyResponse(ready=ready)

    async def ServerMetadata(self, request: Message, context: Any) -> Any:  # noqa: N802
        extensions = [*EXTENSIONS, *((SHM_EXTENSION,) if self._shm is not None else ())]
        return pb.ServerMetadataResponse(name="dmlrpc", version=self._version, extensions=extensions)

    async def ModelMetadata(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        model = self.repository.get(request.name, request.version)
        config = model.config
        served = self.repository.model(request.name)
        versions = sorted(served.versions) if served is not None else [model.version]
        batch = [-1] if model.max_batch > 0 else []
        return pb.ModelMetadataResponse(
            name=model.name,
            versions=[str(v) for v in versions],
            platform=config.platform or config.backend,
            inputs=[
                pb.ModelMetadataResponse.TensorMetadata(name=s.name, datatype=s.datatype.name, shape=batch + [*s.dims])
                for s in model.inputs
            ],
            outputs=[
                pb.ModelMetadataResponse.TensorMetadata(name=s.name, datatype=s.datatype.name, shape=batch + [*s.dims])
                for s in model.outputs
            ],
        )

    async def ModelConfig(self, request: Any, context: Any) -> Any:  # noqa: N802
        if request.version:
            self.repository.get(request.name, request.version)
        return pb.ModelConfigResponse(config=self.repository.config(request.name))

    async def ModelStatistics(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        repository = self.repository
        if request.name:
            if request.version:
                versions = [repository.get(request.name, request.version)]
            else:
                repository.get(request.name, "")
                served = repository.model(request.name)
                versions = [served.versions[v] for v in sorted(served.versions)] if served is not None else []
        else:
            versions = [m.versions[v] for m in repository.served() for v in sorted(m.versions)]
        return pb.ModelStatisticsResponse(
            model_stats=[model.stats.message(model.name, str(model.version)) for model in versions]
        )

    # -- repository ---------------------------------------------------------------------------------------------

    async def RepositoryIndex(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        self._check_repository_name(request.repository_name)
        return pb.RepositoryIndexResponse(models=self.repository.index(request.ready))

    async def RepositoryModelLoad(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        repository = self._explicit(request.repository_name)
        override = None
        for key, value in request.parameters.items():
            if key == "config":
                override = ModelConfig()
                try:
                    json_format.Parse(value.string_param, override)
                except json_format.ParseError as error:
                    raise InvalidArgument('parameters["config"]', f"is not a ModelConfig in JSON: {error}") from None
            elif key.startswith("file:"):
                raise Unimplemented(
                    "loading model files sent in the request is not supported; put them in the repository"
                )
        if request.model_name not in repository.names():
            raise InvalidArgument("model_name", f"no model '{request.model_name}' in the repository")
        loop = asyncio.get_running_loop()
        model = await loop.run_in_executor(
            self._service.scheduler.workers, repository.prepare, request.model_name, override
        )
        repository.install(model)
        if not model.versions:
            raise InvalidArgument(
                "model_name", f"failed to load '{request.model_name}': {model.reason or _failures(model.failed)}"
            )
        return pb.RepositoryModelLoadResponse()

    async def RepositoryModelUnload(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        repository = self._explicit(request.repository_name)
        if request.model_name not in repository.models and request.model_name not in repository.names():
            raise InvalidArgument("model_name", f"Request for unknown model: '{request.model_name}' is not found")
        repository.unload(request.model_name)
        return pb.RepositoryModelUnloadResponse()

    def _check_repository_name(self, name: str) -> None:
        root = self.repository.root
        if name and (root is None or name != root.name):
            raise InvalidArgument("repository_name", f"unknown repository '{name}'")

    def _explicit(self, repository_name: str) -> Repository:
        self._check_repository_name(repository_name)
        repository = self.repository
        if repository.root is None:
            raise Unavailable("this server has no model repository (start it with --model-repository DIR)")
        if not repository.explicit:
            raise Unavailable(
                "explicit model load / unload is not allowed unless the server runs with --model-control-mode explicit"
            )
        return repository

    # -- inference ----------------------------------------------------------------------------------------------

    async def ModelInfer(self, request: Any, context: Any) -> Any:  # noqa: N802
        return await self.infer(request, context.time_remaining())

    async def ModelStreamInfer(  # noqa: N802
        self, request_iterator: AsyncIterator[Any], context: Any
    ) -> AsyncIterator[Any]:
        """Answer each request once, in arrival order (computed concurrently, batched with others); a failed
        request gets its error in its own response and the stream goes on, unless the client asked otherwise."""
        end_at_error = any(
            key == STREAM_ERROR_HEADER and str(value).lower() == "true"
            for key, value in context.invocation_metadata() or ()
        )
        window = asyncio.Semaphore(self._service.stream_limits.items)
        order: asyncio.Queue[tuple[Any, asyncio.Future[Any]] | None] = asyncio.Queue()

        async def read() -> None:
            try:
                async for request in request_iterator:
                    await window.acquire()
                    order.put_nowait(
                        (request, asyncio.ensure_future(self._stream_item(request, context.time_remaining())))
                    )
            finally:
                order.put_nowait(None)

        reader = asyncio.ensure_future(read())
        try:
            while (item := await order.get()) is not None:
                request, task = item
                if isinstance(request, _Corrupt):
                    request = pb.ModelInferRequest()
                try:
                    response = await task
                except ServiceError as error:
                    if end_at_error:
                        raise
                    failed = pb.ModelInferResponse(
                        model_name=request.model_name, model_version=request.model_version, id=request.id
                    )
                    failed.parameters["triton_final_response"].bool_param = True
                    yield pb.ModelStreamInferResponse(error_message=error.message, infer_response=failed)
                else:
                    response.parameters["triton_final_response"].bool_param = True
                    yield pb.ModelStreamInferResponse(infer_response=response)
                finally:
                    window.release()
            await reader  # a failed read (the client's stream broke) ends the call with its error
        finally:
            reader.cancel()
            while not order.empty():
                left = order.get_nowait()
                if left is not None:
                    left[1].cancel()

    async def _stream_item(self, request: Any, time_remaining: float | None) -> Any:
        if isinstance(request, _Corrupt):
            raise InvalidArgument("request", f"the message is not valid protobuf for this method: {request.error}")
        return await self.infer(request, time_remaining)

    async def infer(self, request: Any, time_remaining: float | None) -> Any:
        """One inference request through the serving core: the gate, the checks, memory, an admission turn, the
        model's batcher; its response with one raw entry per output.

        Raises:
            ServiceError: the statuses the protocol lists (unknown model, bad request, limits, a full queue).
        """
        service = self._service
        service.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        model = self.repository.get(request.model_name, request.model_version)
        feeds, batch, received = self._decode(model, request)
        requested = self._requested(model, request)
        size = 2 * received + _expected_output_bytes(model, batch, received)
        memory = service.memory
        if not memory.try_acquire(size):
            await memory.acquire(size, deadline)
        try:
            async with service.scheduler.turn(deadline):
                outputs = await model.infer(feeds, batch, deadline)
            return self._encode(model, request, batch, outputs, requested)
        finally:
            memory.release(size)

    def _decode(self, model: ModelVersion, request: Any) -> tuple[Feeds, int, int]:
        """The request's inputs as the model's feeds, checked against its config; its batch size and bytes."""
        shapes: dict[str, list[int]] = {}
        for index, tensor in enumerate(request.inputs):
            spec = model.input_by_name.get(tensor.name)
            if spec is None:
                raise InvalidArgument(
                    f"inputs[{index}].name",
                    f"unexpected inference input '{tensor.name}' for model '{model.name}'; its inputs are "
                    f"{[s.name for s in model.inputs]}",
                )
            if tensor.name in shapes:
                raise InvalidArgument(f"inputs[{index}].name", f"input '{tensor.name}' is given twice")
            if tensor.datatype != spec.datatype.name:
                raise InvalidArgument(
                    f"inputs[{index}].datatype",
                    f"'{tensor.name}' is {spec.datatype.name} in model '{model.name}', not '{tensor.datatype}'",
                )
            if any(dim < 0 for dim in tensor.shape):
                raise InvalidArgument(f"inputs[{index}].shape", f"{list(tensor.shape)} has a negative dimension")
            shapes[tensor.name] = list(tensor.shape)
        missing = [s.name for s in model.inputs if s.name not in shapes and not s.optional]
        if missing:
            raise InvalidArgument("inputs", f"model '{model.name}' expects inputs {missing} that the request lacks")
        batch = model.batch_of(shapes)
        limits = self._service.executor.limits
        raw = request.raw_input_contents
        inline = [
            i
            for i, tensor in enumerate(request.inputs)
            if not tensor.HasField("contents") and "shared_memory_region" not in tensor.parameters
        ]
        if raw and any(tensor.HasField("contents") for tensor in request.inputs):
            raise InvalidArgument("raw_input_contents", "an input sets contents while raw_input_contents is used")
        if len(raw) != len(inline):
            raise InvalidArgument(
                "raw_input_contents",
                f"holds {len(raw)} entries; the inputs without contents or shared memory need {len(inline)}",
            )
        raw_of = dict(zip(inline, raw, strict=True))
        feeds: Feeds = {}
        total = 0
        for index, tensor in enumerate(request.inputs):
            spec = model.input_by_name[tensor.name]
            shape = shapes[tensor.name]
            count = element_count(shape)
            expected = count * spec.datatype.size
            if expected > limits.max_tensor_bytes or count > limits.max_tensor_elements:
                raise ResourceExhausted(
                    f"inputs[{index}]: {count:,} elements ({expected:,} bytes) exceed the server's tensor limits"
                )
            params = tensor.parameters
            if "shared_memory_region" in params:
                if tensor.HasField("contents"):
                    raise InvalidArgument(f"inputs[{index}].contents", "an input in shared memory cannot set contents")
                data = self._shm_slice(params, f"inputs[{index}].parameters")
                array = from_raw(data, spec.datatype, shape, f'inputs[{index}].parameters["shared_memory_byte_size"]')
                array = array.copy()  # the client may overwrite the region once it has the response
            elif tensor.HasField("contents"):
                array = from_contents(tensor.contents, spec.datatype, shape, f"inputs[{index}].contents")
            else:
                position = inline.index(index)
                array = from_raw(raw_of[index], spec.datatype, shape, f"raw_input_contents[{position}]")
            total += array.nbytes if array.dtype != object else expected
            if spec.datatype.size == 0:
                array = _text(array, f"inputs[{index}]")
            feeds[tensor.name] = array.reshape(model.model_shape(spec, shape, batch))
        if total > limits.max_request_bytes:
            raise ResourceExhausted(f"the inputs hold {total:,} bytes, over the server's request limit")
        return feeds, batch, total

    def _requested(self, model: ModelVersion, request: Any) -> list[tuple[str, Any]]:
        """The outputs to answer, in order (all of the model's when the request names none), with their params."""
        if not request.outputs:
            return [(spec.name, None) for spec in model.outputs]
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
                self._shm_slice(params, f"outputs[{index}].parameters")  # checked before the model runs
            seen.append((output.name, params if "shared_memory_region" in params else None))
        return seen

    def _shm_slice(self, params: Any, field: str) -> memoryview:
        if self._shm is None:
            raise Unimplemented("client shared memory is off (start the server with --allow-client-shm)")
        if "shared_memory_byte_size" not in params:
            raise InvalidArgument(field, "shared_memory_region needs shared_memory_byte_size")
        region = params["shared_memory_region"].string_param
        size = _int_param(params["shared_memory_byte_size"])
        offset = _int_param(params["shared_memory_offset"]) if "shared_memory_offset" in params else 0
        return self._shm.slice(region, offset, size, field)

    def _encode(
        self,
        model: ModelVersion,
        request: Any,
        batch: int,
        outputs: dict[str, np.ndarray],
        requested: list[tuple[str, Any]],
    ) -> Any:
        response = pb.ModelInferResponse(model_name=model.name, model_version=str(model.version), id=request.id)
        raw: list[bytes] = []
        for index, (name, params) in enumerate(requested):
            spec = model.output_by_name[name]
            array = outputs[name]
            shape = list(array.shape)
            if spec.reshape is not None and -1 not in spec.dims:
                shape = ([batch] if model.max_batch > 0 else []) + list(spec.dims)
            response.outputs.add(name=name, datatype=spec.datatype.name, shape=shape)
            data = to_raw(array, spec.datatype)
            if params is None:
                raw.append(data)
                continue
            field = f"outputs[{index}].parameters"
            region = self._shm_slice(params, field)
            if len(data) > len(region):
                raise InvalidArgument(
                    f'{field}["shared_memory_byte_size"]',
                    f"output '{name}' is {len(data)} bytes; the region given holds {len(region)}",
                )
            region[: len(data)] = data
            raw.append(b"")  # every output has its raw entry, empty for one in shared memory (clients index them)
        response.raw_output_contents.extend(raw)
        return response

    # -- shared memory ------------------------------------------------------------------------------------------

    def _regions(self) -> SharedMemory:
        if self._shm is None:
            raise Unimplemented("client shared memory is off (start the server with --allow-client-shm)")
        return self._shm

    async def SystemSharedMemoryStatus(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        regions = self._regions().status(request.name)
        return pb.SystemSharedMemoryStatusResponse(regions={r.name: r.status() for r in regions})

    async def SystemSharedMemoryRegister(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        self._regions().register(request.name, request.key, request.offset, request.byte_size)
        return pb.SystemSharedMemoryRegisterResponse()

    async def SystemSharedMemoryUnregister(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        self._regions().unregister(request.name)
        return pb.SystemSharedMemoryUnregisterResponse()

    async def CudaSharedMemoryStatus(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        # No CUDA regions are ever registered here: all of them is none, a named one is not found.
        if request.name:
            raise_not_found(request.name)
        return pb.CudaSharedMemoryStatusResponse()

    async def CudaSharedMemoryRegister(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        raise Unimplemented("CUDA shared memory is not served; use system shared memory")

    async def CudaSharedMemoryUnregister(  # noqa: N802
        self, request: Any, context: Any
    ) -> Any:
        # Clients unregister all CUDA regions before they start (Triton's examples do): nothing to forget is OK.
        return pb.CudaSharedMemoryUnregisterResponse()


def raise_not_found(name: str) -> None:
    raise NotFound(f"Unable to find cuda shared memory region: '{name}'")


def _failures(failed: dict[int, str]) -> str:
    return "; ".join(f"version {v}: {reason}" for v, reason in sorted(failed.items()))


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


def _expected_output_bytes(model: ModelVersion, batch: int, received: int) -> int:
    """What a request's outputs will take: their sizes where the config fixes them, else its inputs' size."""
    total = 0
    for spec in model.outputs:
        if spec.datatype.size == 0 or -1 in spec.dims:
            total += received
        else:
            total += element_count(([batch] if model.max_batch > 0 else []) + list(spec.dims)) * spec.datatype.size
    return total


def _method(kind: str, fn: Callable[..., Any], request: Any, response: Any) -> grpc.RpcMethodHandler:
    deserialize = _tolerant(request)
    if kind == "unary":
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=deserialize, response_serializer=response.SerializeToString
        )
    return grpc.stream_stream_rpc_method_handler(
        fn, request_deserializer=deserialize, response_serializer=response.SerializeToString
    )


def _tolerant(message: Any) -> Callable[[bytes], Any]:
    """Parse a request; bytes that are not the message reach the method as an InvalidArgument to raise (a
    deserializer that raises would make gRPC answer UNKNOWN)."""

    def parse(data: bytes) -> Any:
        try:
            return message.FromString(data)
        except DecodeError as error:
            return _Corrupt(str(error))

    return parse


class _Corrupt:
    def __init__(self, error: str) -> None:
        self.error = error


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    async def method(request: Any, context: Any) -> Any:
        if isinstance(request, _Corrupt):
            raise InvalidArgument("request", f"the message is not valid protobuf for this method: {request.error}")
        return await fn(request, context)

    return method


def handlers(servicer: InferenceServicer) -> grpc.GenericRpcHandler:
    """The method handlers of inference.GRPCInferenceService (the messages of tritonclient's generated modules)."""
    service = pb.DESCRIPTOR.services_by_name["GRPCInferenceService"]
    methods: dict[str, grpc.RpcMethodHandler] = {}
    for method in service.methods:
        fn = getattr(servicer, method.name, None)
        if fn is None:
            continue  # TraceSetting, LogSettings: UNIMPLEMENTED (not advertised)
        request = getattr(pb, method.input_type.name)
        response = getattr(pb, method.output_type.name)
        if method.client_streaming:
            methods[method.name] = _method("stream", fn, request, response)
        else:
            methods[method.name] = _method("unary", _guard(fn), request, response)
    return grpc.method_handlers_generic_handler(SERVICE_NAME, methods)
