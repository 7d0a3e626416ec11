"""ONNX's own single-node operator test cases, mapped onto DirectML descs, run against the real server."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

import dmlrpc
from tests import onnx_node_cases
from tests.onnx_node_cases import NodeCase

log = logging.getLogger(__name__)

#: The mapped case count reached when this harness was written: a change that silently drops cases (a mapper
#: raising, an SDK refusal, an ONNX upgrade renaming cases) fails ``test_mapped_case_count``.
MAPPED_FLOOR = 730


def as_param(case: NodeCase) -> Any:
    """A case as a pytest parameter named by its ONNX id; a known finding is a strict expected failure."""
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


CASES = [as_param(case) for case in onnx_node_cases.mapped_cases()]


def _comparable(array: np.ndarray) -> np.ndarray:
    # assert_allclose compares floats in float64 so that float16 results meet float32 tolerances as ONNX's do.
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def check(case: NodeCase, raw: list[Any], *, tolerance: float = 1.0) -> None:
    """The server's outputs of ``case`` against ONNX's: types and shapes exactly, values within the case's tolerance
    times ``tolerance``."""
    got = case.outputs(raw)
    assert len(got) == len(case.expected), f"{case.id}: {len(got)} outputs, ONNX has {len(case.expected)}"
    for index, (actual, expected) in enumerate(zip(got, case.expected, strict=True)):
        actual = np.asarray(actual)
        assert actual.dtype == expected.dtype, f"{case.id} output {index}: {actual.dtype}, ONNX's {expected.dtype}"
        assert actual.shape == expected.shape, f"{case.id} output {index}: {actual.shape}, ONNX's {expected.shape}"
        np.testing.assert_allclose(
            _comparable(actual),
            _comparable(expected),
            rtol=case.rtol * tolerance,
            atol=case.atol * tolerance,
            err_msg=f"{case.id}[{index}]",
        )


@pytest.mark.parametrize("case", CASES)
def test_onnx_node_case(client: dmlrpc.Client, case: NodeCase) -> None:
    check(case, client.execute(case.operator_desc, list(case.inputs)))


def test_mapped_case_count() -> None:
    mapped, skipped = onnx_node_cases.counts()
    log.info(
        "ONNX node cases: %d mapped over %d op types, %d not", sum(mapped.values()), len(mapped), sum(skipped.values())
    )
    assert sum(mapped.values()) >= MAPPED_FLOOR, sorted(mapped.items())


def test_every_op_type_is_mapped_or_has_a_reason() -> None:
    # An op type of ONNX's cases is either mapped (some of its cases may still be left out, each with its reason)
    # or in UNMAPPED_OPS with why: a new ONNX op shows up here, not as a silently dropped case.
    op_types = {op for _, op, _ in onnx_node_cases.skipped_cases() if op != "(expanded)"}
    unexplained = op_types - set(onnx_node_cases.MAPPERS) - set(onnx_node_cases.UNMAPPED_OPS)
    assert not unexplained
    assert not set(onnx_node_cases.MAPPERS) & set(onnx_node_cases.UNMAPPED_OPS)


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in onnx_node_cases.mapped_cases()]
    assert len(ids) == len(set(ids))
