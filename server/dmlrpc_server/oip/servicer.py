"""inference.GRPCInferenceService, thin: each method reads its message, makes one call into the repository, the
model's batcher or the shared memory table, and answers; inference goes through the serving core's gate,
admission turns, call memory, limits and worker threads, as DirectMLService's calls do."""

from __future__ import annotations

import asyncio
import base64
import functools
from collections.abc import AsyncIterator
from typing import Any, Protocol

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from dmlrpc.wire import varint
from dmlrpc_server.calls import deadline_of, parse
from dmlrpc_server.errors import InvalidArgument, NotFound, ServiceError, Unavailable, Unimplemented
from dmlrpc_server.handlers import Corrupt, decoded, method_handlers, tolerant
from dmlrpc_server.oip.config import ModelConfig
from dmlrpc_server.oip.inference import InferCodec, Inference
from dmlrpc_server.oip.models import merge_statistics
from dmlrpc_server.oip.protocol import service_pb2
from dmlrpc_server.oip.repository import Repository
from dmlrpc_server.oip.shm import SharedMemory
from dmlrpc_server.service import Service

pb = service_pb2
#: Request metadata with which a client asks a stream to end at its first error (Triton's opt-in).
STREAM_ERROR_HEADER = "triton_grpc_error"
#: The extensions this server implements (ServerMetadata lists only these).
EXTENSIONS = ("model_repository", "model_configuration", "statistics")
SHM_EXTENSION = "system_shared_memory"
#: A stream's answer to a request that ran: ModelStreamInferResponse.infer_response's tag, and the parameter that
#: marks it final (Triton's decoupled API), serialized.
_STREAM_RESPONSE = bytes((pb.ModelStreamInferResponse.DESCRIPTOR.fields_by_name["infer_response"].number << 3 | 2,))
_FINAL = pb.ModelInferResponse(
    parameters={"triton_final_response": pb.InferParameter(bool_param=True)}
).SerializeToString()


class Peers(Protocol):
    """The other worker processes of this server (a supervisor's worker link)."""

    async def ask(self, kind: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        """Every other worker's answer (``answer_peer``) to one question."""
        ...


class InferenceServicer:
    """The Open Inference Protocol methods over the model repository and the serving core.

    With several worker processes (``peers``) it answers for the server, not the worker a connection reached:
    ModelStatistics sums every worker's counts, and a model load or unload is made by every worker before it is
    answered, so RepositoryIndex and readiness, answered by each worker from its own tables, agree. Models
    published from compiled handles stay the publishing worker's (a handle lives in one process).
    """

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
        self._codec = InferCodec(service.catalog.limits, shared_memory)
        #: Set once the provider has warmed up, cleared when shutdown starts (ServerReady).
        self.serving = False
        #: The server's other workers, when this process is one of several (set by the worker's start).
        self.peers: Peers | None = None

    @property
    def repository(self) -> Repository:
        if self._repository is None:
            raise Unavailable("this server has no model repository (start it with --model-repository DIR)")
        return self._repository

    # -- health and metadata ------------------------------------------------------------------------------------

    async def ServerLive(self, request: Message, context: Any) -> Any:  # noqa: N802
        decoded(request)
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(self, request: Message, context: Any) -> Any:  # noqa: N802
        decoded(request)
        return pb.ServerReadyResponse(ready=self.serving and not self._service.scheduler.closing)

    async def ModelReady(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        if not self.serving:
            raise Unavailable("the server is not ready")
        ready = self._repository is not None and self._repository.is_ready(request.name, request.version)
        return pb.ModelReadyResponse(ready=ready)

    async def ServerMetadata(self, request: Message, context: Any) -> Any:  # noqa: N802
        decoded(request)
        extensions = [*EXTENSIONS, *((SHM_EXTENSION,) if self._shm is not None else ())]
        return pb.ServerMetadataResponse(name="dmlrpc", version=self._version, extensions=extensions)

    async def ModelMetadata(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
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
        request = decoded(request)
        if request.version:
            self.repository.get(request.name, request.version)
        return pb.ModelConfigResponse(config=self.repository.config(request.name))

    async def ModelStatistics(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        stats = self._statistics(request.name, request.version)
        if self.peers is not None:
            answers = await self.peers.ask("statistics", {"name": request.name, "version": request.version})
            for answer in answers:
                data = base64.b64decode(answer.get("statistics", ""))
                stats += pb.ModelStatisticsResponse.FromString(data).model_stats
            stats = merge_statistics(stats)
        return pb.ModelStatisticsResponse(model_stats=stats)

    def _statistics(self, name: str, version: str) -> list[Any]:
        """This worker's statistics of the versions a request names (all models' when it names none)."""
        repository = self.repository
        if name:
            if version:
                versions = [repository.get(name, version)]
            else:
                repository.get(name, "")
                served = repository.model(name)
                versions = [served.versions[v] for v in sorted(served.versions)] if served is not None else []
        else:
            versions = [m.versions[v] for m in repository.served() for v in sorted(m.versions)]
        return [model.stats.message(model.name, str(model.version)) for model in versions]

    async def answer_peer(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """This worker's answer to another worker's question (``Peers.ask``); also how a worker started later
        repeats the loads and unloads the others made."""
        name = str(body.get("name") or "")
        if kind == "statistics":
            try:
                stats = self._statistics(name, str(body.get("version") or ""))
            except ServiceError:  # a model this worker does not serve (published elsewhere): nothing to add
                stats = []
            data = pb.ModelStatisticsResponse(model_stats=stats).SerializeToString()
            return {"statistics": base64.b64encode(data).decode()}
        if kind == "load":
            config = str(body.get("config") or "")
            override = json_format.Parse(config, ModelConfig()) if config else None
            return {"error": await self._load(name, override)}
        if kind == "unload":
            self.repository.unload(name)
            return {}
        raise ValueError(f"unknown question {kind!r}")

    async def _load(self, name: str, override: Any | None) -> str:
        """Load a model of the repository here; why it did not load ("" when it did)."""
        repository = self.repository
        loop = asyncio.get_running_loop()
        model = await loop.run_in_executor(self._service.scheduler.workers, repository.prepare, name, override)
        repository.install(model)
        return "" if model.versions else f"failed to load '{name}': {model.reason or _failures(model.failed)}"

    async def _on_every_worker(self, kind: str, body: dict[str, Any]) -> str:
        """The other workers make the same load or unload; the first failure among them ("" when none)."""
        if self.peers is None:
            return ""
        answers = await self.peers.ask(kind, body)
        return next((str(a["error"]) for a in answers if a.get("error")), "")

    # -- repository ---------------------------------------------------------------------------------------------

    async def RepositoryIndex(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        self._check_repository_name(request.repository_name)
        return pb.RepositoryIndexResponse(models=self.repository.index(request.ready))

    async def RepositoryModelLoad(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
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
        failed = await self._load(request.model_name, override)
        # NOTE: the other workers load it too when it failed here, so that every worker reports the same state.
        config = "" if override is None else json_format.MessageToJson(override, indent=None)
        elsewhere = await self._on_every_worker("load", {"name": request.model_name, "config": config})
        if failed or elsewhere:
            raise InvalidArgument("model_name", failed or elsewhere)
        return pb.RepositoryModelLoadResponse()

    async def RepositoryModelUnload(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        repository = self._explicit(request.repository_name)
        if request.model_name not in repository.models and request.model_name not in repository.names():
            raise InvalidArgument("model_name", f"Request for unknown model: '{request.model_name}' is not found")
        repository.unload(request.model_name)
        failed = await self._on_every_worker("unload", {"name": request.model_name})
        if failed:
            raise Unavailable(f"unloading '{request.model_name}' failed in another worker: {failed}")
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

    async def ModelInfer(self, request: bytes, context: Any) -> bytes:  # noqa: N802
        # Registered without serializers (see ``handlers``): a request of the common form is read from its wire
        # bytes, any other by protobuf; the response's bytes are written by the codec.
        self._service.scheduler.gate()
        deadline = deadline_of(context.time_remaining())
        inference = self._codec.read(self.repository, request)
        if inference is None:
            inference = self._decoded(parse(pb.ModelInferRequest, request))
        return await self._run(inference, deadline)

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
                if isinstance(request, Corrupt):
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
                    yield pb.ModelStreamInferResponse(
                        error_message=error.message, infer_response=failed
                    ).SerializeToString()
                else:
                    # NOTE: the response's bytes and the final-response parameter's, concatenated, are the message
                    # with both (protobuf merges what it reads twice).
                    body = response + _FINAL
                    yield b"".join((_STREAM_RESPONSE, varint(len(body)), body))
                finally:
                    window.release()
            await reader  # a failed read (the client's stream broke) ends the call with its error
        finally:
            reader.cancel()
            while not order.empty():
                left = order.get_nowait()
                if left is not None:
                    left[1].cancel()

    async def _stream_item(self, request: Any, time_remaining: float | None) -> bytes:
        self._service.scheduler.gate()
        deadline = deadline_of(time_remaining)
        return await self._run(self._decoded(decoded(request)), deadline)

    def _decoded(self, request: Any) -> Inference:
        """A parsed request's inference (the model it names, its inputs checked and read)."""
        return self._codec.decode(self.repository.get(request.model_name, request.model_version), request)

    async def _run(self, inference: Inference, deadline: float | None) -> bytes:
        """One inference through the serving core: call memory, an admission turn, the model's batcher; its
        response's bytes.

        Raises:
            ServiceError: the statuses the protocol lists (limits, a full queue, the deadline).
        """
        scheduler = self._service.scheduler
        memory = scheduler.memory
        size = inference.memory
        if not memory.try_acquire(size):
            await memory.acquire(size, deadline)
        try:
            infer = functools.partial(inference.model.infer, inference.feeds, inference.batch, deadline)
            outputs = await scheduler.in_turn(deadline, infer)
            return self._codec.encode(inference, outputs)
        finally:
            memory.release(size)

    def _regions(self) -> SharedMemory:
        if self._shm is None:
            raise Unimplemented("client shared memory is off (start the server with --allow-client-shm)")
        return self._shm

    async def SystemSharedMemoryStatus(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        regions = self._regions().status(request.name)
        return pb.SystemSharedMemoryStatusResponse(regions={r.name: r.status() for r in regions})

    async def SystemSharedMemoryRegister(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        self._regions().register(request.name, request.key, request.offset, request.byte_size)
        return pb.SystemSharedMemoryRegisterResponse()

    async def SystemSharedMemoryUnregister(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        self._regions().unregister(request.name)
        return pb.SystemSharedMemoryUnregisterResponse()

    async def CudaSharedMemoryStatus(self, request: Any, context: Any) -> Any:  # noqa: N802
        request = decoded(request)
        # No CUDA regions are ever registered here: all of them is none, a named one is not found.
        if request.name:
            raise_not_found(request.name)
        return pb.CudaSharedMemoryStatusResponse()

    async def CudaSharedMemoryRegister(self, request: Any, context: Any) -> Any:  # noqa: N802
        decoded(request)
        raise Unimplemented("CUDA shared memory is not served; use system shared memory")

    async def CudaSharedMemoryUnregister(self, request: Any, context: Any) -> Any:  # noqa: N802
        decoded(request)
        # Clients unregister all CUDA regions before they start (Triton's examples do): nothing to forget is OK.
        return pb.CudaSharedMemoryUnregisterResponse()


def raise_not_found(name: str) -> None:
    raise NotFound(f"Unable to find cuda shared memory region: '{name}'")


def _failures(failed: dict[int, str]) -> str:
    return "; ".join(f"version {v}: {reason}" for v, reason in sorted(failed.items()))


def handlers(servicer: InferenceServicer) -> dict[str, grpc.RpcMethodHandler]:
    """The method handlers of inference.GRPCInferenceService by path (the messages of tritonclient's generated
    modules); TraceSetting and LogSettings, which the servicer lacks, are answered UNIMPLEMENTED (not advertised)."""
    return method_handlers(
        pb.DESCRIPTOR.services_by_name["GRPCInferenceService"],
        servicer,
        parse=tolerant,
        wire_requests=("ModelInfer",),
        wire_responses=("ModelInfer", "ModelStreamInfer"),
    )
