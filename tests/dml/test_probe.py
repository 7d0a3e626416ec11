"""The Windows-side probe on the real DirectML provider: placement, DirectML's own answers, the open questions."""

from __future__ import annotations

from typing import Any

import pytest

from dmlrpc.v1 import tensor_pb2
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators import REGISTRY
from tests.dml.lowering import TOP_K_BLOCKED, TOP_K_BLOCKED_REASON

pytestmark = [pytest.mark.dml, pytest.mark.timeout(900)]

DML = "DmlExecutionProvider"
#: The server's registry case of each DirectML operator the probe builds by hand.
CASES = {"TOP_K": "top_k", "TOP_K1": "top_k1", "SCATTER_ELEMENTS": "scatter_elements", "SCATTER_ND": "scatter_nd"}
#: The tensor fields that carry the data type and the index type of each operator.
FIELDS = {
    "TOP_K": ("input_tensor", "output_index_tensor"),
    "TOP_K1": ("input_tensor", "output_index_tensor"),
    "SCATTER_ELEMENTS": ("input_tensor", "indices_tensor"),
    "SCATTER_ND": ("input_tensor", "indices_tensor"),
}


def _accepted(answer: dict[str, str]) -> bool:
    return answer.get("create") == "S_OK" and answer.get("compile") == "S_OK"


def test_the_probe_really_ran_on_directml(probe: dict[str, Any]) -> None:
    assert probe["available_providers"][0] == DML
    # Wine stubs DXCore, the default adapter path, so device_id must be passed explicitly; the server does.
    assert probe["provider_options"] == {"device_id": "0"}
    assert probe["directml"]["max_feature_level"] == "6.4"


def test_the_proto_mirrors_directml_numbers(probe: dict[str, Any]) -> None:
    for name, value in probe["directml"]["data_type_values"].items():
        assert tensor_pb2.TensorDataType.Value(f"TENSOR_DATA_TYPE_{name}") == value
    for name, case in CASES.items():
        assert REGISTRY[case].operator_type == probe["directml"]["operator_type_values"][name]


def test_a_unidirectional_lstm_with_a_bias_is_accepted_but_does_not_compile_on_this_device(
    probe: dict[str, Any],
) -> None:
    """DirectML creates every LSTM and GRU desc; this device fails to compile (E_FAIL) only a forward or backward
    LSTM with a bias tensor: ONNX Runtime's "Call failed" for such LSTM nodes (docs/directml-notes.md)."""
    accepts = probe["directml"]["accepts"]
    refused = {"FORWARD/bias", "BACKWARD/bias"}
    for key, answer in accepts["LSTM"].items():
        assert answer == {"create": "S_OK", "compile": "0x80004005" if key in refused else "S_OK"}, key
    assert all(answer == {"create": "S_OK", "compile": "S_OK"} for answer in accepts["GRU"].values())


@pytest.mark.parametrize("operator", list(CASES))
def test_directml_accepts_exactly_the_support_tables_types(probe: dict[str, Any], operator: str) -> None:
    """IDMLDevice::CreateOperator + CompileOperator over every data type x index type, against the server's
    support table at feature level 6.4: the tables are what the real DirectML accepts."""
    answers = probe["directml"]["accepts"][operator]
    table = REGISTRY[CASES[operator]].support_at(LATEST)
    assert table is not None
    data_field, index_field = FIELDS[operator]
    data_ok = {name for name in probe["directml"]["data_type_values"] if _accepted(answers[f"{name}/UINT32"])}
    index_ok = {
        key.split("/")[1] for key, answer in answers.items() if key.startswith("FLOAT32/") and _accepted(answer)
    }
    name = tensor_pb2.TensorDataType.Name
    assert data_ok == {name(t).removeprefix("TENSOR_DATA_TYPE_") for t in table[data_field].data_types}  # type: ignore[arg-type]
    assert index_ok == {name(t).removeprefix("TENSOR_DATA_TYPE_") for t in table[index_field].data_types}  # type: ignore[arg-type]
    # An accepted data type is accepted with every accepted index type.
    for key, answer in answers.items():
        data, index = key.split("/")
        assert _accepted(answer) == (data in data_ok and index in index_ok), key


@pytest.mark.parametrize("operator", ["SCATTER_ELEMENTS", "SCATTER_ND", "TOP_K1", "TOP_K"])
def test_every_data_type_runs_on_directml_through_the_server_code(probe: dict[str, Any], operator: str) -> None:
    """The server's Executor (validate, lower, compile, run) with profiling: every node on DirectML, outputs
    byte-equal to the CPU provider's."""
    entries = [e for e in probe["placement"] if e["operator"] == operator]
    assert entries
    if operator.startswith("TOP_K") and TOP_K_BLOCKED:
        assert all("80004005" in e.get("error", "") for e in entries), entries
        pytest.xfail(TOP_K_BLOCKED_REASON)
    for entry in entries:
        assert "error" not in entry, entry
        assert entry["providers"][0] == DML, entry
        assert entry["nodes"] and all(provider == DML for _, provider in entry["nodes"]), entry
        if "cpu_error" in entry:
            # ONNX Runtime 1.24's CPU provider has no INT8/INT16/UINT8 TopK kernel; DirectML runs them.
            assert "NOT_IMPLEMENTED" in entry["cpu_error"] and entry["case"].split("/")[0] in ("int8", "int16", "uint8")
        else:
            assert entry["equal_to_cpu"], entry


@pytest.mark.parametrize("operator", ["TOP_K", "TOP_K1"])
def test_k_equal_to_the_axis_size_is_accepted_and_k_above_it_refused(probe: dict[str, Any], operator: str) -> None:
    accepts = probe["directml"]["accepts"]
    assert all(_accepted(answer) for answer in accepts[f"{operator} K=axis size"].values())
    assert accepts[f"{operator} K>axis size"]["FLOAT32/UINT32"] == {"create": "E_INVALIDARG"}


def test_k_equal_to_the_axis_size_sorts_on_directml(probe: dict[str, Any]) -> None:
    for entry in probe["k_equal_axis"]:
        assert entry.get("provider") == DML and entry.get("equal_to_cpu") is True, entry


def _sorted(values: list[Any], largest: bool) -> bool:
    finite = [v for v in values if not isinstance(v, str)]
    return finite == sorted(finite, reverse=largest)


def test_nan_makes_the_order_unspecified(probe: dict[str, Any]) -> None:
    """NaN compares false both ways in DirectML's sort: NaN lands anywhere and can displace finite values too,
    differently from the CPU provider, though the same way on every run and for FLOAT32 and FLOAT16."""
    by_direction: dict[bool, list[list[int]]] = {}
    for entry in probe["nan"]:
        assert entry["dml"]["provider"] == DML
        indices = entry["dml"]["indices"]
        by_direction.setdefault(entry["largest"], indices)
        assert by_direction[entry["largest"]] == indices, "FLOAT16 and FLOAT32 disagree"
        assert indices != entry["cpu"]["indices"], "DirectML agreed with the CPU provider on NaN inputs"
        # Row 0, [1, NaN, 3, -2, NaN, 0.5]: even its finite values come back out of order.
        assert not _sorted(entry["dml"]["values"][0], entry["largest"])


def test_int64_top_k_orders_by_the_low_word_as_signed(probe: dict[str, Any]) -> None:
    """The documented 64-bit behaviour on the lane's device: DirectML's emulated INT64 comparison (shader model
    5.1) orders values by (high word, low word) both read as signed 32-bit, so values whose high words tie and
    whose low words straddle 2**31 come out of order. Real 64-bit order is asserted where the device is right."""
    shader_model = probe["directml"]["d3d12"].get("shader_model", "0.0")
    for entry in probe["int64_order"]:
        assert entry["provider"] == DML
        values: list[int] = entry["input"]

        def emulated(v: int) -> tuple[int, int]:
            low = v & 0xFFFFFFFF
            return (v >> 32, low - (1 << 32) if low >= 1 << 31 else low)

        true_order = sorted(range(len(values)), key=lambda i: (-values[i] if entry["largest"] else values[i], i))
        if entry["indices"] == true_order:
            continue
        assert float(shader_model) < 6.0, f"wrong INT64 order on shader model {shader_model}"
        sign = -1 if entry["largest"] else 1
        emulated_order = sorted(range(len(values)), key=lambda i: (tuple(sign * p for p in emulated(values[i])), i))
        assert entry["indices"] == emulated_order
        assert entry["values"] == [values[i] for i in emulated_order]


def test_duplicate_scatter_targets_take_the_last_update(probe: dict[str, Any]) -> None:
    """64 updates aimed at one element, 20 random orders each, four data types, both scatter operators."""
    assert len(probe["duplicates"]) == 8
    for entry in probe["duplicates"]:
        assert entry["dml"]["provider"] == DML
        assert entry["dml"]["winners"] == {"last": 20}, entry
        assert entry["cpu"]["winners"] == {"last": 20}, entry
