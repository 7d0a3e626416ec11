"""The pages of REDUCE, ARGMIN and ARGMAX."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_<name>_operator_desc.md, except
# MEAN_VARIANCE_NORMALIZATION2, which only exists in MicrosoftDocs/windows-ai-docs docs/directml/api/.
# support levels are listed ascending; the pages list them descending. Tables a page splits by reduce
# function are keyed "X.Y|<functions>".

_NO64 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"

_IDX3 = "INT64 INT32 UINT64 UINT32"

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "REDUCE": Page(
        page="ns-directml-dml_reduce_operator_desc",
        introduced="1.0",
        function=(
            "output[o] = Function over the input elements whose non-reduced coordinates equal o (N = product of "
            "the reduced axes' sizes); Function: ARGMAX, ARGMIN, AVERAGE = sum/N, L1 = sum(|x|), L2 = "
            "sqrt(sum(x^2)), LOG_SUM = log(sum(x)), LOG_SUM_EXP = log(sum(exp(x))), MAX, MIN, MULTIPLY = prod(x), "
            "SUM, SUM_SQUARE = sum(x^2)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType, except ARGMAX/ARGMIN, whose output is always integral.",
            "OutputTensor.DimensionCount must equal InputTensor.DimensionCount (rank kept).",
            "OutputTensor.Sizes equal InputTensor.Sizes except that reduced axes must be size 1.",
            "Each Axes value must lie in [0, InputTensor.DimensionCount - 1]; AxisCount is the length of Axes.",
        ),
        support={
            "1.0|ARGMIN ARGMAX": {"InputTensor": ("4", _F), "OutputTensor": ("4", "UINT32")},
            "1.0|AVERAGE L2 LOG_SUM LOG_SUM_EXP": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "1.0|L1 SUM_SQUARE": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "1.0|MIN MAX": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "1.0|MULTIPLY SUM": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "2.1|ARGMIN ARGMAX": {"InputTensor": ("4", _NO64), "OutputTensor": ("4", "UINT32")},
            "2.1|MIN MAX": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "2.1|MULTIPLY SUM": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "3.0|ARGMIN ARGMAX": {"InputTensor": ("1-8", _NO64), "OutputTensor": ("1-8", _IDX3)},
            "3.0|AVERAGE L2 LOG_SUM LOG_SUM_EXP": {"InputTensor": ("1-8", _F), "OutputTensor": ("1-8", _F)},
            "3.0|L1 SUM_SQUARE": {"InputTensor": ("1-8", _F), "OutputTensor": ("1-8", _F)},
            "3.0|MIN MAX": {"InputTensor": ("1-8", _NO64), "OutputTensor": ("1-8", _NO64)},
            "3.0|MULTIPLY SUM": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.1|ARGMIN ARGMAX": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", _IDX3),
            },
            "5.0|L1 SUM_SQUARE": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
            "5.0|MIN MAX": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
            "5.0|MULTIPLY SUM": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
        },
        notes=(
            "Tables are split by function ('Tensor support according to function'): headings ARGMIN and ARGMAX; "
            "AVERAGE, L2, LOG_SUM and LOG_SUM_EXP; L1 and SUM_SQUARE; MIN and MAX; MULTIPLY and SUM. A function "
            "group has no table at a level where it did not change (e.g. AVERAGE... has only 1.0 and 3.0). The "
            "per-function formulas come from the DML_REDUCE_FUNCTION enum, not this page. Reducing all axes "
            "gives one element. ARGMIN/ARGMAX here pick the first extreme (same as the stand-alone ARGMIN/ARGMAX "
            "ops with DML_AXIS_DIRECTION_INCREASING, which supersede them from 3.0); the index is over the "
            "reduced axes (row-major flattened when several). Examples, input {3,3} FLOAT32 "
            "[[1,2,3],[3,0,4],[2,4,2]], SUM: Axes {0} -> {1,3} [[6,6,9]]; Axes {1} -> {3,1} [[6],[7],[8]]; "
            "Axes {0,1} -> {1,1} [[21]] (the page's comment lists 2,5,2 for the last row, a typo; 21 matches "
            "the input as given)."
        ),
    ),
    "ARGMIN": Page(
        page="ns-directml-dml_argmin_operator_desc",
        introduced="3.0",
        function=(
            "output[o] = index (over the reduced Axes) of the minimum input element in the slice selected by o; "
            "ties: first (INCREASING) or last (DECREASING) per AxisDirection"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount (rank kept).",
            "OutputTensor.Sizes equal InputTensor.Sizes except that reduced axes must be size 1.",
            "Each Axes value must lie in [0, InputTensor.DimensionCount - 1]; AxisCount is the length of Axes.",
            "OutputTensor holds indices: integral type (INT64 INT32 UINT64 UINT32), independent of the input type.",
        ),
        support={
            "3.0": {"InputTensor": ("1-8", _NO64), "OutputTensor": ("1-8", _IDX3)},
            "4.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", _IDX3),
            },
        },
        notes=(
            "Index is relative to the reduced axes; with several axes it is the row-major flattened index over "
            "them (example 3). AxisDirection INCREASING: first minimum, argmin({1,2,3,2,1}) = 0; DECREASING: "
            "last minimum, = 4. With INCREASING equals REDUCE with DML_REDUCE_FUNCTION_ARGMIN. Examples, input "
            "{3,3} FLOAT32 [[1,2,3],[3,0,4],[2,5,2]], INCREASING, UINT32 output: Axes {0} -> {1,3} [[0,1,2]]; "
            "Axes {1} -> {3,1} [[0],[1],[0]]; Axes {0,1} -> {1,1} [[4]]."
        ),
    ),
    "ARGMAX": Page(
        page="ns-directml-dml_argmax_operator_desc",
        introduced="3.0",
        function=(
            "output[o] = index (over the reduced Axes) of the maximum input element in the slice selected by o; "
            "ties: first (INCREASING) or last (DECREASING) per AxisDirection"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount (rank kept).",
            "OutputTensor.Sizes equal InputTensor.Sizes except that reduced axes must be size 1.",
            "Each Axes value must lie in [0, InputTensor.DimensionCount - 1]; AxisCount is the length of Axes.",
            "OutputTensor holds indices: integral type (INT64 INT32 UINT64 UINT32), independent of the input type.",
        ),
        support={
            "3.0": {"InputTensor": ("1-8", _NO64), "OutputTensor": ("1-8", _IDX3)},
            "4.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", _IDX3),
            },
        },
        notes=(
            "Index is relative to the reduced axes; with several axes it is the row-major flattened index over "
            "them (example 3). AxisDirection INCREASING: first maximum, argmax({3,2,1,2,3}) = 0; DECREASING: "
            "last maximum, = 4. With INCREASING equals REDUCE with DML_REDUCE_FUNCTION_ARGMAX. Examples, input "
            "{3,3} FLOAT32 [[1,2,3],[3,0,4],[2,5,2]], INCREASING, UINT32 output: Axes {0} -> {1,3} [[1,2,1]]; "
            "Axes {1} -> {3,1} [[2],[2],[1]]; Axes {0,1} -> {1,1} [[7]]."
        ),
    ),
}
