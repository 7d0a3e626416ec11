"""The operator registry: the `OperatorDesc.desc` case name of every executable operator -> its module's class."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from dmlrpc_server.operators.base import Operator
from dmlrpc_server.operators.scatter_elements import ScatterElements
from dmlrpc_server.operators.scatter_nd import ScatterNd
from dmlrpc_server.operators.top_k import TopK, TopK1

__all__ = ["REGISTRY", "Operator"]


def _build(*operators: Operator[Any]) -> Mapping[str, Operator[Any]]:
    registry: dict[str, Operator[Any]] = {}
    for operator in operators:
        if operator.case in registry:
            raise ValueError(f"operator case {operator.case!r} registered twice")
        registry[operator.case] = operator
    return MappingProxyType(registry)


#: Explicit, in OperatorType order. A case of OperatorDesc.desc missing here is answered with UNIMPLEMENTED.
REGISTRY: Mapping[str, Operator[Any]] = _build(TopK(), ScatterElements(), ScatterNd(), TopK1())
