"""The operator registry: the `OperatorDesc.desc` case name of every executable operator -> its module's class."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from dmlrpc_server.operators import (
    attention,
    cast,
    convolution,
    cumulative,
    depth_space,
    fold,
    gather,
    generators,
    join_split,
    matrix,
    max_unpooling,
    movement,
    normalization,
    pooling,
    quantized,
    random_generator,
    recurrent,
    reduce,
    resample,
    roi_align,
    roi_pooling,
    spatial_grad,
    training,
)
from dmlrpc_server.operators.activation import ACTIVATIONS
from dmlrpc_server.operators.base import Operator
from dmlrpc_server.operators.element_wise import ELEMENT_WISE
from dmlrpc_server.operators.element_wise_bits import ELEMENT_WISE_BITS
from dmlrpc_server.operators.element_wise_rounding import ELEMENT_WISE_ROUNDING
from dmlrpc_server.operators.element_wise_transcendental import ELEMENT_WISE_TRANSCENDENTAL
from dmlrpc_server.operators.quantize import QUANTIZE
from dmlrpc_server.operators.scatter_elements import ScatterElements
from dmlrpc_server.operators.scatter_nd import ScatterNd
from dmlrpc_server.operators.top_k import TopK, TopK1

__all__ = ["REGISTRY", "Operator"]


def _build(*operators: Operator[Any]) -> Mapping[str, Operator[Any]]:
    registry: dict[str, Operator[Any]] = {}
    for operator in sorted(operators, key=lambda o: o.operator_type):
        if operator.case in registry:
            raise ValueError(f"operator case {operator.case!r} registered twice")
        registry[operator.case] = operator
    return MappingProxyType(registry)


#: Explicit, in OperatorType order. A case of OperatorDesc.desc missing here is answered with UNIMPLEMENTED.
REGISTRY: Mapping[str, Operator[Any]] = _build(
    *ELEMENT_WISE,
    *ELEMENT_WISE_ROUNDING,
    *ELEMENT_WISE_TRANSCENDENTAL,
    *ELEMENT_WISE_BITS,
    *QUANTIZE,
    *ACTIVATIONS,
    TopK(),
    ScatterElements(),
    ScatterNd(),
    TopK1(),
    *attention.OPERATORS,
    *cast.OPERATORS,
    *convolution.OPERATORS,
    *cumulative.OPERATORS,
    *depth_space.OPERATORS,
    *fold.OPERATORS,
    *gather.OPERATORS,
    *generators.OPERATORS,
    *join_split.OPERATORS,
    *matrix.OPERATORS,
    *max_unpooling.OPERATORS,
    *movement.OPERATORS,
    *normalization.OPERATORS,
    *pooling.OPERATORS,
    *quantized.OPERATORS,
    *random_generator.OPERATORS,
    *recurrent.OPERATORS,
    *reduce.OPERATORS,
    *resample.OPERATORS,
    *roi_align.OPERATORS,
    *roi_pooling.OPERATORS,
    *training.OPERATORS,
    *spatial_grad.OPERATORS,
)
