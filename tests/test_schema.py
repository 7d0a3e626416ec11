"""operators.proto against DirectML's declarative schema (protos/directml_schema.md): every type, field and enum."""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

import pytest
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from dmlrpc.schema import snake_case
from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2

SCHEMA = pathlib.Path(__file__).resolve().parent.parent / "protos" / "directml_schema.md"
ONEOF = operators_pb2.OperatorDesc.DESCRIPTOR.oneofs_by_name["desc"]
ENUM_FILES = (tensor_pb2.DESCRIPTOR, operators_pb2.DESCRIPTOR, service_pb2.DESCRIPTOR)
SCALAR_KINDS = {
    "u32": FieldDescriptor.TYPE_UINT32,
    "i32": FieldDescriptor.TYPE_INT32,
    "f32": FieldDescriptor.TYPE_FLOAT,
    "f32?": FieldDescriptor.TYPE_FLOAT,
    "bool": FieldDescriptor.TYPE_BOOL,
}
MESSAGE_KINDS = {"scalebias?": "ScaleBias", "size2d": "Size2D", "scalar": "ScalarUnion", "opdesc?": "OperatorDesc"}


@dataclass(frozen=True)
class Row:
    value: int
    name: str
    level: str
    fields: tuple[tuple[str, str], ...]


def _rows() -> list[Row]:
    rows = []
    for line in SCHEMA.read_text().splitlines():
        match = re.fullmatch(r"\| (\d+) \| ([A-Z0-9_]+) \| (\d\.\d) \| [y?]? *\| (.+) \|", line)
        if match:
            fields = tuple(tuple(f.split(":")) for f in match.group(4).split(", "))
            rows.append(Row(int(match.group(1)), match.group(2), match.group(3), fields))  # type: ignore[arg-type]
    return rows


def _enums() -> dict[str, list[tuple[str, int]]]:
    enums = {}
    for line in SCHEMA.read_text().splitlines():
        match = re.fullmatch(r"\| ([A-Z_]+) \| ([A-Z0-9_]+=\w+(?:, [A-Z0-9_]+=\w+)*) \|", line)
        if match:
            values = [item.split("=") for item in match.group(2).split(", ")]
            enums[match.group(1)] = [(name, int(value, 0)) for name, value in values]
    return enums


ROWS = _rows()
ENUMS = _enums()


def _camel(upper: str) -> str:
    return "".join(part.capitalize() for part in upper.split("_"))


def _enum(upper: str) -> EnumDescriptor:
    for file in ENUM_FILES:
        if _camel(upper) in file.enum_types_by_name:
            return file.enum_types_by_name[_camel(upper)]
    raise AssertionError(f"no proto enum {_camel(upper)} for DML_{upper}")


def _kind(field: FieldDescriptor) -> str:
    """The schema kind a proto field mirrors (the inverse of the kind table in directml_schema.md)."""
    options = field.GetOptions()
    if field.message_type is not None and field.message_type.name == "TensorDesc":
        direction = (
            "out" if options.Extensions[tensor_pb2.field_kind] == tensor_pb2.SCHEMA_FIELD_KIND_OUTPUT_TENSOR else "in"
        )
        if field.is_repeated:
            return f"{direction}[]"
        return direction + ("?" if options.Extensions[tensor_pb2.optional_tensor] else "")
    assert options.Extensions[tensor_pb2.field_kind] == tensor_pb2.SCHEMA_FIELD_KIND_ATTRIBUTE, field.full_name
    if field.enum_type is not None:
        base = re.sub(r"(?<!^)(?=[A-Z])", "_", field.enum_type.name).upper()
    elif field.message_type is not None:
        base = {v: k for k, v in MESSAGE_KINDS.items()}[field.message_type.name].rstrip("?")
    else:
        base = {v: k for k, v in SCALAR_KINDS.items() if k != "f32?"}[field.type]
    return f"{base}[]" if field.is_repeated else base


def _expected_kind(kind: str) -> str:
    array = re.fullmatch(r"(\w+)\[\w+\]", kind)
    if array:
        return f"{array.group(1)}[]"
    return {"f32?": "f32", "scalebias?": "scalebias", "opdesc?": "opdesc"}.get(kind, kind)


def test_the_schema_has_all_177_operator_types() -> None:
    assert [row.value for row in ROWS] == list(range(1, 178))


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_operator_mirrors_the_schema(row: Row) -> None:
    assert operators_pb2.OperatorType.Value(f"OPERATOR_TYPE_{row.name}") == row.value
    case = ONEOF.fields[[f.number for f in ONEOF.fields].index(row.value)]
    assert case.name == row.name.lower()
    message: Descriptor = case.message_type
    assert message.name == f"{_camel(row.name)}OperatorDesc"
    fields = sorted(message.fields, key=lambda f: f.number)
    assert [f.number for f in fields] == list(range(1, len(row.fields) + 1)), "fields are numbered 1..n in C order"
    assert [f.name for f in fields] == [snake_case(name) for name, _ in row.fields]
    assert [_kind(f) for f in fields] == [_expected_kind(kind) for _, kind in row.fields]
    names = [name for name, _ in row.fields]
    for position, (_, kind) in enumerate(row.fields):
        sized_by = re.fullmatch(r"\w+\[(\w+)\]", kind)
        if sized_by:
            # An array's length field comes before it and is a UINT, as in DirectML.h.
            assert sized_by.group(1) in names[:position]
            assert dict(row.fields)[sized_by.group(1)] == "u32"


def test_operator_type_names_and_the_scatter_alias() -> None:
    names = {value: name for name, value in operators_pb2.OperatorType.items()}
    assert names[0] == "OPERATOR_TYPE_INVALID"
    assert operators_pb2.OperatorType.Value("OPERATOR_TYPE_SCATTER") == 94
    assert len(ONEOF.fields) == 177


def test_the_introducing_feature_levels_match_the_schema() -> None:
    from dmlrpc_server.feature_levels import feature_level_name, introduced_feature_level

    for row in ROWS:
        assert feature_level_name(introduced_feature_level(row.value)) == row.level, row.name


@pytest.mark.parametrize("name", sorted(ENUMS))
def test_enum_values_are_directml_values(name: str) -> None:
    enum = _enum(name)
    # proto3 needs a zero value: FeatureLevel adds FEATURE_LEVEL_UNSPECIFIED, which DirectML does not have.
    values = [(v.name, v.number) for v in enum.values if not v.name.endswith("_UNSPECIFIED")]
    assert values == ENUMS[name]


def test_every_enum_kind_used_by_a_desc_is_in_the_schema() -> None:
    kinds = {kind for row in ROWS for _, kind in row.fields if kind.isupper()}
    assert kinds <= set(ENUMS)
