"""DirectML reference pages, element-wise operators part 2 (SIGN .. NEGATE), transcribed as data."""

from __future__ import annotations

from dmlrpc_server.operators.pages import Page

PAGES: dict[str, Page] = {
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
    "ELEMENT_WISE_ERF": Page(
        page="ns-directml-dml_element_wise_erf_operator_desc",
        introduced="2.0",
        function=(
            "f(x) = erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt; ScaleBias applied to the input first: x*Scale+Bias"
        ),
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_SINH": Page(
        page="ns-directml-dml_element_wise_sinh_operator_desc",
        introduced="2.0",
        function="f(x) = sinh(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_COSH": Page(
        page="ns-directml-dml_element_wise_cosh_operator_desc",
        introduced="2.0",
        function="f(x) = cosh(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_TANH": Page(
        page="ns-directml-dml_element_wise_tanh_operator_desc",
        introduced="2.0",
        function="f(x) = tanh(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ASINH": Page(
        page="ns-directml-dml_element_wise_asinh_operator_desc",
        introduced="2.0",
        function="f(x) = asinh(x) = ln(x + sqrt(x*x + 1)); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ACOSH": Page(
        page="ns-directml-dml_element_wise_acosh_operator_desc",
        introduced="2.0",
        function="f(x) = acosh(x) = ln(x + sqrt(x*x - 1)); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ATANH": Page(
        page="ns-directml-dml_element_wise_atanh_operator_desc",
        introduced="2.0",
        function="f(x) = atanh(x) = ln((1 + x) / (1 - x)) / 2; ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
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
    "ELEMENT_WISE_ADD1": Page(
        page="ns-directml-dml_element_wise_add1_operator_desc",
        introduced="2.0",
        function="f(a, b) = FusedActivation(a + b)",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "FusedActivation (optional) is allowed only when the output DataType is FLOAT16 or FLOAT32.",
        ),
        support={
            "2.0": {
                "ATensor": ("4-5", "FLOAT32 FLOAT16"),
                "BTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "FusedActivation, if given, is applied to the sum. Supports in-place execution (OutputTensor may alias "
            "one or more inputs)."
        ),
    ),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": Page(
        page="ns-directml-dml_element_wise_bit_shift_left_operator_desc",
        introduced="2.1",
        function="f(a, b) = a << b (logical shift)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.1": {
                "ATensor": ("4", "UINT32 UINT16 UINT8"),
                "BTensor": ("4", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Unsigned-integer-only support. Operates on the raw bits; the data type only sets the element width. "
            "Supports in-place execution (OutputTensor may alias one of the inputs). Behaviour for shift counts >= "
            "bit width is not stated."
        ),
    ),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": Page(
        page="ns-directml-dml_element_wise_bit_shift_right_operator_desc",
        introduced="2.1",
        function="f(a, b) = a >> b (logical shift)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.1": {
                "ATensor": ("4", "UINT32 UINT16 UINT8"),
                "BTensor": ("4", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Unsigned-integer-only support; logical (zero-filling) shift. Operates on the raw bits; the data type "
            "only sets the element width. Supports in-place execution (OutputTensor may alias one of the inputs). "
            "Behaviour for shift counts >= bit width is not stated."
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
    "ELEMENT_WISE_MODULUS_TRUNCATE": Page(
        page="ns-directml-dml_element_wise_modulus_truncate_operator_desc",
        introduced="2.1",
        function="f(a, b) = a - b * trunc(a / b)  (C fmod/% semantics)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
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
            "6.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Quotient rounds toward 0, so the result takes the sign of the dividend a. Division by zero is not "
            "described. Supports in-place execution (OutputTensor may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_MODULUS_FLOOR": Page(
        page="ns-directml-dml_element_wise_modulus_floor_operator_desc",
        introduced="2.1",
        function="f(a, b) = a - b * floor(a / b)  (Python % semantics)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
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
            "6.0": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Quotient rounds toward -inf, so the result takes the sign of the divisor b. Division by zero is not "
            "described. Supports in-place execution (OutputTensor may alias one of the inputs)."
        ),
    ),
    "ELEMENT_WISE_BIT_AND": Page(
        page="ns-directml-dml_element_wise_bit_and_operator_desc",
        introduced="3.0",
        function="f(a, b) = a & b (bitwise, on the raw bits)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Applied to the native bit encoding; the data type only sets the element width (so float inputs at 4.1 "
            "are ANDed bitwise, not numerically). Unsigned-only before 4.1. Supports in-place execution "
            "(OutputTensor may alias one or more inputs)."
        ),
    ),
    "ELEMENT_WISE_BIT_OR": Page(
        page="ns-directml-dml_element_wise_bit_or_operator_desc",
        introduced="3.0",
        function="f(a, b) = a | b (bitwise, on the raw bits)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Applied to the native bit encoding; the data type only sets the element width. Unsigned-only before "
            "4.1. Supports in-place execution (OutputTensor may alias one or more inputs)."
        ),
    ),
    "ELEMENT_WISE_BIT_XOR": Page(
        page="ns-directml-dml_element_wise_bit_xor_operator_desc",
        introduced="3.0",
        function="f(a, b) = a ^ b (bitwise, on the raw bits)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.0": {
                "ATensor": ("1-8", "UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "ATensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "BTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Applied to the native bit encoding; the data type only sets the element width. Unsigned-only before "
            "4.1. Supports in-place execution (OutputTensor may alias one or more inputs). The page's example is a "
            "single-input bitwise-NOT example (copied from BIT_NOT), not an XOR example: ignore it."
        ),
    ),
    "ELEMENT_WISE_BIT_NOT": Page(
        page="ns-directml-dml_element_wise_bit_not_operator_desc",
        introduced="3.0",
        function="f(x) = ~x (bitwise, on the raw bits)",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.0": {
                "InputTensor": ("1-8", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Applied to the native bit encoding; the data type only sets the element width (UINT8 example: 0 -> "
            "255, 128 -> 127, 42 -> 213, 255 -> 0). Unsigned-only before 4.1. Supports in-place execution "
            "(OutputTensor may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_BIT_COUNT": Page(
        page="ns-directml-dml_element_wise_bit_count_operator_desc",
        introduced="3.0",
        function="f(x) = popcount(x) (number of 1 bits in the raw encoding)",
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount and Sizes (DataType may differ).",
            "OutputTensor is UINT32 or UINT8 regardless of the input type.",
        ),
        support={
            "3.0": {
                "InputTensor": ("1-8", "UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
            "4.1": {
                "InputTensor": ("1-8", "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "UINT32 UINT8"),
            },
        },
        notes=(
            "Counts bits of the native encoding; the input type only sets the element width (UINT32 example: 0 -> "
            "0, 123 -> 6, 456 -> 4, 789 -> 5). Output type may differ from the input. No in-place statement on the "
            "page."
        ),
    ),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": Page(
        page="ns-directml-dml_element_wise_logical_greater_than_or_equal_operator_desc",
        introduced="3.0",
        function="f(a, b) = 1 if a >= b else 0",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DimensionCount and Sizes.",
            "ATensor and BTensor: same DataType (OutputTensor's may differ).",
            "OutputTensor is UINT32 or UINT8 (0/1 result).",
        ),
        support={
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
        notes="Output type differs from the inputs (integer 0/1). No in-place statement on the page.",
    ),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": Page(
        page="ns-directml-dml_element_wise_logical_less_than_or_equal_operator_desc",
        introduced="3.0",
        function="f(a, b) = 1 if a <= b else 0",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DimensionCount and Sizes.",
            "ATensor and BTensor: same DataType (OutputTensor's may differ).",
            "OutputTensor is UINT32 or UINT8 (0/1 result).",
        ),
        support={
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
            "The page has two Availability sections (a stray 'DML_FEATURE_LEVEL_1_0' one, then "
            "'DML_FEATURE_LEVEL_3_0'); 3.0 is the real one and matches the tables. Output type differs from the "
            "inputs (integer 0/1). No in-place statement on the page."
        ),
    ),
    "ELEMENT_WISE_ATAN_YX": Page(
        page="ns-directml-dml_element_wise_atan_yx_operator_desc",
        introduced="3.1",
        function="f(y, x) = atan2(y, x) with y = ATensor, x = BTensor",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "Single table without a feature-level heading. ATensor is the Y coordinate, BTensor the X. Result is "
            "undefined at the origin (a == 0 and b == 0). Supports in-place execution (OutputTensor may alias "
            "ATensor or BTensor)."
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
    "ELEMENT_WISE_DIFFERENCE_SQUARE": Page(
        page="ns-directml-dml_element_wise_difference_square_operator_desc",
        introduced="3.1",
        function="f(a, b) = (a - b) * (a - b)",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
        },
        notes=(
            "Single table without a feature-level heading. Integer support is only INT32 and UINT32 (no "
            "8/16/64-bit). Overflow/wrap behaviour for integers is not stated. Supports in-place execution "
            "(OutputTensor may alias ATensor or BTensor)."
        ),
    ),
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": Page(
        page="ns-directml-dml_element_wise_quantized_linear_add_operator_desc",
        introduced="4.0",
        function=(
            "f(a, b) = clamp(round(((a - AZeroPoint) * AScale + (b - BZeroPoint) * BScale) / OutputScale) + "
            "OutputZeroPoint, Min, Max); Min/Max = 0/255 for UINT8 output, -128/127 for INT8 output"
        ),
        constraints=(
            (
                "All nine tensors (A, AScale, AZeroPoint, B, BScale, BZeroPoint, OutputScale, Output, "
                "OutputZeroPoint): same DimensionCount."
            ),
            "ATensor and AZeroPointTensor: same DataType.",
            "BTensor and BZeroPointTensor: same DataType.",
            "OutputTensor and OutputZeroPointTensor: same DataType.",
            "AScaleTensor, BScaleTensor, OutputScaleTensor: exactly 1 element each, FLOAT32.",
            "AZeroPointTensor, BZeroPointTensor, OutputZeroPointTensor: optional, 1 element each, default 0.",
        ),
        support={
            "4.0": {
                "ATensor": ("1-8", "INT8 UINT8"),
                "AScaleTensor": ("1-8", "FLOAT32"),
                "AZeroPointTensor": ("1-8", "INT8 UINT8"),
                "BTensor": ("1-8", "INT8 UINT8"),
                "BScaleTensor": ("1-8", "FLOAT32"),
                "BZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputScaleTensor": ("1-8", "FLOAT32"),
                "OutputZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
        },
        notes=(
            "Single table without a feature-level heading. Scales and zero points are per-tensor (1 element), not "
            "per-axis. A, B and Output may each be INT8 or UINT8 independently (only each zero point must match "
            "its tensor). Rounding mode of round() is not specified on the page (assume half-to-even as in "
            "QuantizeLinear). Sizes-equality of A/B/Output is not stated as a constraint (only DimensionCount). No "
            "in-place statement on the page. Struct field order: ATensor, AScaleTensor, AZeroPointTensor, BTensor, "
            "BScaleTensor, BZeroPointTensor, OutputScaleTensor, OutputZeroPointTensor, OutputTensor."
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
    "ELEMENT_WISE_NEGATE": Page(
        page="ns-directml-dml_element_wise_negate_operator_desc",
        introduced="5.0",
        function="f(x) = -x",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8"),
            },
        },
        notes=(
            "Single table without a feature-level heading. Signed types only (no UINT*). No ScaleBias field. "
            "Integer overflow of -MIN_INT is not described. Supports in-place execution (OutputTensor may alias "
            "InputTensor)."
        ),
    ),
}
