"""The pages of the ELEMENT_WISE_* arithmetic operators."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

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
