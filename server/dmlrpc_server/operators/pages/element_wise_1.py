"""DirectML element-wise operator reference pages (part 1: identity through quantize/dequantize) as data."""

from __future__ import annotations

from dmlrpc_server.operators.pages import Page

PAGES: dict[str, Page] = {
    "ELEMENT_WISE_IDENTITY": Page(
        page="ns-directml-dml_element_wise_identity_operator_desc",
        introduced="1.0",
        function="f(x) = x; ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "2.1": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensor": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
                "OutputTensor": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
            },
        },
        notes=(
            "In-place execution supported (OutputTensor may alias InputTensor). Commonly used to copy a tensor, and"
            " to change memory layout by giving the input and output different strides. Only op on this list with"
            " FLOAT64 support (from 4.1)."
        ),
    ),
    "ELEMENT_WISE_ABS": Page(
        page="ns-directml-dml_element_wise_abs_operator_desc",
        introduced="1.0",
        function="f(x) = abs(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
            },
            "4.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8"),
            },
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor). Signed types only (no UINT).",
    ),
    "ELEMENT_WISE_ACOS": Page(
        page="ns-directml-dml_element_wise_acos_operator_desc",
        introduced="1.0",
        function="f(x) = acos(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ADD": Page(
        page="ns-directml-dml_element_wise_add_operator_desc",
        introduced="1.0",
        function="f(a, b) = a + b",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "ATensor": ("4-5", "FLOAT32 FLOAT16"),
                "BTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "ATensor": ("4-5", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("4-5", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
            "5.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "No ScaleBias field and no fused activation (those are on ELEMENT_WISE_ADD1, feature level 2.0)."
            " In-place execution supported (OutputTensor may alias one or more inputs)."
        ),
    ),
    "ELEMENT_WISE_ASIN": Page(
        page="ns-directml-dml_element_wise_asin_operator_desc",
        introduced="1.0",
        function="f(x) = asin(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ATAN": Page(
        page="ns-directml-dml_element_wise_atan_operator_desc",
        introduced="1.0",
        function="f(x) = atan(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_CEIL": Page(
        page="ns-directml-dml_element_wise_ceil_operator_desc",
        introduced="1.0",
        function="f(x) = ceil(x) (smallest integer >= x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor). Result stays in the float type.",
    ),
    "ELEMENT_WISE_CLIP": Page(
        page="ns-directml-dml_element_wise_clip_operator_desc",
        introduced="1.0",
        function=(
            "f(x) = min(Max, max(Min, x)) (clamp to [Min, Max]); ScaleBias applied to the input first: x*Scale+Bias"
        ),
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Min and Max are FLOAT attributes even for integer tensors (ELEMENT_WISE_CLIP1 adds typed min/max)."
            " The max(Min, x) is applied first, then min(Max, .), so Max wins if Min > Max. The page documents no"
            " Min <= Max requirement. In-place execution supported."
        ),
    ),
    "ELEMENT_WISE_COS": Page(
        page="ns-directml-dml_element_wise_cos_operator_desc",
        introduced="1.0",
        function="f(x) = cos(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_DIVIDE": Page(
        page="ns-directml-dml_element_wise_divide_operator_desc",
        introduced="1.0",
        function="f(a, b) = a / b",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "5.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "6.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Integer division truncates the quotient (rounds toward zero, C-style, not floor). The page says nothing"
            " about integer division by zero. No ScaleBias field. In-place execution supported (OutputTensor may"
            " alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_EXP": Page(
        page="ns-directml-dml_element_wise_exp_operator_desc",
        introduced="1.0",
        function="f(x) = exp(x) (natural exponential); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_FLOOR": Page(
        page="ns-directml-dml_element_wise_floor_operator_desc",
        introduced="1.0",
        function="f(x) = floor(x) (largest integer <= x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor). Result stays in the float type.",
    ),
    "ELEMENT_WISE_LOG": Page(
        page="ns-directml-dml_element_wise_log_operator_desc",
        introduced="1.0",
        function="f(x) = ln(x) (natural log); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Negative x gives an indefinite result (NaN); x == 0 gives -INF. In-place execution supported (OutputTensor"
            " may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_AND": Page(
        page="ns-directml-dml_element_wise_logical_and_operator_desc",
        introduced="1.0",
        function="f(a, b) = (a && b), written as 1 (true) or 0 (false)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"ATensor": ("4", "UINT32"), "BTensor": ("4", "UINT32"), "OutputTensor": ("4", "UINT32")},
            "2.0": {
                "ATensor": ("4", "UINT32 UINT8"),
                "BTensor": ("4", "UINT32 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes=(
            "Unsigned-integer-only op (UINT32, plus UINT8 from 2.0); any nonzero input counts as true. In-place"
            " execution supported (OutputTensor may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_EQUALS": Page(
        page="ns-directml-dml_element_wise_logical_equals_operator_desc",
        introduced="1.0",
        function="f(a, b) = (a == b), written as 1 (true) or 0 (false)",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DimensionCount and Sizes.",
            "ATensor and BTensor: same DataType (OutputTensor's DataType may differ).",
            "OutputTensor is UINT32 (1.0) or UINT32/UINT8 (2.0+), whatever the input type.",
        ),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT32"),
            },
            "2.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes=(
            "Output type differs from the input type (boolean as UINT32/UINT8). The page does not claim in-place"
            " support (unlike AND/OR/XOR). NaN handling is not stated (IEEE: NaN == NaN is false)."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": Page(
        page="ns-directml-dml_element_wise_logical_greater_than_operator_desc",
        introduced="1.0",
        function="f(a, b) = (a > b), written as 1 (true) or 0 (false)",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DimensionCount and Sizes.",
            "ATensor and BTensor: same DataType (OutputTensor's DataType may differ).",
            "OutputTensor is UINT32 (1.0) or UINT32/UINT8 (2.0+), whatever the input type.",
        ),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT32"),
            },
            "2.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes=(
            "Output type differs from the input type (boolean as UINT32/UINT8). The page does not claim in-place"
            " support. Comparison is in the inputs' own type (signed vs unsigned matters for integers)."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": Page(
        page="ns-directml-dml_element_wise_logical_less_than_operator_desc",
        introduced="1.0",
        function="f(a, b) = (a < b), written as 1 (true) or 0 (false)",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DimensionCount and Sizes.",
            "ATensor and BTensor: same DataType (OutputTensor's DataType may differ).",
            "OutputTensor is UINT32 (1.0) or UINT32/UINT8 (2.0+), whatever the input type.",
        ),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT32"),
            },
            "2.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes=(
            "Output type differs from the input type (boolean as UINT32/UINT8). The page does not claim in-place"
            " support. Comparison is in the inputs' own type (signed vs unsigned matters for integers)."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_NOT": Page(
        page="ns-directml-dml_element_wise_logical_not_operator_desc",
        introduced="1.0",
        function="f(x) = !x (1 if x == 0 else 0)",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "UINT32"), "OutputTensor": ("4", "UINT32")},
            "2.0": {"InputTensor": ("4", "UINT32 UINT8"), "OutputTensor": ("4", "UINT32 UINT8")},
            "3.0": {"InputTensor": ("1-8", "UINT32 UINT8"), "OutputTensor": ("1-8", "UINT32 UINT8")},
        },
        notes=(
            "Logical (not bitwise) negation: nonzero -> 0, zero -> 1. Unsigned-integer-only. No ScaleBias field."
            " In-place execution supported (OutputTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_OR": Page(
        page="ns-directml-dml_element_wise_logical_or_operator_desc",
        introduced="1.0",
        function="f(a, b) = (a || b), written as 1 (true) or 0 (false)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"ATensor": ("4", "UINT32"), "BTensor": ("4", "UINT32"), "OutputTensor": ("4", "UINT32")},
            "2.0": {
                "ATensor": ("4", "UINT32 UINT8"),
                "BTensor": ("4", "UINT32 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes=(
            "Unsigned-integer-only op; any nonzero input counts as true. In-place execution supported (OutputTensor"
            " may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_XOR": Page(
        page="ns-directml-dml_element_wise_logical_xor_operator_desc",
        introduced="1.0",
        function="f(a, b) = (!!a) != (!!b), written as 1 (true) or 0 (false)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"ATensor": ("4", "UINT32"), "BTensor": ("4", "UINT32"), "OutputTensor": ("4", "UINT32")},
            "2.0": {
                "ATensor": ("4", "UINT32 UINT8"),
                "BTensor": ("4", "UINT32 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes=(
            "Logical XOR: inputs are normalised to booleans first (!!x), so e.g. 2 xor 1 = 0 (not bitwise 3)."
            " Unsigned-integer-only. In-place execution supported (OutputTensor may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_MAX": Page(
        page="ns-directml-dml_element_wise_max_operator_desc",
        introduced="1.0",
        function="f(a, b) = max(a, b)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "5.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "NaN handling is not documented. No ScaleBias field. In-place execution supported (OutputTensor may"
            " alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_MEAN": Page(
        page="ns-directml-dml_element_wise_mean_operator_desc",
        introduced="1.0",
        function="f(a, b) = (a + b) / 2",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
        },
        notes=(
            "Exactly two inputs. For INT32/UINT32 the page does not say how the halving rounds or whether a + b may"
            " overflow. No ScaleBias field. In-place execution supported (OutputTensor may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_MIN": Page(
        page="ns-directml-dml_element_wise_min_operator_desc",
        introduced="1.0",
        function="f(a, b) = min(a, b)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "5.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "NaN handling is not documented. No ScaleBias field. In-place execution supported (OutputTensor may"
            " alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_MULTIPLY": Page(
        page="ns-directml-dml_element_wise_multiply_operator_desc",
        introduced="1.0",
        function="f(a, b) = a * b",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "ATensor": ("4-5", "FLOAT32 FLOAT16"),
                "BTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "ATensor": ("4-5", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("4-5", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
            "5.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Integer overflow behaviour is not documented. No ScaleBias field. In-place execution supported"
            " (OutputTensor may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_POW": Page(
        page="ns-directml-dml_element_wise_pow_operator_desc",
        introduced="1.0",
        function=(
            "f(input, exponent) = pow(input, exponent), elementwise over InputTensor and ExponentTensor; ScaleBias"
            " applied to the input (base) first: x*Scale+Bias"
        ),
        constraints=(
            "ExponentTensor, InputTensor and OutputTensor: same DimensionCount and Sizes.",
            "InputTensor and OutputTensor: same DataType.",
            "Before feature level 3.0, ExponentTensor's DataType must equal InputTensor's; from 3.0 it may differ.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "ExponentTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ExponentTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "A negative base works only when the exponent has an integral value (the type may still be float);"
            " otherwise the result is NaN. When both input and exponent are integer types the result is exact."
            " Exponent may be of a different type than the input from 3.0 (mixed types). In-place execution"
            " supported (OutputTensor may alias InputTensor). See CONSTANT_POW for a scalar FLOAT exponent."
        ),
    ),
    "ELEMENT_WISE_CONSTANT_POW": Page(
        page="ns-directml-dml_element_wise_constant_pow_operator_desc",
        introduced="1.0",
        function="f(x) = pow(x, Exponent) (Exponent: FLOAT scalar); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "A negative base works only for an integral Exponent; otherwise the result is NaN. In-place execution"
            " supported (OutputTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_RECIP": Page(
        page="ns-directml-dml_element_wise_recip_operator_desc",
        introduced="1.0",
        function="f(x) = 1 / x; ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Float-only; x == 0 behaviour not stated (IEEE gives +/-INF). In-place execution supported (OutputTensor"
            " may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_SIN": Page(
        page="ns-directml-dml_element_wise_sin_operator_desc",
        introduced="1.0",
        function="f(x) = sin(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_SQRT": Page(
        page="ns-directml-dml_element_wise_sqrt_operator_desc",
        introduced="1.0",
        function="f(x) = sqrt(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Negative-input behaviour not stated (IEEE gives NaN). In-place execution supported (OutputTensor may"
            " alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_SUBTRACT": Page(
        page="ns-directml-dml_element_wise_subtract_operator_desc",
        introduced="1.0",
        function="f(a, b) = a - b",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "ATensor": ("4", "FLOAT32 FLOAT16"),
                "BTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "ATensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
            "5.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Unsigned underflow behaviour is not documented (wraparound expected for UINT types). Dimension counts"
            " at 1.0/2.1 are exactly 4 (ADD and MULTIPLY allow 4-5). No ScaleBias field. In-place execution"
            " supported (OutputTensor may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_TAN": Page(
        page="ns-directml-dml_element_wise_tan_operator_desc",
        introduced="1.0",
        function="f(x) = tan(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_THRESHOLD": Page(
        page="ns-directml-dml_element_wise_threshold_operator_desc",
        introduced="1.0",
        function="f(x) = max(x, Min) (values below Min become Min); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Min is a FLOAT attribute even for integer tensors; it is a lower clamp only (no upper bound), not a"
            " 0/1 step function. In-place execution supported (OutputTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_QUANTIZE_LINEAR": Page(
        page="ns-directml-dml_element_wise_quantize_linear_operator_desc",
        introduced="1.0",
        function=(
            "f(input, scale, zero_point) = clamp(round(input / scale) + zero_point, Min, Max), with [Min, Max] ="
            " [0, 255] for UINT8 output and [-128, 127] for INT8 output"
        ),
        constraints=(
            "InputTensor, OutputTensor, ScaleTensor and ZeroPointTensor: same DimensionCount and Sizes.",
            "OutputTensor and ZeroPointTensor: same DataType.",
            "ScaleTensor must be FLOAT32 when InputTensor is INT32; otherwise ScaleTensor's DataType equals"
            " InputTensor's.",
            "A scale of 0 is undefined behaviour.",
            "OutputTensor is INT8/UINT8 (UINT8 only at 1.0), whatever the input type.",
            "ZeroPointTensor is required before 6.2 and optional from 6.2.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "UINT8"),
                "OutputTensor": ("4", "UINT8"),
            },
            "2.1": {
                "InputTensor": ("4", "FLOAT32 INT32"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputTensor": ("4", "INT8 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 INT32"),
                "ScaleTensor": ("1-8", "FLOAT32"),
                "ZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
            "6.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
            "6.2": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
        },
        notes=(
            "Scale and zero point are full tensors with the output's sizes (per-element, broadcast via strides),"
            " not scalars. The page's 'round' does not name a tie-breaking rule (ONNX QuantizeLinear, which this"
            " mirrors, rounds half to even). Saturates to the output type's range. The 6.2 table marks"
            " ZeroPointTensor as 'Optional input' (the page does not say what an absent one"
            " means; 0 is the natural reading); earlier tables list it as a required input. INT32 input is"
            " quantized with a FLOAT32 scale. No in-place support stated."
        ),
    ),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": Page(
        page="ns-directml-dml_element_wise_dequantize_linear_operator_desc",
        introduced="1.0",
        function="f(input, scale, zero_point) = (input - zero_point) * scale",
        constraints=(
            "InputTensor, OutputTensor, ScaleTensor and ZeroPointTensor: same DimensionCount and Sizes.",
            "InputTensor and ZeroPointTensor: same DataType.",
            "OutputTensor and ScaleTensor: same DataType.",
            "A scale of 0 is undefined behaviour.",
            "OutputTensor is a float type (FLOAT32, plus FLOAT16 from 6.0) while the input is an integer type.",
            "ZeroPointTensor is required before 6.2 and optional from 6.2.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "UINT8"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "UINT8"),
                "OutputTensor": ("4", "FLOAT32"),
            },
            "2.1": {
                "InputTensor": ("4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32"),
            },
            "3.0": {
                "InputTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("1-8", "FLOAT32"),
                "ZeroPointTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32"),
            },
            "6.0": {
                "InputTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
            "6.2": {
                "InputTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "Scale and zero point are full tensors with the output's sizes (per-element, broadcast via strides)."
            " The math is exact (input - zero_point), so an implementation should subtract in a wider signed type, not"
            " wrap for unsigned inputs (the page does not discuss this)."
            " The 6.2 table marks ZeroPointTensor as 'Optional input' (the page does not say what an absent one"
            " means; 0 is the natural reading); earlier tables list it as a required input. No in-place support stated."
        ),
    ),
}
