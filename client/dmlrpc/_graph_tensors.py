"""The tensors of a graph being built (``GraphTensor``): what a builder traces in place of an array."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlrpc.codec import DTYPE_BY_DATA_TYPE
from dmlrpc.v1 import tensor_pb2

__all__ = ["GraphTensor"]


@dataclass(frozen=True)
class GraphTensor:
    """A tensor of a graph being built: a graph input, a constant, or a node's output.

    Wherever a ``dmlrpc.ops`` builder takes an array it takes a graph tensor too (``np.asarray`` of one is a
    stand-in of its dtype and shape, one element broadcast: no memory), so a Graph node is its builder traced.
    """

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

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        stand_in = np.broadcast_to(np.zeros((), self.dtype), self.shape)
        return stand_in if dtype is None else stand_in.astype(dtype)
