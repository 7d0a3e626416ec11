"""GetCapabilities: the provider, the feature level, the limits and every DML operator type's support."""

from __future__ import annotations

import onnxruntime as ort

from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.feature_levels import introduced_feature_level
from dmlrpc_server.operators import REGISTRY

_OPERATOR_TYPES = operators_pb2.OperatorType


def capabilities(
    catalog: Catalog, *, server_version: str, limits: service_pb2.Limits
) -> service_pb2.GetCapabilitiesResponse:
    """Describe the provider, feature level, limits and the support of every DML operator type."""
    cases = {field.number: field.name for field in operators_pb2.OperatorDesc.DESCRIPTOR.oneofs_by_name["desc"].fields}
    response = service_pb2.GetCapabilitiesResponse(
        execution_provider=catalog.provider.name,
        device=catalog.provider.device,
        feature_level=catalog.feature_level,  # type: ignore[arg-type]
        limits=limits,
        server_version=server_version,
        onnxruntime_version=ort.__version__,
        cpu_fallback_refused=not catalog.provider.cpu_fallback,
    )
    seen: set[int] = set()
    for value in _OPERATOR_TYPES.values():
        if value == 0 or value in seen:
            continue
        seen.add(value)
        entry = response.operators.add(
            operator_type=value,
            name=cases.get(value, ""),
            introduced=introduced_feature_level(value),
        )
        operator = REGISTRY.get(cases.get(value, ""))
        if operator is None:
            continue
        table = operator.support_at(catalog.feature_level)
        if table is None:
            continue
        entry.executable = True
        for tensor in (*operator.inputs, *operator.outputs):
            rule = table[tensor.name]
            entry.tensors.add(
                field=tensor.name,
                kind=tensor_pb2.SCHEMA_FIELD_KIND_OUTPUT_TENSOR
                if tensor.output
                else tensor_pb2.SCHEMA_FIELD_KIND_INPUT_TENSOR,
                min_dimension_count=rule.min_dimension_count,
                max_dimension_count=rule.max_dimension_count,
                data_types=sorted(rule.data_types),
                optional=tensor.optional,
            )
    return response
