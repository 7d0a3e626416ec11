"""A model's config: config.pbtxt read as protobuf text, completed from the ONNX model as Triton's ONNX Runtime
backend completes it, and checked against the model's inputs and outputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx
from google.protobuf import text_format

from dmlrpc_server.oip.protocol import model_config_pb2
from dmlrpc_server.oip.tensors import BY_ONNX, datatype_of

ModelConfig: Any = model_config_pb2.ModelConfig
PLATFORM = "onnxruntime_onnx"
BACKEND = "onnxruntime"
#: The platform and backend of a DirectML graph (``model.dmlgraph``; ``oip/graphs.py``).
GRAPH_PLATFORM = "directml_graph"
GRAPH_BACKEND = "dmlrpc"
#: The platforms and backends a repository entry may name to be served here.
ACCEPTED = {"", PLATFORM, BACKEND, GRAPH_PLATFORM, GRAPH_BACKEND}


class ModelError(Exception):
    """A model that cannot be served; the message is the reason RepositoryIndex reports."""


@dataclass(frozen=True)
class TensorInfo:
    """One ONNX graph input or output: its name, element type and dims (-1 where symbolic or unknown)."""

    name: str
    elem_type: int
    dims: tuple[int, ...]


def read_config(directory: Path) -> Any:
    """``config.pbtxt`` of a model directory (an empty config when there is none).

    Raises:
        ModelError: the file is not a valid ModelConfig in text format, or names another model.
    """
    config = ModelConfig()
    path = directory / "config.pbtxt"
    if path.is_file():
        try:
            text_format.Parse(path.read_text(), config)
        except (text_format.ParseError, UnicodeDecodeError) as error:
            raise ModelError(f"config.pbtxt is not a valid ModelConfig: {error}") from None
    if config.name and config.name != directory.name:
        raise ModelError(f"config.pbtxt names model '{config.name}' but its directory is '{directory.name}'")
    config.name = directory.name
    if config.platform not in ACCEPTED or config.backend not in ACCEPTED:
        raise ModelError(
            f"platform '{config.platform}' / backend '{config.backend}' is not served here "
            f"(only {PLATFORM} / {BACKEND}, or {GRAPH_PLATFORM} / {GRAPH_BACKEND} for a DirectML graph)"
        )
    if config.WhichOneof("scheduling_choice") in {"sequence_batching", "ensemble_scheduling"}:
        raise ModelError(f"{config.WhichOneof('scheduling_choice')} is not supported; use dynamic_batching or none")
    if config.model_transaction_policy.decoupled:
        raise ModelError("decoupled models are not supported (an ONNX model answers each request once)")
    return config


def onnx_io(model: onnx.ModelProto) -> tuple[list[TensorInfo], list[TensorInfo]]:
    """The graph's real inputs (initializers excluded) and outputs."""
    initializers = {init.name for init in model.graph.initializer}

    def info(value: onnx.ValueInfoProto) -> TensorInfo:
        tensor = value.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim)
        return TensorInfo(value.name, tensor.elem_type, dims)

    inputs = [info(v) for v in model.graph.input if v.name not in initializers]
    return inputs, [info(v) for v in model.graph.output]


def complete(config: Any, inputs: list[TensorInfo], outputs: list[TensorInfo], default_max_batch: int) -> None:
    """Fill in what the config leaves out from the model's I/O, as Triton's ONNX Runtime backend does.

    Raises:
        ModelError: the config sets max_batch_size but the model cannot batch, or a type has no protocol datatype.
    """
    for tensor in [*inputs, *outputs]:
        if tensor.elem_type not in BY_ONNX:
            raise ModelError(
                f"'{tensor.name}' has ONNX element type {tensor.elem_type}, which has no protocol datatype"
            )
        if BY_ONNX[tensor.elem_type].name == "BF16":
            # NOTE: ONNX Runtime's Python API cannot hand BFLOAT16 tensors to or from NumPy; Triton's ONNX Runtime
            # backend has no BF16 mapping either.
            raise ModelError(f"'{tensor.name}' is BFLOAT16, which ONNX Runtime's Python API cannot exchange")
    can_batch = all(t.dims and t.dims[0] == -1 for t in [*inputs, *outputs])
    if config.input and config.output:
        return
    if config.max_batch_size == 0 and can_batch:
        config.max_batch_size = default_max_batch
        if config.max_batch_size > 1 and config.WhichOneof("scheduling_choice") is None:
            config.dynamic_batching.SetInParent()
    elif config.max_batch_size > 0 and not can_batch:
        raise ModelError(
            f"max_batch_size is {config.max_batch_size} but the model cannot batch: every input and output needs a "
            "variable first dimension"
        )
    batching = config.max_batch_size > 0
    if not config.input:
        for tensor in inputs:
            entry = config.input.add(name=tensor.name, data_type=BY_ONNX[tensor.elem_type].config)
            _dims(entry, tensor.dims[1:] if batching else tensor.dims)
    if not config.output:
        for tensor in outputs:
            out = config.output.add(name=tensor.name, data_type=BY_ONNX[tensor.elem_type].config)
            _dims(out, tensor.dims[1:] if batching else tensor.dims)


def _dims(entry: Any | Any, dims: tuple[int, ...]) -> None:
    if dims:
        entry.dims.extend(dims)
    else:
        # A scalar: Triton's dims cannot be empty, so it is [1] on the wire and reshaped to [] for the model.
        entry.dims.append(1)
        entry.reshape.SetInParent()


def check(config: Any, inputs: list[TensorInfo], outputs: list[TensorInfo]) -> None:
    """The config's inputs and outputs against the model's: names, data types and ranks.

    Raises:
        ModelError: what does not match, named.
    """
    batch = 1 if config.max_batch_size > 0 else 0
    by_name = {t.name: t for t in inputs}
    for kind, entries, model in (
        ("input", config.input, by_name),
        ("output", config.output, {t.name: t for t in outputs}),
    ):
        for entry in entries:
            tensor = model.get(entry.name)
            if tensor is None:
                raise ModelError(f"config {kind} '{entry.name}' is not a {kind} of the model ({sorted(model)})")
            expected = BY_ONNX[tensor.elem_type]
            if entry.data_type != expected.config:
                raise ModelError(
                    f"config {kind} '{entry.name}' is {datatype_of(entry.data_type).name} but the model's is "
                    f"{expected.name}"
                )
            shape = list(entry.reshape.shape) if entry.HasField("reshape") else list(entry.dims)
            if len(shape) + batch != len(tensor.dims):
                raise ModelError(
                    f"config {kind} '{entry.name}' has {len(shape)} dims (plus {batch} batch) but the model's has "
                    f"rank {len(tensor.dims)}"
                )
    missing = [name for name in by_name if name not in {entry.name for entry in config.input}]
    if missing:
        raise ModelError(f"the model's inputs {missing} are not in the config")
    if config.max_batch_size < 0:
        raise ModelError("max_batch_size cannot be negative")


def instances(config: Any) -> int:
    """Runs of the model at once: the sum of its instance groups' counts (one when it names none)."""
    return max(1, sum(max(1, int(group.count)) for group in config.instance_group))


def fill_instance_group(config: Any) -> None:
    """An instance group of one when the config has none (what ModelConfig then reports)."""
    if not config.instance_group:
        config.instance_group.add(name=config.name, count=1, kind=model_config_pb2.ModelInstanceGroup.KIND_CPU)
    if not config.platform and not config.backend:
        config.platform = PLATFORM
        config.backend = BACKEND
