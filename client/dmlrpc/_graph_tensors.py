"""The tensors of a graph being built (``GraphTensor``) and the checks every ``Graph`` node makes of its inputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlrpc import ops
from dmlrpc.codec import DTYPE_BY_DATA_TYPE
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.v1 import tensor_pb2

__all__ = ["GraphTensor"]


@dataclass(frozen=True)
class GraphTensor:
    """A tensor of a graph being built: a graph input, a constant, or a node's output."""

    kind: str  # "input", "constant" or "node"
    index: int
    output: int
    desc: tensor_pb2.TensorDesc

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.desc.buffer.sizes)

    @property
    def dtype(self) -> np.dtype[Any]:
        return DTYPE_BY_DATA_TYPE[self.desc.buffer.data_type]


def _placeholder(tensor: GraphTensor) -> np.ndarray:
    """An array standing for ``tensor`` in the ops builders (one element broadcast: no memory)."""
    return np.broadcast_to(np.zeros((), tensor.dtype), tensor.shape)


def _tensors(where: str, inputs: Sequence[object], *, optional: bool = False) -> None:
    for i, tensor in enumerate(inputs):
        if not isinstance(tensor, GraphTensor) and not (optional and tensor is None):
            raise ArgumentTypeError(
                f"inputs[{i}]",
                f"{where}: inputs[{i}] is a {type(tensor).__name__}, not a GraphTensor (an array enters a graph "
                f"through Graph.input or Graph.constant)",
            )


def _one_shape(where: str, inputs: Sequence[GraphTensor]) -> None:
    """Tensors joined by an edge keep their shape (DirectML's rule), so a node cannot broadcast its inputs."""
    _tensors(where, inputs)
    if len({tensor.shape for tensor in inputs}) > 1:
        shapes = " and ".join(str(tensor.shape) for tensor in inputs)
        raise ArgumentValueError(
            "inputs",
            f"{where}: inputs of shapes {shapes}: a graph node's inputs have one shape (edges do not broadcast); "
            f"give the graph inputs that shape",
        )


def _pooled_tensor(where: str, tensor: object) -> None:
    """A graph's pooling input is 4-D or 5-D: the SDK's 3-D form reshapes, and an edge cannot."""
    _tensors(where, [tensor])
    assert isinstance(tensor, GraphTensor)
    if len(tensor.shape) not in (4, 5):
        raise ArgumentValueError(
            "input",
            f"{where}: input has {len(tensor.shape)} dimensions; a graph's pooling node takes (N, C, H, W) or "
            f"(N, C, D, H, W)",
            allowed=("4", "5"),
        )


class NodeBuilders:
    """What the ``Graph`` mixins of the operator families build their nodes with (``node`` and ``_exact_node`` are
    Graph's)."""

    def node(self, operator_desc: Any, inputs: Sequence[GraphTensor | None]) -> list[GraphTensor]:
        raise NotImplementedError  # Graph's

    def _exact_node(self, where: str, call: ops.Call, inputs: dict[str, GraphTensor | None]) -> list[GraphTensor]:
        raise NotImplementedError  # Graph's

    def _built(
        self,
        where: str,
        build: Callable[..., ops.Call],
        tensors: dict[str, GraphTensor | None],
        required: int,
        **attributes: Any,
    ) -> list[GraphTensor]:
        """``build``'s node: ``tensors`` in binding order (the first ``required`` of them must be given), passed
        to the builder by name as placeholders, with ``attributes``."""
        values = list(tensors.values())
        _tensors(where, values[:required])
        _tensors(where, values[required:], optional=True)
        placeholders = {name: None if t is None else _placeholder(t) for name, t in tensors.items()}
        return self._exact_node(where, build(**placeholders, **attributes), tensors)
