"""DirectML graphs and compiled handles as models: ``model.dmlgraph`` files compiled through the catalog, and the
adapter that runs a compiled operator or graph as a model version's runner, as Dispatch runs it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from google.protobuf.message import DecodeError

from dmlrpc.codec import TensorLayout, data_type_name, decode, encode
from dmlrpc.schema import tensor_fields
from dmlrpc.v1 import operators_pb2, service_pb2
from dmlrpc_server import binding
from dmlrpc_server.catalog import Catalog, compile_flags
from dmlrpc_server.errors import ServiceError
from dmlrpc_server.oip.config import GRAPH_BACKEND, GRAPH_PLATFORM, ModelError, TensorInfo
from dmlrpc_server.oip.models import Feeds
from dmlrpc_server.oip.tensors import DATATYPES, Datatype, datatype_of
from dmlrpc_server.runtime.buffers import Buffer, BufferPool
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.handles import owned_buffers

_log = logging.getLogger(__name__)

#: ModelConfig.platform of a published CompileOperator handle (a graph's, file or handle, is GRAPH_PLATFORM).
OPERATOR_PLATFORM = "directml_operator"
#: ModelConfig.backend of both.
BACKEND = GRAPH_BACKEND
PLATFORMS = {GRAPH_PLATFORM, OPERATOR_PLATFORM}
#: The file a version directory holds for a DirectML graph: a serialized CompileGraphRequest.
GRAPH_FILE = "model.dmlgraph"

#: The protocol datatype of each NumPy dtype a DML tensor can have (the 4-bit types have none; BOOL travels as
#: UINT8 in DirectML, and BF16 shares UINT16's NumPy type, so neither is a DML tensor's datatype).
_BY_DTYPE: dict[tuple[str, int], Datatype] = {
    (d.numpy.kind, d.numpy.itemsize): d for d in DATATYPES.values() if d.name not in {"BOOL", "BF16", "BYTES"}
}


@dataclass(frozen=True)
class Endpoint:
    """One model input or output: its protocol name, its binding index and its tensor's layout."""

    name: str
    index: int
    layout: TensorLayout
    datatype: Datatype


def is_graph(config: Any, version_directory: Path) -> bool:
    """Whether a repository entry is a DirectML graph: its config names the platform, or (naming none) its version
    directory holds ``model.dmlgraph`` (``default_model_filename`` ending ``.dmlgraph`` counts too)."""
    if config.platform in PLATFORMS or config.backend == BACKEND:
        return True
    if config.platform or config.backend:
        return False
    name = config.default_model_filename
    return name.endswith(".dmlgraph") or (not name and (version_directory / GRAPH_FILE).is_file())


def graph_file(version_directory: Path, config: Any) -> Path:
    name = config.default_model_filename if config.default_model_filename.endswith(".dmlgraph") else GRAPH_FILE
    return version_directory / name


class CompiledModel:
    """A compiled operator or graph served as a model: requests carry each tensor dense, in its desc's sizes (a
    leading batch dimension when the model batches); the server lays each out per its desc, as a Dispatch buffer,
    binds owned inputs as the handle does, and reads the outputs back from the buffers Dispatch would return."""

    def __init__(
        self,
        pool: BufferPool,
        compiled: Compiled,
        inputs: list[Endpoint],
        outputs: list[Endpoint],
        owned: dict[int, Buffer],
        platform: str,
    ) -> None:
        self.pool = pool
        self.compiled = compiled
        self.inputs = inputs
        self.outputs = outputs
        self.platform = platform
        plan = compiled.plan
        #: The arrays plan.prepare takes, per binding: owned inputs decoded once, the others filled per request.
        self._fixed: list[np.ndarray | None] = [
            None if data is None or layout is None else decode(data, layout)
            for data, layout in ((owned.get(i), layout) for i, layout in enumerate(plan.inputs))
        ]
        #: The compiled run batches several requests at once (its batch rule); else a batch runs item by item.
        self.batches = compiled.batching is not None

    def io(self, batching: bool) -> tuple[list[TensorInfo], list[TensorInfo]]:
        """The inputs and outputs as ``config.TensorInfo`` (ONNX element types; -1 first when batching)."""
        lead = (-1,) if batching else ()
        return (
            [TensorInfo(e.name, e.datatype.onnx, lead + e.layout.sizes) for e in self.inputs],
            [TensorInfo(e.name, e.datatype.onnx, lead + e.layout.sizes) for e in self.outputs],
        )

    # -- on the event loop: one request's tensors as the compiled plan's feeds ----------------------------------

    def prepare(self, feeds: Feeds, batching: bool) -> Feeds:
        """A request's dense tensors as the plan's feeds (one item, or its items stacked on a new leading axis), with
        the plan's data-dependent checks (index ranges, ...) applied per item before the request joins a batch.

        Raises:
            InvalidArgument: a value breaks a rule of an operator in it (paths as Dispatch names them).
        """
        if not batching:
            return self._item(feeds)
        count = next(iter(feeds.values())).shape[0] if feeds else 1
        items = [self._item({name: array[i] for name, array in feeds.items()}) for i in range(count)]
        return {name: np.stack([item[name] for item in items]) for name in items[0]}

    def _item(self, feeds: Feeds) -> Feeds:
        arrays = list(self._fixed)
        for endpoint in self.inputs:
            layout = endpoint.layout
            array = feeds[endpoint.name]
            if layout.is_packed and array.dtype == layout.dtype:
                arrays[endpoint.index] = array  # what decoding its buffer would give: no copy
            else:
                arrays[endpoint.index] = decode(encode(array, layout), layout)
        return self.compiled.plan.prepare(arrays)

    # -- on a worker thread: a batch's feeds run, the outputs as dense arrays -----------------------------------

    def run(self, feeds: Feeds, options: ort.RunOptions | None, batching: bool) -> dict[str, np.ndarray]:
        compiled = self.compiled
        if not batching:
            return self._outputs(compiled.run(feeds, options))
        count = next(iter(feeds.values())).shape[0] if feeds else 1
        items = [{name: array[i] for name, array in feeds.items()} for i in range(count)]
        if self.batches and count > 1:
            results = compiled.run_batch(items, self.pool, options)
        else:
            results = [compiled.run(item, options) for item in items]
        per_item = [self._outputs(result) for result in results]
        return {e.name: np.stack([outputs[e.name] for outputs in per_item]) for e in self.outputs}

    def _outputs(self, results: list[np.ndarray]) -> dict[str, np.ndarray]:
        # The bytes Dispatch would send (the same encoding step), read back per the output descs.
        encoded = binding.encode_outputs(self.compiled, self.pool, list, results)
        arrays: dict[str, np.ndarray] = {}
        for endpoint in self.outputs:
            data = encoded[endpoint.index]
            assert data is not None and not isinstance(data, list)  # graph and operator outputs here are single tensors
            arrays[endpoint.name] = np.array(decode(data, endpoint.layout))
        return arrays


def endpoints(layouts: tuple[TensorLayout | None, ...], names: list[str], skip: set[int], what: str) -> list[Endpoint]:
    """The model tensors of a plan's bindings: every set one not in ``skip``, named by ``names`` (per binding).

    Raises:
        ModelError: a tensor whose data type has no protocol datatype (the 4-bit types).
    """
    found = []
    for index, (layout, name) in enumerate(zip(layouts, names, strict=True)):
        if layout is None or index in skip:
            continue
        datatype = _BY_DTYPE.get((layout.dtype.kind, layout.dtype.itemsize))
        if datatype is None:
            raise ModelError(f"{what} {index} is {data_type_name(layout.data_type)}, which has no protocol datatype")
        found.append(Endpoint(name, index, layout, datatype))
    return found


def graph_names(count: int, prefix: str) -> list[str]:
    """Graph inputs are INPUT0, INPUT1, ... and outputs OUTPUT0, ... (graph indices; DirectML edge names belong to
    edges, of which one graph input may have several)."""
    return [f"{prefix}{i}" for i in range(count)]


def operator_names(case: str, arrays: tuple[int | None, ...], count: int, *, output: bool) -> list[str]:
    """Per binding of an operator desc: its tensor field's name (the proto's, DirectML's in snake_case), a tensor
    array's elements as ``name_0``, ``name_1``, ..."""
    descriptor = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name[case].message_type
    fields = tensor_fields(descriptor)[1 if output else 0]
    names: list[str] = []
    for position, field in enumerate(fields):
        length = arrays[position] if position < len(arrays) else None
        if field.array and length is not None:
            names.extend(f"{field.name}_{i}" for i in range(length))
        else:
            names.append(field.name)
    if len(names) != count:  # pragma: no cover - the plan and the schema always agree
        raise ModelError(f"{case}: {count} bindings but {len(names)} tensor names")
    return names


def compiled_model(pool: BufferPool, compiled: Compiled, owned: dict[int, Buffer], *, graph: bool) -> CompiledModel:
    """A compiled operator or graph as a model (owned inputs are no model inputs: they stay bound)."""
    plan = compiled.plan
    if graph:
        in_names = graph_names(len(plan.inputs), "INPUT")
        out_names = graph_names(len(plan.outputs), "OUTPUT")
    else:
        in_names = operator_names(compiled.label, plan.input_arrays, len(plan.inputs), output=False)
        out_names = operator_names(compiled.label, plan.output_arrays, len(plan.outputs), output=True)
    inputs = endpoints(plan.inputs, in_names, set(owned), "input")
    outputs = endpoints(plan.outputs, out_names, set(), "output")
    return CompiledModel(pool, compiled, inputs, outputs, owned, GRAPH_PLATFORM if graph else OPERATOR_PLATFORM)


def load_graph(path: Path, catalog: Catalog, pool: BufferPool, max_nodes: int) -> CompiledModel:
    """Compile a ``model.dmlgraph`` file (blocking: a worker thread runs it) as CompileGraph compiles its request.

    Raises:
        ModelError: the file is missing or not a CompileGraphRequest, or the graph breaks a rule (with the field path
            CompileGraph's error names).
    """
    if not path.is_file():
        raise ModelError(f"no graph file '{path.name}'")
    try:
        request = service_pb2.CompileGraphRequest.FromString(path.read_bytes())
    except DecodeError as error:
        raise ModelError(f"{path.name} is not a serialized dmlrpc.v1.CompileGraphRequest: {error}") from None
    try:
        compiled, lowering = catalog.compile_graph(
            request.graph_desc, max_nodes=max_nodes, flags=compile_flags(request.execution_flags)
        )
        owned = owned_buffers(request.owned_inputs, compiled.plan.inputs, lowering.owned)
    except ServiceError as error:
        raise ModelError(f"{path.name}: {error.message}") from None
    return compiled_model(pool, compiled, owned, graph=True)


def complete(config: Any, model: CompiledModel, default_max_batch: int) -> None:
    """Fill in what the config leaves out from the compiled model, as ``config.complete`` does from an ONNX model:
    a graph whose run batches (its operators' batch rule) gets ``default_max_batch`` and a dynamic batcher; inputs and
    outputs come from the descs (dims = the desc's sizes, the batch dimension excluded)."""
    if not config.platform:
        config.platform = model.platform
    if not config.backend:
        config.backend = BACKEND
    if config.max_batch_size == 0 and model.batches and not (config.input and config.output):
        config.max_batch_size = default_max_batch
        if config.max_batch_size > 1 and config.WhichOneof("scheduling_choice") is None:
            config.dynamic_batching.SetInParent()
    if not config.input:
        for e in model.inputs:
            config.input.add(name=e.name, data_type=e.datatype.config, dims=e.layout.sizes)
    if not config.output:
        for e in model.outputs:
            config.output.add(name=e.name, data_type=e.datatype.config, dims=e.layout.sizes)


def check(config: Any, model: CompiledModel) -> None:
    """The config's inputs and outputs against the compiled model's: the same names, datatypes and dims.

    Raises:
        ModelError: what does not match, named.
    """
    if config.max_batch_size < 0:
        raise ModelError("max_batch_size cannot be negative")
    for kind, entries, tensors in (("input", config.input, model.inputs), ("output", config.output, model.outputs)):
        by_name = {e.name: e for e in tensors}
        for entry in entries:
            tensor = by_name.get(entry.name)
            if tensor is None:
                raise ModelError(f"config {kind} '{entry.name}' is not a {kind} of the graph ({sorted(by_name)})")
            if entry.data_type != tensor.datatype.config:
                raise ModelError(
                    f"config {kind} '{entry.name}' is {datatype_of(entry.data_type).name} but the graph's is "
                    f"{tensor.datatype.name}"
                )
            if tuple(entry.dims) != tensor.layout.sizes or entry.HasField("reshape"):
                raise ModelError(
                    f"config {kind} '{entry.name}' has dims {list(entry.dims)} but the graph's tensor has sizes "
                    f"{list(tensor.layout.sizes)} (no reshape: a DirectML tensor's sizes are fixed)"
                )
        missing = [name for name in by_name if name not in {entry.name for entry in entries}]
        if missing:
            raise ModelError(f"the graph's {kind}s {missing} are not in the config")


__all__ = [
    "BACKEND",
    "GRAPH_FILE",
    "GRAPH_PLATFORM",
    "OPERATOR_PLATFORM",
    "CompiledModel",
    "check",
    "compiled_model",
    "complete",
    "graph_file",
    "is_graph",
    "load_graph",
]
