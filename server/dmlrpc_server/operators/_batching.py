"""How an operator's lowered model runs several requests of one desc at once (dynamic batching)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import onnx

#: The symbolic name of the leading batch dimension of a batched model.
BATCH_DIM = "batch"


class Staging(Protocol):
    """Where stacked feeds are staged: the runtime's buffer pool (``runtime.buffers.BufferPool``), named here as
    what the operators need of it, so that operators never import the runtime they are compiled by."""

    def acquire(self, nbytes: int, *, zeroed: bool = False) -> np.ndarray: ...


class BatchRule:
    """Stack N requests on a new leading axis: every graph input and output gains a leading ``batch`` dimension,
    and the nodes named in ``axis_nodes`` have their (non-negative) ``axis`` attribute shifted by one.

    Results are split back along that axis; because each request occupies its own slice, and the stacked
    operation never mixes slices, request i's outputs equal what it would get alone.
    """

    def __init__(self, *axis_nodes: str) -> None:
        self.axis_nodes = frozenset(axis_nodes)

    def model(self, model: onnx.ModelProto) -> onnx.ModelProto:
        batched = onnx.ModelProto()
        batched.CopyFrom(model)
        graph = batched.graph
        for value in (*graph.input, *graph.output):
            dims = value.type.tensor_type.shape.dim
            dims.insert(0, onnx.TensorShapeProto.Dimension(dim_param=BATCH_DIM))
        for node in graph.node:
            if node.op_type in self.axis_nodes:
                for attribute in node.attribute:
                    if attribute.name == "axis":
                        attribute.i += 1
        self.adjust(graph)
        return batched

    def adjust(self, graph: onnx.GraphProto) -> None:
        """Operator-specific changes to the batched graph beyond the leading dimension."""

    def stack(
        self, requests: Sequence[dict[str, np.ndarray]], pool: Staging
    ) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
        """The batched feeds (staged in pooled buffers, fully overwritten) and the buffers to release after the run."""
        feeds: dict[str, np.ndarray] = {}
        staging: list[np.ndarray] = []
        for name, first in requests[0].items():
            parts = [self.part(name, i, request[name]) for i, request in enumerate(requests)]
            shape = (len(parts), *parts[0].shape)
            buffer = pool.acquire(int(np.prod(shape)) * first.dtype.itemsize)
            staging.append(buffer)
            target = buffer.view(first.dtype).reshape(shape)
            np.stack(parts, out=target)
            feeds[name] = target
        return feeds, staging

    def part(self, name: str, index: int, feed: np.ndarray) -> np.ndarray:
        """Request ``index``'s slice of feed ``name`` (the feed itself unless the operator needs more)."""
        return feed


class IndexTupleBatchRule(BatchRule):
    """For gathers and scatters by index tuples (ONNX ScatterND/GatherND): each tuple of the ``indices`` feed gets
    its request's batch coordinate prepended, so the tuples address the stacked data."""

    def __init__(self, indices: str = "indices") -> None:
        super().__init__()
        self.indices = indices

    def adjust(self, graph: onnx.GraphProto) -> None:
        for value in graph.input:
            if value.name == self.indices:
                last = value.type.tensor_type.shape.dim[-1]
                last.dim_value += 1

    def part(self, name: str, index: int, feed: np.ndarray) -> np.ndarray:
        if name != self.indices:
            return feed
        coordinate = np.full((*feed.shape[:-1], 1), index, dtype=feed.dtype)
        return np.concatenate([coordinate, feed], axis=-1)
