"""DirectML feature levels: which level introduced each operator type, and parsing level names."""

from __future__ import annotations

import bisect

from dmlrpc.v1 import operators_pb2

FL = operators_pb2.FeatureLevel

# DirectML.h appends operator types in blocks guarded by DML_TARGET_VERSION; (first value, level) per block.
_BLOCKS = (
    (1, FL.FEATURE_LEVEL_1_0),
    (79, FL.FEATURE_LEVEL_2_0),
    (97, FL.FEATURE_LEVEL_2_1),
    (121, FL.FEATURE_LEVEL_3_0),
    (141, FL.FEATURE_LEVEL_3_1),
    (147, FL.FEATURE_LEVEL_4_0),
    (150, FL.FEATURE_LEVEL_4_1),
    (153, FL.FEATURE_LEVEL_5_0),
    (157, FL.FEATURE_LEVEL_5_1),
    (164, FL.FEATURE_LEVEL_6_1),
    (165, FL.FEATURE_LEVEL_6_2),
    (171, FL.FEATURE_LEVEL_6_3),
    (175, FL.FEATURE_LEVEL_6_4),
)

#: The newest feature level this server knows; the default level whose rules it applies.
LATEST = FL.FEATURE_LEVEL_6_4


def introduced_feature_level(operator_type: int) -> int:
    """The feature level whose DirectML.h block added an operator type (0 for INVALID or unknown types)."""
    if not 1 <= operator_type <= 177:
        return FL.FEATURE_LEVEL_UNSPECIFIED
    position = bisect.bisect_right([first for first, _ in _BLOCKS], operator_type) - 1
    return _BLOCKS[position][1]


def parse_feature_level(text: str) -> int:
    """Parse ``"5.0"``, ``"5_0"`` or ``"FEATURE_LEVEL_5_0"`` into a FeatureLevel value."""
    name = text.strip().upper().removeprefix("DML_").removeprefix("FEATURE_LEVEL_").replace(".", "_")
    try:
        return FL.Value(f"FEATURE_LEVEL_{name}")
    except ValueError:
        known = ", ".join(n.removeprefix("FEATURE_LEVEL_").replace("_", ".") for n in FL.keys()[1:])
        raise ValueError(f"unknown feature level {text!r}; known: {known}") from None


def feature_level_name(value: int) -> str:
    """``0x5000`` -> ``"5.0"``."""
    return FL.Name(value).removeprefix("FEATURE_LEVEL_").replace("_", ".")  # type: ignore[arg-type]
