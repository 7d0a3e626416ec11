"""The pages of the ELEMENT_WISE_* logical, comparison, shift and bit operators."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

PAGES: dict[str, Page] = {
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
}
