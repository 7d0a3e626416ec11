"""DML_RANDOM_GENERATOR as a NumPy-style builder."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import GraphFace, Result, operator, present, with_optional
from dmlrpc.ops.base import Call, _array, _flag, _wrap
from dmlrpc.ops.spatial_grad import _shape
from dmlrpc.v1 import operators_pb2

__all__ = ["random_generator", "unsigned_words"]

#: PHILOX_4X32_10's state: a 128-bit counter (words 0-3, least significant first) and a 64-bit key (words 4-5).
_STATE = (1, 1, 1, 6)


def unsigned_words(value: object, argument: str, where: str, count: int | None = None) -> np.ndarray:
    """``value`` as UINT32: a uint32 array as it is, a list or array of other integers if every value fits."""
    data = _array(value, argument, where)
    if data.dtype != np.uint32:
        if data.dtype.kind not in "iu" or (data.size and (data.min() < 0 or data.max() > np.iinfo(np.uint32).max)):
            raise ArgumentTypeError(
                argument,
                f"{where}: {argument} has dtype {data.dtype}; it takes uint32 (or integers from 0 to 2**32 - 1)",
                allowed=("uint32",),
            )
        data = data.astype(np.uint32)
    if count is not None and data.size != count:
        raise ArgumentValueError(argument, f"{where}: {argument} has shape {data.shape}; it takes {count} values")
    return data


def _four_dimensional(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A graph's random values are 4-D, as DirectML's desc has them: ``shape`` with leading 1s."""
    shape = arguments["shape"]
    sizes = (shape,) if isinstance(shape, int) else tuple(shape)
    return {"shape": (1,) * (4 - len(sizes)) + sizes}


@operator(
    sends=("random_generator",), result=Result(with_optional, present), graph=GraphFace(prepare=_four_dimensional)
)
def random_generator(input_state: npt.ArrayLike, shape: int | Sequence[int], *, next_state: bool = True) -> Call:
    """DML_RANDOM_GENERATOR_OPERATOR_DESC: ``shape`` uniformly distributed uint32 values from the Philox 4x32-10
    generator (the only DML_RANDOM_GENERATOR_TYPE), and the state to pass next time (``next_state``).

    ``input_state`` is 6 uint32 words (any shape): a 128-bit counter, least significant word first, then a
    64-bit key. Values come in blocks of 4 per counter value, in row-major order; the next state's counter has
    advanced by ``ceil(count / 4)`` (modulo 2**128), its key unchanged, so consecutive calls continue one stream.

    DirectML's rules: InputStateTensor {1, 1, 1, 6}, OutputTensor 4-D (``shape`` of 1 to 4 dimensions travels with
    leading 1s and comes back as given), all UINT32; OutputStateTensor (optional) has the state's sizes.

    Raises:
        ArgumentValueError, ArgumentTypeError: a state that is not 6 unsigned 32-bit words, a shape of more than 4
            dimensions or a size below 1.
    """
    where = "random_generator"
    state = unsigned_words(input_state, "input_state", where, math.prod(_STATE))
    sizes = _shape(shape, "shape", where, (1, 2, 3, 4))
    wire = (1,) * (4 - len(sizes)) + sizes
    desc = operators_pb2.RandomGeneratorOperatorDesc(
        input_state_tensor=tensor_desc((np.uint32, _STATE)),
        output_tensor=tensor_desc((np.uint32, wire)),
        type=operators_pb2.RANDOM_GENERATOR_TYPE_PHILOX_4X32_10,
    )
    if _flag(next_state, "next_state", where):
        desc.output_state_tensor.CopyFrom(tensor_desc((np.uint32, _STATE)))
    return Call(_wrap(where, desc), (state.reshape(_STATE),), (sizes, state.shape))
