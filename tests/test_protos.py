"""The proto mirror: DirectML's names and values, the registry agreeing with it, and each desc's documented rules."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor

import dmlrpc
from dmlrpc.schema import snake_case, tensor_fields
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc, tensor_pb2  # noqa: F401 - all must import
from dmlrpc_server.feature_levels import introduced_feature_level
from dmlrpc_server.operators import REGISTRY, pages

ONEOF = operators_pb2.OperatorDesc.DESCRIPTOR.oneofs_by_name["desc"]
OPERATORS_PROTO = Path(__file__).resolve().parents[1] / "protos" / "dmlrpc" / "v1" / "operators.proto"
#: The first sentence of the tensor-support paragraph that ends every desc message's leading comment.
SUPPORT_HEADER = "Tensor support (each table applies from its feature level on; dimension counts, data types):"


def support_sentences(case: FieldDescriptor) -> list[str]:
    """The tensor-support paragraph a desc's comment carries: its page's tables, one sentence per table.

    A table's tensors with the same row share a clause, in binding order. Each table is labelled with its level
    (the page data's corrections applied: the oldest is the level DirectML.h introduced the type at, as the server
    applies it); REDUCE's tables, one per group of functions, name their functions.
    """
    entry = pages.page(case.name.upper())
    order = [field.name for field in case.message_type.fields]
    sentences = [SUPPORT_HEADER]
    for table in entry["support"]:
        groups: dict[tuple[str, str], list[str]] = {}
        for name in sorted(table["tensors"], key=lambda name: order.index(snake_case(name))):
            row = table["tensors"][name]
            low, high = row["dims"]
            groups.setdefault((str(low) if low == high else f"{low}-{high}", " ".join(row["types"])), []).append(name)
        clauses = "; ".join(f"{', '.join(names)}: {dims}D {types}" for (dims, types), names in groups.items())
        functions = " ".join(table.get("functions", ()))
        sentences.append(f"FL {table['level']}{f' ({functions})' if functions else ''}: {clauses}.")
    return sentences


@functools.cache
def leading_comments() -> dict[str, list[str]]:
    """Each desc message's leading comment in operators.proto, by message name, as lines without ``//``."""
    comments: dict[str, list[str]] = {}
    lines = OPERATORS_PROTO.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        found = re.fullmatch(r"message (\w+OperatorDesc) \{", line)
        if found:
            start = number
            while start and lines[start - 1].startswith("//"):
                start -= 1
            comments[found.group(1)] = [text.removeprefix("//").strip() for text in lines[start:number]]
    return comments


def test_enums_keep_directml_values() -> None:
    dt = tensor_pb2.TensorDataType
    assert dt.Value("TENSOR_DATA_TYPE_UNKNOWN") == 0 and dt.Value("TENSOR_DATA_TYPE_INT4") == 13
    assert dt.Value("TENSOR_DATA_TYPE_FLOAT64") == 9 and dt.Value("TENSOR_DATA_TYPE_INT64") == 11
    assert tensor_pb2.AXIS_DIRECTION_INCREASING == 0 and tensor_pb2.AXIS_DIRECTION_DECREASING == 1
    assert tensor_pb2.TENSOR_FLAG_OWNED_BY_DML == 1
    assert operators_pb2.FEATURE_LEVEL_5_0 == 0x5000 and operators_pb2.FEATURE_LEVEL_6_4 == 0x6400
    assert service_pb2.BINDING_TYPE_BUFFER == 1 and service_pb2.BINDING_TYPE_BUFFER_ARRAY == 2


def test_operator_type_has_all_177_values_in_order() -> None:
    values = sorted(set(operators_pb2.OperatorType.values()))
    assert values == list(range(178))
    named = operators_pb2.OperatorType
    assert named.Value("OPERATOR_TYPE_INVALID") == 0
    assert named.Value("OPERATOR_TYPE_ELEMENT_WISE_IDENTITY") == 1
    assert named.Value("OPERATOR_TYPE_TOP_K") == 71
    assert named.Value("OPERATOR_TYPE_SCATTER_ELEMENTS") == named.Value("OPERATOR_TYPE_SCATTER") == 94
    assert named.Value("OPERATOR_TYPE_SCATTER_ND") == 109
    assert named.Value("OPERATOR_TYPE_TOP_K1") == 112
    assert named.Value("OPERATOR_TYPE_ACTIVATION_GELU") == 157
    assert named.Value("OPERATOR_TYPE_UNFOLD") == 177


def test_oneof_cases_follow_the_naming_rule() -> None:
    for field in ONEOF.fields:
        type_name = operators_pb2.OperatorType.Name(field.number)
        assert field.name == type_name.removeprefix("OPERATOR_TYPE_").lower()
        camel = "".join(part.capitalize() for part in re.split(r"_", field.name))
        assert field.message_type.name == f"{camel}OperatorDesc"


def test_desc_fields_are_snake_case_directml_fields_in_binding_order() -> None:
    expected = {
        "top_k": ["input_tensor", "output_value_tensor", "output_index_tensor", "axis", "k"],
        "scatter_elements": ["input_tensor", "indices_tensor", "updates_tensor", "output_tensor", "axis"],
        "scatter_nd": [
            "input_tensor",
            "indices_tensor",
            "updates_tensor",
            "output_tensor",
            "input_dimension_count",
            "indices_dimension_count",
        ],
        "top_k1": ["input_tensor", "output_value_tensor", "output_index_tensor", "axis", "k", "axis_direction"],
    }
    for case, names in expected.items():
        field = ONEOF.fields[[f.name for f in ONEOF.fields].index(case)]
        assert [f.name for f in sorted(field.message_type.fields, key=lambda f: f.number)] == names
    inputs, outputs = tensor_fields(operators_pb2.ScatterNdOperatorDesc.DESCRIPTOR)
    assert [f.name for f in inputs] == ["input_tensor", "indices_tensor", "updates_tensor"]
    assert [f.name for f in outputs] == ["output_tensor"]


def test_buffer_tensor_desc_mirrors_dml_buffer_tensor_desc() -> None:
    fields = [(f.name, f.number) for f in tensor_pb2.BufferTensorDesc.DESCRIPTOR.fields]
    assert fields == [
        ("data_type", 1),
        ("flags", 2),
        ("sizes", 3),
        ("strides", 4),
        ("total_tensor_size_in_bytes", 5),
        ("guaranteed_base_offset_alignment", 6),
    ]
    assert tensor_pb2.TensorDesc.DESCRIPTOR.fields_by_name["buffer"].number == tensor_pb2.TENSOR_TYPE_BUFFER


def test_registry_keys_are_mirrored_cases_with_their_pages_levels() -> None:
    assert set(REGISTRY) <= {field.name for field in ONEOF.fields}
    for case, operator in REGISTRY.items():
        assert operator.case == case
        assert operator.introduced == introduced_feature_level(operator.operator_type)


def test_capabilities_agree_with_registry(client: dmlrpc.Client) -> None:
    caps = client.get_capabilities()
    assert caps.execution_provider == "CPUExecutionProvider"
    assert caps.feature_level == operators_pb2.FEATURE_LEVEL_6_4
    assert [entry.operator_type for entry in caps.operators] == list(range(1, 178))
    executable = {entry.name for entry in caps.operators if entry.executable}
    assert executable == set(REGISTRY)
    top_k1 = next(entry for entry in caps.operators if entry.name == "top_k1")
    assert top_k1.introduced == operators_pb2.FEATURE_LEVEL_2_1
    rows = {row.field: row for row in top_k1.tensors}
    assert (rows["input_tensor"].min_dimension_count, rows["input_tensor"].max_dimension_count) == (1, 8)
    assert set(rows["output_index_tensor"].data_types) == {
        tensor_pb2.TENSOR_DATA_TYPE_UINT32,
        tensor_pb2.TENSOR_DATA_TYPE_UINT64,
    }
    assert caps.limits.max_tensor_bytes > 0


def test_protocol_doc_lists_every_rpc() -> None:
    # docs/protocol.md's "methods" row is what a client author reads first: every RPC of the service is in it.
    doc = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text()
    (row,) = [line for line in doc.splitlines() if line.startswith("| methods |")]
    service = service_pb2.DESCRIPTOR.services_by_name["DirectMLService"]
    missing = [
        method.name for method in service.methods if f"`{method.name}`" not in row and f"/{method.name}`" not in row
    ]
    assert not missing, f"docs/protocol.md's methods row omits {missing}"


@pytest.mark.parametrize("case", list(ONEOF.fields), ids=lambda case: case.name)
def test_every_desc_comment_gives_its_rules_and_support_tables(case: FieldDescriptor) -> None:
    # A user of another language builds a valid desc from the .proto alone: each desc's leading comment gives the
    # function and rules, then its page's support tables, so the comment cannot drift silently from the pages (nor
    # from the server, which checks those tables).
    name = case.message_type.name
    comment = leading_comments()[name]
    assert SUPPORT_HEADER in comment, f"{name}'s comment lacks the tensor-support paragraph"
    rules = comment[: comment.index(SUPPORT_HEADER)]
    assert len(rules) >= 3, f"{name}: only a header, no function or rules: {rules}"
    expected = support_sentences(case)
    written = " ".join(" ".join(comment[comment.index(SUPPORT_HEADER) :]).split())
    assert written == " ".join(expected), "\n".join([f"{name}'s support paragraph should read:", *expected])
    # Every tensor field is in the newest table, so the paragraph names each field's data types.
    newest = pages.page(case.name.upper())["support"][-1]
    tensors = {
        field.name for field in case.message_type.fields if field.message_type == tensor_pb2.TensorDesc.DESCRIPTOR
    }
    assert tensors == {snake_case(tensor) for tensor in newest["tensors"]}


def test_support_sentences_follow_the_page_and_directml_h() -> None:
    by_name = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name
    assert support_sentences(by_name["top_k1"])[1:] == [
        "FL 2.1: InputTensor, OutputValueTensor: 4D FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8; "
        "OutputIndexTensor: 4D UINT32.",
        "FL 3.1: InputTensor, OutputValueTensor: 1-8D FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8; "
        "OutputIndexTensor: 1-8D UINT32.",
        "FL 5.0: InputTensor, OutputValueTensor: 1-8D FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 "
        "UINT8; OutputIndexTensor: 1-8D UINT64 UINT32.",
    ]
    # TOP_K's page heads its oldest table 2.0; DirectML.h (and the server) apply it from 1.0.
    assert support_sentences(by_name["top_k"])[1].startswith("FL 1.0: InputTensor, OutputValueTensor: 4D FLOAT32")
    # REDUCE's tables are per group of functions.
    assert "FL 5.0 (MIN MAX): InputTensor, OutputTensor: 1-8D" in " ".join(support_sentences(by_name["reduce"]))
