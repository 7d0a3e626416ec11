"""A served model version: its session, its requests' checks, its dynamic batcher and its statistics."""

from __future__ import annotations

import copy
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import onnx
import onnxruntime as ort

from dmlrpc_server.batching import BatchQueue, Member
from dmlrpc_server.errors import InvalidArgument, Unavailable
from dmlrpc_server.oip.config import instances
from dmlrpc_server.oip.protocol import service_pb2
from dmlrpc_server.oip.tensors import Datatype, datatype_of, shape_matches
from dmlrpc_server.runtime.cost import model_cost
from dmlrpc_server.scheduler import Scheduler

_log = logging.getLogger(__name__)

Feeds = dict[str, np.ndarray]
#: Request layouts and response heads a model version keeps, of each (``ModelVersion.keep``).
KEPT = 64
K = TypeVar("K")
V = TypeVar("V")
#: Runs a batch's feeds on a worker thread (``Scheduler.offload``): the session's outputs by name.
Runner = Callable[[Feeds, ort.RunOptions | None], dict[str, np.ndarray]]
#: Turns one request's feeds into what the runner takes, on the loop before the request queues (its checks fail
#: that request alone, not the batch it would join).
Prepare = Callable[[Feeds], Feeds]


@dataclass
class Duration:
    """A cumulative StatisticDuration: how many and how long in all."""

    count: int = 0
    ns: int = 0

    def add(self, ns: int, count: int = 1) -> None:
        self.count += count
        self.ns += ns

    def message(self) -> Any:
        return service_pb2.StatisticDuration(count=self.count, ns=self.ns)


@dataclass
class Statistics:
    """What ModelStatistics reports for one version, counted as Triton counts it."""

    last_inference_ms: int = 0
    inference_count: int = 0  # batch items that ran
    execution_count: int = 0  # runs of the model
    success: Duration = field(default_factory=Duration)
    fail: Duration = field(default_factory=Duration)
    queue: Duration = field(default_factory=Duration)
    compute_input: Duration = field(default_factory=Duration)
    compute_infer: Duration = field(default_factory=Duration)
    compute_output: Duration = field(default_factory=Duration)
    batches: dict[int, tuple[Duration, Duration, Duration]] = field(default_factory=dict)

    def ran(self, size: int, requests: int, lived_ns: int, timings: tuple[int, int, int]) -> None:
        """Count a batch of ``size`` items from ``requests`` requests that ran: their success, its compute
        (``timings``: input, infer and output nanoseconds) per request and per batch size."""
        # NOTE: the fields' sums written out, not Duration.add nine times: this runs for every batch.
        input_ns, infer_ns, output_ns = timings
        success = self.success
        success.count += requests
        success.ns += lived_ns
        # Triton counts each request's share of its batch's compute as the whole batch's time.
        compute_input, compute_infer, compute_output = self.compute_input, self.compute_infer, self.compute_output
        compute_input.count += requests
        compute_input.ns += input_ns * requests
        compute_infer.count += requests
        compute_infer.ns += infer_ns * requests
        compute_output.count += requests
        compute_output.ns += output_ns * requests
        durations = self.batches.get(size)
        if durations is None:
            durations = self.batches[size] = (Duration(), Duration(), Duration())
        compute_input, compute_infer, compute_output = durations
        compute_input.count += 1
        compute_input.ns += input_ns
        compute_infer.count += 1
        compute_infer.ns += infer_ns
        compute_output.count += 1
        compute_output.ns += output_ns

    def message(self, name: str, version: str) -> Any:
        return service_pb2.ModelStatistics(
            name=name,
            version=version,
            last_inference=self.last_inference_ms,
            inference_count=self.inference_count,
            execution_count=self.execution_count,
            inference_stats=service_pb2.InferStatistics(
                success=self.success.message(),
                fail=self.fail.message(),
                queue=self.queue.message(),
                compute_input=self.compute_input.message(),
                compute_infer=self.compute_infer.message(),
                compute_output=self.compute_output.message(),
            ),
            batch_stats=[
                service_pb2.InferBatchStatistics(
                    batch_size=size,
                    compute_input=durations[0].message(),
                    compute_infer=durations[1].message(),
                    compute_output=durations[2].message(),
                )
                for size, durations in sorted(self.batches.items())
            ],
        )


def merge_statistics(parts: list[Any]) -> list[Any]:
    """ModelStatistics messages of several workers, summed per model version (the server's counts, as Triton's
    are): counts and durations added, batch statistics added per batch size, the latest last inference."""
    merged: dict[tuple[str, str], Any] = {}
    for stats in parts:
        into = merged.get((stats.name, stats.version))
        if into is None:
            merged[(stats.name, stats.version)] = into = service_pb2.ModelStatistics()
            into.CopyFrom(stats)
            continue
        into.last_inference = max(into.last_inference, stats.last_inference)
        into.inference_count += stats.inference_count
        into.execution_count += stats.execution_count
        _add_durations(into.inference_stats, stats.inference_stats)
        batches = {batch.batch_size: batch for batch in into.batch_stats}
        for batch in stats.batch_stats:
            if batch.batch_size in batches:
                _add_durations(batches[batch.batch_size], batch)
            else:
                into.batch_stats.add().CopyFrom(batch)
    for into in merged.values():
        ordered = sorted(into.batch_stats, key=lambda batch: batch.batch_size)
        into.ClearField("batch_stats")
        into.batch_stats.extend(ordered)
    return list(merged.values())


def _add_durations(into: Any, other: Any) -> None:
    """Add every StatisticDuration field of ``other`` to ``into`` (two messages of one type)."""
    for descriptor in other.DESCRIPTOR.fields:
        if descriptor.message_type is service_pb2.StatisticDuration.DESCRIPTOR:
            total, more = getattr(into, descriptor.name), getattr(other, descriptor.name)
            total.count += more.count
            total.ns += more.ns


@dataclass(frozen=True)
class TensorSpec:
    """A config input or output as requests see it: datatype, dims (no batch dim) and the model's shape."""

    name: str
    datatype: Datatype
    dims: tuple[int, ...]
    #: The shape the model sees (``reshape``), or None when it is ``dims``.
    reshape: tuple[int, ...] | None
    optional: bool = False


@dataclass(frozen=True, slots=True)
class RequestLayout:
    """What the inputs and outputs asked of a request of the common form mean for one model version, found once
    per distinct bytes (``InferCodec.read``): each raw input's name, dtype, bytes and the shape the model sees, the
    batch size, the outputs asked and the call memory it reserves."""

    inputs: tuple[tuple[str, np.dtype[Any], int, tuple[int, ...]], ...]
    batch: int
    requested: Sequence[tuple[str, Any]]
    memory: int


def item_work(model: onnx.ModelProto, batching: bool) -> int | None:
    """The estimated work (``runtime.cost``) of one batch item of ``model``: its inputs' batch dimension set to 1;
    ``None`` when another dimension is not fixed (the work is unknown: such a model never runs on the loop)."""
    model = copy.deepcopy(model) if model.graph.input else model
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        for position, dim in enumerate(dims):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                continue
            if position > 0 or not batching:
                return None
            dim.Clear()
            dim.dim_value = 1
    return model_cost(model).work


def specs(entries: list[Any] | list[Any]) -> list[TensorSpec]:
    return [
        TensorSpec(
            entry.name,
            datatype_of(entry.data_type),
            tuple(entry.dims),
            tuple(entry.reshape.shape) if entry.HasField("reshape") else None,
            bool(getattr(entry, "optional", False)),
        )
        for entry in entries
    ]


class ModelVersion:
    """One loaded version of a model: checks requests against its config and runs them through its batcher.

    Its requests queue in the serving core's batcher (``batching.BatchQueue``) under Triton's policy (``_Triton``):
    queued requests are taken in arrival order; the largest batch that reaches ``max_batch_size`` or a preferred
    size goes at once, otherwise the queue waits for company until its oldest request has waited
    ``max_queue_delay_microseconds`` (none by default: it goes on the loop's next turn). While every instance runs,
    requests queue and then run together, so batches grow as fast as the model is busy. A batch runs where operator
    work runs, by its cost (``Scheduler.inline_batch``): on the loop when it is tiny host work, else on the serving
    core's worker threads. Use from the event loop thread only.
    """

    def __init__(
        self,
        name: str,
        version: int,
        config: Any,
        run: Runner,
        scheduler: Scheduler,
        *,
        label: str = "",
        prepare: Prepare | None = None,
        work: int | None = None,
        on_device: bool = True,
    ) -> None:
        """``work`` is one batch item's estimated work (``runtime.cost``; None: unknown, never run on the loop) and
        ``on_device`` whether it runs on a device (never on the loop)."""
        self.name = name
        self.version = version
        self.config = config
        self.label = label
        self.inputs = specs(list(config.input))
        self.outputs = specs(list(config.output))
        self.input_by_name = {spec.name: spec for spec in self.inputs}
        self.output_by_name = {spec.name: spec for spec in self.outputs}
        #: What a request that names no output is answered: every output, raw (``InferCodec.requested``).
        self.every_output: Sequence[tuple[str, Any]] = tuple((spec.name, None) for spec in self.outputs)
        #: What requests of the common form mean, by their inputs' and outputs' bytes (``InferCodec.read``; None:
        #: fields that only protobuf reads), and
        #: the serialized heads of responses (name and version; output tensors) by outputs asked, batch size and
        #: output shapes (``InferCodec.encode``): at most ``KEPT`` of each, the oldest going first.
        self.layouts: dict[bytes, RequestLayout | None] = {}
        self.response_heads: dict[tuple[tuple[str, ...], int, tuple[tuple[int, ...], ...]], tuple[bytes, bytes]] = {}
        self.max_batch = config.max_batch_size
        self.stats = Statistics()
        self._run = run
        self._prepare = prepare
        batching = config.dynamic_batching if config.WhichOneof("scheduling_choice") == "dynamic_batching" else None
        self.batching = batching is not None and self.max_batch > 0
        self.preferred = sorted(set(batching.preferred_batch_size)) if batching is not None else []
        self.delay_ns = batching.max_queue_delay_microseconds * 1000 if batching is not None else 0
        self.max_queue = batching.default_queue_policy.max_queue_size if batching is not None else 0
        self.slots = instances(config)
        self.work = work
        self.on_device = on_device
        self._queue: BatchQueue[Outputs] = BatchQueue(_Triton(self, scheduler), scheduler.workers)

    # -- requests -----------------------------------------------------------------------------------------------

    def batch_of(self, shapes: dict[str, list[int]]) -> int:
        """Check the request's shapes against the config; its batch size (1 for a model that does not batch).

        Raises:
            InvalidArgument: a shape that does not match, or a batch over max_batch_size (field paths given by
                the caller's input order).
        """
        batch = None
        for index, (name, shape) in enumerate(shapes.items()):
            spec = self.input_by_name[name]
            if self.max_batch > 0:
                if not shape:
                    raise InvalidArgument(
                        _shape_field(index), f"'{name}' needs a batch dimension before its dims {list(spec.dims)}"
                    )
                size, rest = shape[0], shape[1:]
                if size < 1 or size > self.max_batch:
                    raise InvalidArgument(
                        _shape_field(index),
                        f"batch size {size} of '{name}' is outside 1..{self.max_batch} (max_batch_size)",
                    )
                if batch is not None and size != batch:
                    raise InvalidArgument(
                        _shape_field(index), f"'{name}' has batch size {size}; another input has {batch}"
                    )
                batch = size
            else:
                rest = shape
            if not shape_matches(rest, spec.dims):
                expected = ([-1] if self.max_batch > 0 else []) + list(spec.dims)
                raise InvalidArgument(
                    _shape_field(index), f"shape {shape} of '{name}' does not match the model's {expected}"
                )
        return batch or 1

    def keep(self, kept: dict[K, V], key: K, value: V) -> None:
        """Keep ``value`` in one of the version's caches (``layouts``, ``response_heads``): a model with dynamic
        shapes sees many, so at most ``KEPT``, the oldest going first."""
        if len(kept) >= KEPT:
            del kept[next(iter(kept))]
        kept[key] = value

    def model_shape(self, spec: TensorSpec, shape: list[int], batch: int) -> list[int]:
        """The shape the model sees for a request tensor (its config ``reshape`` applied)."""
        if spec.reshape is None:
            return shape
        return ([batch] if self.max_batch > 0 else []) + list(spec.reshape)

    async def infer(self, feeds: Feeds, batch: int, deadline: float | None) -> dict[str, np.ndarray]:
        """Queue one request's feeds; its outputs (by name) once its batch ran.

        Raises:
            InvalidArgument: the model's ``prepare`` refused a value.
            Unavailable: the queue is full (``max_queue_size``).
            DeadlineExceeded: the deadline passed while it waited.
        """
        if self.max_queue and len(self._queue.queue) >= self.max_queue:
            raise Unavailable(f"Exceeds maximum queue size ({self.max_queue}) of model '{self.name}'")
        if self._prepare is not None:
            feeds = self._prepare(feeds)
        key = None  # requests batch together only when their shapes past the batch axis are equal
        if self.batching:
            shapes = []  # NOTE: a loop, not a comprehension's frame: this runs on every request
            for array in feeds.values():
                shapes.append(array.shape[1:])
            key = tuple(shapes)
        outputs, _ = await self._queue.result(feeds, batch, key, deadline)
        return outputs


def _shape_field(index: int) -> str:
    return f"inputs[{index}].shape"


#: A member's result: its outputs by name, and its batch's input, infer and output nanoseconds.
Outputs = tuple[dict[str, np.ndarray], tuple[int, int, int]]


class _Triton:
    """A model version's batching policy (``batching.Policy``): Triton's dynamic batcher, with its statistics."""

    def __init__(self, model: ModelVersion, scheduler: Scheduler) -> None:
        self.model = model
        self.scheduler = scheduler
        self.slots = model.slots
        self.full = model.max_batch if model.batching else 1

    def take(self, queue: deque[Member[Outputs]], now_ns: int) -> int | float:
        model = self.model
        if not model.batching:
            return 1
        first = queue[0]
        total = 0
        prefix: list[int] = []  # batch sizes reachable by taking the queue's first requests
        for pending in queue:
            if pending.key != first.key or total + pending.size > model.max_batch:
                break
            total += pending.size
            prefix.append(total)
        if total == model.max_batch or (len(prefix) < len(queue)):
            return len(prefix)  # the batch cannot grow: the next request does not fit or does not match
        reachable = [count for count, size in enumerate(prefix, 1) if size in model.preferred]
        if reachable:
            return reachable[-1]  # the largest preferred batch that can be formed goes at once
        waited = now_ns - first.arrived
        if waited < model.delay_ns:
            return (model.delay_ns - waited) / 1e9
        return len(prefix)

    def inline(self, batch: list[Member[Outputs]]) -> bool:
        model = self.model
        if model.work is None:
            return False
        items = 0
        for member in batch:
            items += member.size
        return self.scheduler.inline_batch(model.work, model.on_device, items)

    def run(self, batch: list[Member[Outputs]]) -> list[Outputs]:
        """Concatenate the batch's feeds on the batch axis, run once, split the outputs."""
        t0 = time.perf_counter_ns()
        if len(batch) == 1:
            feeds = batch[0].feeds
        else:
            feeds = {name: np.concatenate([p.feeds[name] for p in batch]) for name in batch[0].feeds}
        t1 = time.perf_counter_ns()
        outputs = self.model._run(feeds, None)
        t2 = time.perf_counter_ns()
        if len(batch) == 1:
            return [(outputs, (t1 - t0, t2 - t1, time.perf_counter_ns() - t2))]
        bounds = np.cumsum([p.size for p in batch])[:-1]
        split = {name: np.split(array, bounds) for name, array in outputs.items()}
        results = [{name: parts[i] for name, parts in split.items()} for i in range(len(batch))]
        timings = (t1 - t0, t2 - t1, time.perf_counter_ns() - t2)
        return [(result, timings) for result in results]

    def ran(
        self, batch: list[Member[Outputs]], started_ns: int, results: list[Outputs] | None, error: BaseException | None
    ) -> None:
        """Count the batch as Triton counts it (ModelStatistics; the serving core's batch-size metric too)."""
        # NOTE: each duration summed over the batch and added once, not once per request: this runs for every batch.
        stats = self.model.stats
        ended = time.perf_counter_ns()
        requests = len(batch)
        waited = lived = size = 0
        for member in batch:
            waited += started_ns - member.arrived
            lived += ended - member.arrived
            size += member.size
        queue = stats.queue  # NOTE: Duration.add written out: this runs for every batch
        queue.count += requests
        queue.ns += waited
        if results is None:
            stats.fail.add(lived, requests)
            return
        stats.execution_count += 1
        stats.inference_count += size
        stats.last_inference_ms = time.time_ns() // 1_000_000
        stats.ran(size, requests, lived, results[0][1])
        self.scheduler.observe_batch(requests)
