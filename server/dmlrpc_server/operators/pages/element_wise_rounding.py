"""The pages of the ELEMENT_WISE_* rounding, clamping, min/max, sign, selection and classification operators."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

PAGES: dict[str, Page] = {
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
    "ELEMENT_WISE_SIGN": Page(
        page="ns-directml-dml_element_wise_sign_operator_desc",
        introduced="2.0",
        function="f(x) = -1 if x < 0; 1 if x > 0; 0 otherwise",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "The 'otherwise' case (result 0) explicitly includes negative zero. NaN is not mentioned: the formula "
            "maps it to 0, whereas an older (2020) revision of the page said NaN -> NaN. Supports in-place "
            "execution (OutputTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_IS_NAN": Page(
        page="ns-directml-dml_element_wise_is_nan_operator_desc",
        introduced="2.0",
        function="f(x) = 1 if x is NaN (IEEE-754) else 0",
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount and Sizes (DataType may differ).",
            "OutputTensor is UINT32 or UINT8 while InputTensor is FLOAT32 or FLOAT16.",
        ),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT32 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes="Output type differs from input: integer 0/1 result. No in-place statement on the page.",
    ),
    "ELEMENT_WISE_IF": Page(
        page="ns-directml-dml_element_wise_if_operator_desc",
        introduced="2.0",
        function="f(cond, a, b) = a if cond != 0 else b",
        constraints=(
            "ATensor, BTensor, ConditionTensor and OutputTensor: same DimensionCount and Sizes.",
            "ATensor, BTensor and OutputTensor: same DataType.",
            "ConditionTensor is always UINT8.",
        ),
        support={
            "2.0": {
                "ConditionTensor": ("4", "UINT8"),
                "ATensor": ("4", "FLOAT16"),
                "BTensor": ("4", "FLOAT16"),
                "OutputTensor": ("4", "FLOAT16"),
            },
            "3.0": {
                "ConditionTensor": ("1-8", "UINT8"),
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "5.0": {
                "ConditionTensor": ("1-8", "UINT8"),
                "ATensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Any non-zero condition byte selects A; zero selects B. The page's 2.0 table lists FLOAT16 only (no "
            "FLOAT32) for A/B/Output. No in-place statement on the page. Field order in the struct: "
            "ConditionTensor, ATensor, BTensor, OutputTensor."
        ),
    ),
    "ELEMENT_WISE_ROUND": Page(
        page="ns-directml-dml_element_wise_round_operator_desc",
        introduced="2.1",
        function=(
            "f(x) = round(x) per RoundingMode: HALVES_TO_NEAREST_EVEN -> nearest, ties to even; TOWARD_ZERO -> "
            "trunc(x); TOWARD_INFINITY -> nearest, ties away from zero"
        ),
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "DML_ROUNDING_MODE_TOWARD_INFINITY is NOT ceil: it rounds to nearest with halfway values going away "
            "from zero (e.g. 2.5 -> 3, -2.5 -> -3); TOWARD_ZERO truncates the fraction. No ScaleBias field. "
            "Supports in-place execution (OutputTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_IS_INFINITY": Page(
        page="ns-directml-dml_element_wise_is_infinity_operator_desc",
        introduced="2.1",
        function=(
            "f(x) = 1 if isinf(x) and (InfinityMode == EITHER or (x > 0 and InfinityMode == POSITIVE) or (x < 0 "
            "and InfinityMode == NEGATIVE)) else 0"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount and Sizes (DataType differs).",
            "OutputTensor is UINT8 while InputTensor is FLOAT32 or FLOAT16.",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "UINT8"),
            },
        },
        notes=(
            "InfinityMode is a DML_IS_INFINITY_MODE: EITHER (+inf or -inf), POSITIVE (+inf only), NEGATIVE (-inf "
            "only). Output is UINT8 0/1 only (unlike IS_NAN, which also allows UINT32). No in-place statement on "
            "the page."
        ),
    ),
    "ELEMENT_WISE_CLIP_GRAD": Page(
        page="ns-directml-dml_element_wise_clip_grad_operator_desc",
        introduced="3.1",
        function=(
            "f(x, gradient) = 0 if x <= Min or x >= Max else gradient  (x = InputTensor, gradient = "
            "InputGradientTensor)"
        ),
        constraints=(
            ("InputGradientTensor, InputTensor and OutputGradientTensor: same DataType, DimensionCount and Sizes."),
        ),
        support={
            "3.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "InputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "InputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Both bounds are exclusive for passing the gradient: x exactly equal to Min or Max gives 0. Min and "
            "Max are FLOAT struct fields (even for integer tensors). Supports in-place execution "
            "(OutputGradientTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_CLIP1": Page(
        page="ns-directml-dml_element_wise_clip1_operator_desc",
        introduced="5.0",
        function="f(x) = max(Min, min(x, Max)); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            ("MinMaxDataType must equal OutputTensor.DataType; Min and Max are DML_SCALAR_UNION read as that type."),
        ),
        support={
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Single table without a feature-level heading. Clamps into the closed interval [Min, Max]; Min/Max are "
            "typed scalars (exact for 64-bit integers), unlike CLIP's FLOAT fields. Behaviour when Min > Max is "
            "not stated (formula gives Min). Supports in-place execution (OutputTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_CLIP_GRAD1": Page(
        page="ns-directml-dml_element_wise_clip_grad1_operator_desc",
        introduced="5.0",
        function=(
            "f(x, gradient) = 0 if x <= Min or x >= Max else gradient  (x = InputTensor, gradient = "
            "InputGradientTensor)"
        ),
        constraints=(
            ("InputGradientTensor, InputTensor and OutputGradientTensor: same DataType, DimensionCount and Sizes."),
            ("MinMaxDataType must equal the output DataType; Min and Max are DML_SCALAR_UNION read as that type."),
        ),
        support={
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "InputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Single table without a feature-level heading. Both bounds block the gradient when x equals them (x <= "
            "Min or x >= Max gives 0). The page says MinMaxDataType must match 'OutputTensor.DataType' although "
            "the output field is OutputGradientTensor. Supports in-place execution (output may alias InputTensor)."
        ),
    ),
}
