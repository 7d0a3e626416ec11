"""DirectML's operator schema as the proto carries it: the tensor fields of each desc, in binding order."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from google.protobuf.descriptor import Descriptor

from dmlrpc.errors import ArgumentValueError
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["TensorField", "check_input_count", "desc_case", "snake_case", "tensor_descs", "tensor_fields"]

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class TensorField:
    """A tensor field of an operator desc (DML_SCHEMA_FIELD of kind INPUT_TENSOR or OUTPUT_TENSOR)."""

    name: str
    output: bool
    optional: bool
    #: A tensor array (``repeated TensorDesc``, bound with DML_BINDING_TYPE_BUFFER_ARRAY).
    array: bool = False


def snake_case(directml_name: str) -> str:
    """The proto name of a DirectML field: ``IndicesDimensionCount`` -> ``indices_dimension_count``,
    ``ROITensor`` -> ``roi_tensor``, ``ATensor`` -> ``a_tensor``."""
    return _WORD_BOUNDARY.sub("_", directml_name).lower()


@cache
def tensor_fields(descriptor: Descriptor) -> tuple[tuple[TensorField, ...], tuple[TensorField, ...]]:
    """The input and output tensor fields of a desc message, each in binding (declaration) order."""
    inputs: list[TensorField] = []
    outputs: list[TensorField] = []
    for fd in sorted(descriptor.fields, key=lambda f: f.number):
        if fd.message_type is None or fd.message_type.full_name != tensor_pb2.TensorDesc.DESCRIPTOR.full_name:
            continue
        options = fd.GetOptions()
        is_output = options.Extensions[tensor_pb2.field_kind] == tensor_pb2.SCHEMA_FIELD_KIND_OUTPUT_TENSOR
        entry = TensorField(
            fd.name,
            is_output,
            options.Extensions[tensor_pb2.optional_tensor],
            array=fd.is_repeated,
        )
        (outputs if is_output else inputs).append(entry)
    return tuple(inputs), tuple(outputs)


def desc_case(operator_desc: operators_pb2.OperatorDesc) -> str:
    """The set case of ``OperatorDesc.desc`` (e.g. ``"top_k1"``)."""
    case = operator_desc.WhichOneof("desc")
    if case is None:
        raise ArgumentValueError("operator_desc", "the OperatorDesc has no operator desc set")
    return case


def tensor_descs(operator_desc: operators_pb2.OperatorDesc, *, output: bool) -> list[tensor_pb2.TensorDesc]:
    """A desc's input (or output) tensor descs in binding order, each tensor array's descs in place (the messages
    themselves: editing one edits ``operator_desc``)."""
    desc = getattr(operator_desc, desc_case(operator_desc))
    inputs, outputs = tensor_fields(desc.DESCRIPTOR)
    descs: list[tensor_pb2.TensorDesc] = []
    for tensor in outputs if output else inputs:
        descs.extend(getattr(desc, tensor.name) if tensor.array else [getattr(desc, tensor.name)])
    return descs


def check_input_count(case: str, input_fields: Sequence[TensorField], count: int, where: str = "") -> None:
    """Refuse ``count`` inputs (binding order) for a desc whose input tensor fields are ``input_fields``, naming
    them, unless there is one per field; ``where`` prefixes the message."""
    if count != len(input_fields):
        names = ", ".join(f.name for f in input_fields)
        raise ArgumentValueError(
            "inputs",
            f"{where}{case} takes {len(input_fields)} inputs ({names}); got {count}",
            allowed=(str(len(input_fields)),),
        )
