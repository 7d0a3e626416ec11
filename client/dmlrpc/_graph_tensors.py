"""The tensors of a graph being built (``GraphTensor``): what a builder traces in place of an array."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlrpc.codec import Described
from dmlrpc.v1 import tensor_pb2

__all__ = ["GraphTensor"]


@dataclass(frozen=True)
class GraphTensor(Described):
    """A tensor of a graph being built: a graph input, a constant, or a node's output.

    Wherever a ``dmlrpc.ops`` builder takes an array it takes a graph tensor too (``np.asarray`` of one is a
    stand-in of its dtype and shape, one element broadcast: no memory), so a Graph node is its builder traced.
    """

    kind: str  # "input", "constant" or "node"
    index: int
    output: int
    desc: tensor_pb2.TensorDesc

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        stand_in = np.broadcast_to(np.zeros((), self.dtype), self.shape)
        return stand_in if dtype is None else stand_in.astype(dtype)
