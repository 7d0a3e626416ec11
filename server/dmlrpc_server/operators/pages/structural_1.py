"""DirectML structural operator pages (gather, reduce, arg-min/max, cast, scans, GEMM, convolution, norms) as data."""

from __future__ import annotations

from dmlrpc_server.operators.pages import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_<name>_operator_desc.md, except
# MEAN_VARIANCE_NORMALIZATION2, which only exists in MicrosoftDocs/windows-ai-docs docs/directml/api/.
# support levels are listed ascending; the pages list them descending. Tables a page splits by reduce
# function are keyed "X.Y|<functions>".

_ALL11 = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"
_NO64 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_IDX3 = "INT64 INT32 UINT64 UINT32"
_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "GATHER": Page(
        page="ns-directml-dml_gather_operator_desc",
        introduced="1.0",
        function="output[...] = input[..., indices[...], ...] (indices select positions along Axis)",
        constraints=(
            "IndicesTensor, InputTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            "Axis must lie in [0, InputTensor.DimensionCount).",
            "IndexDimensions must lie in [0, IndicesTensor.DimensionCount).",
            (
                "OutputTensor.Sizes = InputTensor.Sizes[0..Axis] ++ IndicesTensor.Sizes[(IndicesTensor.DimensionCount"
                " - IndexDimensions)..] ++ InputTensor.Sizes[Axis+1..], right-aligned to OutputTensor.DimensionCount"
                " by cropping leading 1s."
            ),
            (
                "Relevant output rank = original (unpadded) rank of InputTensor + IndexDimensions - 1; it must be <="
                " OutputTensor.DimensionCount."
            ),
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "IndicesTensor": ("4", "UINT32"),
                "OutputTensor": ("4", _F),
            },
            "2.1": {
                "InputTensor": ("4", _NO64),
                "IndicesTensor": ("4", "UINT32"),
                "OutputTensor": ("4", _NO64),
            },
            "3.0": {
                "InputTensor": ("1-8", _NO64),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _NO64),
            },
            "4.1": {
                "InputTensor": ("1-8", _ALL11),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _ALL11),
            },
        },
        notes=(
            "IndexDimensions = number of meaningful trailing dims of IndicesTensor after dropping irrelevant "
            "leading 1s (Sizes {1,1,4,6} with IndexDimensions 3 -> {1,4,6}). From 3.0, negative indices (signed "
            "index types) count from the end of the Axis dimension (-1 = last). Invalid/out-of-range indices give "
            "wrong values but no failure; reads are clamped inside the input's memory. Examples (UINT32 indices, "
            "FLOAT32 data): (1) Axis 0, IndexDimensions 1, input {4} [11,12,13,14], indices {5} [3,1,3,0,2] -> "
            "{5} [14,12,14,11,13]. (2) Axis 0, IndexDimensions 1, input {3,2} [[1,2],[3,4],[5,6]], indices {1,4} "
            "[[0,1,1,2]] -> {4,2} [[1,2],[3,4],[3,4],[5,6]]. (3) Axis 1, IndexDimensions 2, input {3,2} "
            "[[1,2],[3,4],[5,6]], indices {1,2} [[1,0]] -> {3,2} [[2,1],[4,3],[6,5]] (page quirk: the size "
            "formula would give {3,1,2} here; the example behaves as IndexDimensions 1). (4) Axis 2, "
            "IndexDimensions 2, input {1,3,3} [[[1,2,3],[4,5,6],[7,8,9]]], indices {1,1,2} [[[0,2]]] -> {3,1,2} "
            "[[[1,3]],[[4,6]],[[7,9]]]. (5) Axis 1, IndexDimensions 2, input {1,3,2} [[[1,2],[3,4],[5,6]]], "
            "indices {1,2,2} [[[0,1],[1,2]]] -> {2,2,2} [[[1,2],[3,4]],[[3,4],[5,6]]]. Example headings on the "
            "page name the axes inconsistently (e.g. 'Axis 1' heading with Axis: 2); the field values are "
            "authoritative."
        ),
    ),
    "GATHER_ELEMENTS": Page(
        page="ns-directml-dml_gather_elements_operator_desc",
        introduced="2.1",
        function=(
            "output[i, j, k, ...] = input[..., index[i, j, k, ...] (at position Axis), ...]; every other "
            "coordinate is taken unchanged from the output position"
        ),
        constraints=(
            "IndicesTensor, InputTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            "IndicesTensor.Sizes must equal InputTensor.Sizes in every dimension except Axis.",
            "OutputTensor.Sizes must equal IndicesTensor.Sizes.",
            "Axis must lie in [0, InputTensor.DimensionCount).",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", _NO64),
                "IndicesTensor": ("4", "UINT32"),
                "OutputTensor": ("4", _NO64),
            },
            "3.0": {
                "InputTensor": ("1-8", _NO64),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _NO64),
            },
            "4.1": {
                "InputTensor": ("1-8", _ALL11),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _ALL11),
            },
        },
        notes=(
            "Like ONNX GatherElements. From 3.0, negative indices (signed index types) count from the end of "
            "the Axis dimension (-1 = last). The page says nothing about out-of-range indices. Example: Axis 0, "
            "input {3,3} FLOAT32 [[1,2,3],[4,5,6],[7,8,9]], indices {2,3} UINT32 [[1,2,0],[2,0,0]] -> output "
            "{2,3} [[4,8,3],[7,2,3]] (output[y,x] = input[indices[y,x], x]; the page labels the output UINT32, a "
            "typo: it must match the FLOAT32 input)."
        ),
    ),
    "GATHER_ND": Page(
        page="ns-directml-dml_gather_nd_operator_desc",
        introduced="2.1",
        function=(
            "output[...] = input[indices[..., :]] (each index tuple of the last indices dim addresses a leading "
            "sub-block of input; the remaining input dims are copied whole)"
        ),
        constraints=(
            "IndicesTensor, InputTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            (
                "The last dim of IndicesTensor is the index-tuple size; it may not exceed InputTensor.DimensionCount"
                " (in practice InputDimensionCount)."
            ),
            "InputDimensionCount must lie in [1, InputTensor.DimensionCount].",
            "IndicesDimensionCount must lie in [1, IndicesTensor.DimensionCount].",
            (
                "OutputTensor.Sizes = leading 1s ++ IndicesTensor.Sizes[(IndicesTensor.DimensionCount -"
                " IndicesDimensionCount)..(IndicesTensor.DimensionCount - 1)] ++ the input dims after the first"
                " indexTupleSize meaningful ones, right-aligned to OutputTensor.DimensionCount."
            ),
        ),
        support={
            "2.1": {
                "InputTensor": ("4", _NO64),
                "IndicesTensor": ("4", "UINT32"),
                "OutputTensor": ("4", _NO64),
            },
            "3.0": {
                "InputTensor": ("1-8", _NO64),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _NO64),
            },
            "4.1": {
                "InputTensor": ("1-8", _ALL11),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _ALL11),
            },
        },
        notes=(
            "InputDimensionCount / IndicesDimensionCount = meaningful trailing dims after dropping padding 1s. "
            "indexTupleSize = IndicesTensor.Sizes[last]. The page's literal formula takes the trailing input "
            "part as InputTensor.Sizes[(InputTensor.DimensionCount - indexTupleSize)..], which contradicts its "
            "own examples; the examples agree with 'meaningful input dims minus the first indexTupleSize', i.e. "
            "InputTensor.Sizes[(InputTensor.DimensionCount - InputDimensionCount + indexTupleSize)..]. Size "
            "example: input {3,4,5,6,7} (InputDimensionCount 5), indices {1,1,1,2,3} (IndicesDimensionCount 3: a "
            "{1,2} array of 3-tuples) -> output {1,1,2,6,7}. From 3.0, negative indices (signed index types) "
            "count from the end of their dimension. The page says nothing about out-of-range indices. Examples "
            "(FLOAT32 data, UINT32 indices): (1) InputDimensionCount 2, IndicesDimensionCount 2, input {2,2} "
            "[[0,1],[2,3]], indices {2,1} [[1],[0]] -> {2,2} [[2,3],[0,1]]. (2) InputDimensionCount 3, "
            "IndicesDimensionCount 2, input {1,2,2,2} [[[[0,1],[2,3]],[[4,5],[6,7]]]], indices {1,1,2,2} "
            "[[[[0,1],[1,0]]]] -> {1,1,2,2} [[[[2,3],[4,5]]]]. Superseded by GATHER_ND1 (3.0)."
        ),
    ),
    "GATHER_ND1": Page(
        page="ns-directml-dml_gather_nd1_operator_desc",
        introduced="3.0",
        function="output[batch, ...] = input[batch, indices[batch, ..., :], ...]",
        constraints=(
            "IndicesTensor, InputTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            "The last dim of IndicesTensor is the index-tuple size; it may not exceed InputTensor.DimensionCount.",
            "InputDimensionCount must lie in [1, InputTensor.DimensionCount].",
            "IndicesDimensionCount must lie in [1, IndicesTensor.DimensionCount].",
            (
                "BatchDimensionCount must lie in [0, InputTensor.DimensionCount) and in [0,"
                " IndicesTensor.DimensionCount)."
            ),
            (
                "OutputTensor.Sizes = leading 1s ++ IndicesTensor.Sizes[(IndicesTensor.DimensionCount -"
                " IndicesDimensionCount)..(IndicesTensor.DimensionCount - 1)] ++ remaining input dims after the"
                " batch dims and the indexTupleSize indexed dims, right-aligned to OutputTensor.DimensionCount."
            ),
        ),
        support={
            "3.0": {
                "InputTensor": ("1-8", _NO64),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _NO64),
            },
            "4.1": {
                "InputTensor": ("1-8", _ALL11),
                "IndicesTensor": ("1-8", _IDX3),
                "OutputTensor": ("1-8", _ALL11),
            },
        },
        notes=(
            "Equivalent to GATHER_ND when BatchDimensionCount = 0. The first BatchDimensionCount meaningful dims "
            "of every tensor are independent batches (0 = a single batch); index tuples address input dims after "
            "the batch dims. E.g. indices {1,3,4,5,6,7}, IndicesDimensionCount 5, BatchDimensionCount 2 -> "
            "batches {3,4}, meaningful indices {5,6,7}. The page repeats GATHER_ND's literal size formula "
            "(InputTensor.Sizes[(DimensionCount - indexTupleSize)..]), which contradicts its size example input "
            "{3,4,5,6,7}, indices {1,1,1,2,3}, IndicesDimensionCount 3 -> output {1,1,2,6,7}. From 3.0, negative "
            "indices (signed types) count from the end of their dimension. Examples (FLOAT32 data, UINT32 "
            "indices): (1) InputDimensionCount 2, IndicesDimensionCount 2, BatchDimensionCount 0, input {2,2} "
            "[[0,1],[2,3]], indices {2,1} [[1],[0]] -> {2,2} [[2,3],[0,1]]. (2) InputDimensionCount 3, "
            "IndicesDimensionCount 3, BatchDimensionCount 1, input {1,3,2,2} [[[[0,1],[2,3]],[[4,5],[6,7]],"
            "[[8,9],[10,11]]]], indices {1,3,2,2} [[[[0,0],[1,1]],[[1,1],[0,0]],[[0,1],[1,0]]]] -> output "
            "{1,1,3,2} [[[[0,3],[7,4],[9,10]]]]."
        ),
    ),
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
    "CAST": Page(
        page="ns-directml-dml_cast_operator_desc",
        introduced="1.0",
        function="f(x) = (OutputTensor.DataType) x",
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount and Sizes (DataTypes may differ: that is the point).",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT16 INT8 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT16 INT8 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
            "3.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
            "4.1": {"InputTensor": ("1-8", _ALL11), "OutputTensor": ("1-8", _ALL11)},
        },
        notes=(
            "The page does not define rounding, saturation/overflow or NaN handling for float->int or narrowing "
            "casts. Surprise: the 1.0 table has no INT32/UINT32 at all (only FLOAT32 FLOAT16 INT16 INT8 UINT16 "
            "UINT8); 32/64-bit integers arrive in 3.0, more than 4 dims in 3.1, FLOAT64 in 4.1. Some types may be "
            "unsupported on some hardware: check IDMLDevice::CheckFeatureSupport with "
            "DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT. (The page's InputTensor field text is a copy-paste of an "
            "output description.)"
        ),
    ),
    "CUMULATIVE_SUMMATION": Page(
        page="ns-directml-dml_cumulative_summation_operator_desc",
        introduced="2.1",
        function=(
            "INCREASING: y[i] = sum(x[0..i]) (HasExclusiveSum: sum(x[0..i-1]), 0 first); DECREASING: y[i] = "
            "sum(x[i..n-1]) (exclusive: sum(x[i+1..n-1])), along Axis"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "Axis must be < InputTensor.DimensionCount.",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
        },
        notes=(
            "In-place execution supported (OutputTensor may alias InputTensor). Exclusive: the tally is written "
            "before adding the current element, so the grand total is never written. Examples, input {1,1,3,4} "
            "FLOAT32 [[[[2,1,3,5],[3,8,7,3],[9,6,2,4]]]]: (1) Axis 3, INCREASING, inclusive -> "
            "[[2,3,6,11],[3,11,18,21],[9,15,17,21]]. (2) Axis 3, INCREASING, exclusive -> "
            "[[0,2,3,6],[0,3,11,18],[0,9,15,17]]. (3) Axis 3, DECREASING, inclusive -> "
            "[[11,9,8,5],[21,18,10,3],[21,12,6,4]]. (4) Axis 2, INCREASING, inclusive -> "
            "[[2,1,3,5],[5,9,10,8],[14,15,12,12]]. Note: more than 4 dims only from 4.0 (not 3.0)."
        ),
    ),
    "CUMULATIVE_PRODUCT": Page(
        page="ns-directml-dml_cumulative_product_operator_desc",
        introduced="3.1",
        function=(
            "INCREASING: y[i] = prod(x[0..i]) (HasExclusiveProduct: prod(x[0..i-1]), 1 first); DECREASING: y[i] "
            "= prod(x[i..n-1]) (exclusive: prod(x[i+1..n-1])), along Axis"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "Axis must be < InputTensor.DimensionCount.",
        ),
        support={
            "3.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
        },
        notes=(
            "In-place execution supported (OutputTensor may alias InputTensor). Exclusive: the tally is written "
            "before multiplying in the current element (first output 1), the full product is never written. "
            "Examples, input {1,1,3,4} FLOAT32 [[[[2,1,3,5],[3,8,7,3],[9,6,2,4]]]]: (1) Axis 3, INCREASING, "
            "inclusive -> [[2,2,6,30],[3,24,168,504],[9,54,108,432]]. (2) Axis 3, INCREASING, exclusive -> "
            "[[1,2,2,6],[1,3,24,168],[1,9,54,108]]. (3) Axis 3, DECREASING, inclusive -> "
            "[[30,15,15,5],[504,168,21,3],[432,48,8,4]]. (4) Axis 2, INCREASING, inclusive -> "
            "[[2,1,3,5],[6,8,21,15],[54,48,42,60]]. (The page's InputTensor text also carries a stray sentence "
            "copied from a batch-normalization grad page.)"
        ),
    ),
    "GEMM": Page(
        page="ns-directml-dml_gemm_operator_desc",
        introduced="1.0",
        function="Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C); C = 0 when CTensor is null",
        constraints=(
            "ATensor, BTensor, CTensor and OutputTensor: same DataType and DimensionCount.",
            "CTensor and OutputTensor: same Sizes.",
            (
                "A is {Batch, Channel, M, K} ({.., K, M} if TransA = TRANSPOSE); B is {Batch, Channel, K, N} ({..,"
                " N, K} if TransB = TRANSPOSE); C and Output are {Batch, Channel, M, N}."
            ),
        ),
        support={
            "1.0": {
                "ATensor": ("4", _F),
                "BTensor": ("4", _F),
                "CTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
            "4.0": {
                "ATensor": ("2-4", _F),
                "BTensor": ("2-4", _F),
                "CTensor": ("2-4", _F),
                "OutputTensor": ("2-4", _F),
            },
        },
        notes=(
            "BatchCount * ChannelCount independent {M,K} x {K,N} products; from 4.0 the Batch/Channel dims are "
            "optional (2-4 dims). CTensor optional (values 0 when absent; Beta ignored then); C has the output's "
            "sizes per the constraints (the page does not describe broadcasting of C beyond tensor strides). "
            "TransA/TransB: DML_MATRIX_TRANSFORM_NONE or _TRANSPOSE (transposes the last two dims). "
            "FusedActivation optional, applied last. No worked examples on the page."
        ),
    ),
    "MATRIX_MULTIPLY_INTEGER": Page(
        page="ns-directml-dml_matrix_multiply_integer_operator_desc",
        introduced="2.1",
        function="Output[b,c,m,n] = sum_k (A[b,c,m,k] - AZeroPoint) * (B[b,c,k,n] - BZeroPoint), in INT32",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DimensionCount.",
            "BTensor and BZeroPointTensor: same DataType.",
            "ATensor and AZeroPointTensor: same DataType.",
            "OutputTensor is INT32 whatever the INT8/UINT8 input types.",
            (
                "AZeroPointTensor: {1,1,1,1} (per tensor) or {1,1,M,1} (per row); BZeroPointTensor: {1,1,1,1} (per"
                " tensor) or {1,1,1,N} (per column)."
            ),
        ),
        support={
            "2.1": {
                "ATensor": ("4", "INT8 UINT8"),
                "AZeroPointTensor": ("4", "INT8 UINT8"),
                "BTensor": ("4", "INT8 UINT8"),
                "BZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputTensor": ("4", "INT32"),
            },
            "4.0": {
                "ATensor": ("2-4", "INT8 UINT8"),
                "AZeroPointTensor": ("1-4", "INT8 UINT8"),
                "BTensor": ("2-4", "INT8 UINT8"),
                "BZeroPointTensor": ("2-4", "INT8 UINT8"),
                "OutputTensor": ("2-4", "INT32"),
            },
            "5.2": {
                "ATensor": ("2-4", "INT8 UINT8"),
                "AZeroPointTensor": ("1-4", "INT8 UINT8"),
                "BTensor": ("2-4", "INT8 UINT8"),
                "BZeroPointTensor": ("1-4", "INT8 UINT8"),
                "OutputTensor": ("2-4", "INT32"),
            },
        },
        notes=(
            "A is {Batch, Channel, M, K}, B {Batch, Channel, K, N}, Output {Batch, Channel, M, N}; no transpose "
            "options. Zero points optional (treated as 0 when absent); A and B may differ in signedness (each "
            "INT8 or UINT8) as long as each zero point matches its tensor. From 4.0 Batch/Channel dims optional; "
            "5.2 only relaxes BZeroPointTensor to 1-4 dims. Page dims columns: AZeroPoint { [1], [1], "
            "AZeroPointCount, [1] }, BZeroPoint { [1], [1], 1, BZeroPointCount }. No examples."
        ),
    ),
    "CONVOLUTION": Page(
        page="ns-directml-dml_convolution_operator_desc",
        introduced="1.0",
        function=(
            "Output = FusedActivation(conv(Input, Filter; Strides, Dilations, StartPadding, EndPadding, "
            "GroupCount) + broadcast(Bias)); Mode CONVOLUTION flips the kernel along each spatial dim vs "
            "CROSS_CORRELATION; Direction BACKWARD = transposed convolution"
        ),
        constraints=(
            "BiasTensor, FilterTensor, InputTensor and OutputTensor: same DataType and DimensionCount.",
            (
                "DimensionCount (struct field) = number of spatial dims = size of Strides, Dilations, StartPadding,"
                " EndPadding, OutputPadding; 2 for 4D tensors, 3 for 5D (and 1 for 3D from 4.0)."
            ),
            "BiasTensor is {1, OutputChannelCount, 1[, 1[, 1]]}.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4-5", _F),
                "FilterTensor": ("4-5", _F),
                "BiasTensor": ("4-5", _F),
                "OutputTensor": ("4-5", _F),
            },
            "4.0": {
                "InputTensor": ("3-5", _F),
                "FilterTensor": ("3-5", _F),
                "BiasTensor": ("3-5", _F),
                "OutputTensor": ("3-5", _F),
            },
        },
        notes=(
            "Layouts: Input {Batch, InChannels, [D], [H], W}; Filter {FilterBatch, FilterChannels, [D], [H], W}; "
            "Output {Batch, OutChannels, [D], [H], W}. Strides/Dilations/StartPadding/EndPadding/OutputPadding "
            "index the spatial dims only (outermost spatial first); Strides are filter strides, unrelated to "
            "tensor strides; Dilations space the kernel taps (zeros inserted). Padding values are interpreted "
            "according to Direction. OutputPadding zero-pads the end of each spatial dim of the result. "
            "GroupCount splits channels into groups; GroupCount = input channels with FORWARD gives depth-wise "
            "convolution. Bias (optional) adds one value per output channel. Mode/Direction table: "
            "CROSS_CORRELATION+FORWARD: filter as is; CROSS_CORRELATION+BACKWARD: filter flipped; "
            "CONVOLUTION+FORWARD: flipped; CONVOLUTION+BACKWARD: as is. The page gives NO output-size formula "
            "and no worked examples (the usual rule, not from this page: forward out = (in + start + end - "
            "((k-1)*dilation + 1)) / stride + 1, floored). FusedActivation optional."
        ),
    ),
    "CONVOLUTION_INTEGER": Page(
        page="ns-directml-dml_convolution_integer_operator_desc",
        introduced="2.1",
        function=(
            "Output = conv(Input - InputZeroPoint, Filter - FilterZeroPoint; Strides, Dilations, StartPadding, "
            "EndPadding, GroupCount), forward cross-correlation, accumulated in INT32"
        ),
        constraints=(
            "FilterZeroPointTensor and InputZeroPointTensor: same DimensionCount.",
            "FilterTensor, InputTensor and OutputTensor: same DimensionCount.",
            "InputTensor and InputZeroPointTensor: same DataType.",
            "FilterTensor and FilterZeroPointTensor: same DataType.",
            "OutputTensor is INT32 whatever the INT8/UINT8 input types.",
            "DimensionCount (spatial dims; size of Strides, Dilations, StartPadding, EndPadding) must be 2.",
            (
                "InputZeroPointTensor is {1,1,1,1}; FilterZeroPointTensor {1,1,1,1} (per tensor) or {1,"
                " OutputChannelCount, 1, 1} (per channel)."
            ),
        ),
        support={
            "2.1": {
                "InputTensor": ("4", "INT8 UINT8"),
                "InputZeroPointTensor": ("4", "INT8 UINT8"),
                "FilterTensor": ("4", "INT8 UINT8"),
                "FilterZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputTensor": ("4", "INT32"),
            },
            "4.0": {
                "InputTensor": ("3-4", "INT8 UINT8"),
                "InputZeroPointTensor": ("1-4", "INT8 UINT8"),
                "FilterTensor": ("3-4", "INT8 UINT8"),
                "FilterZeroPointTensor": ("1-4", "INT8 UINT8"),
                "OutputTensor": ("3-4", "INT32"),
            },
        },
        notes=(
            "Forward only: no Mode, Direction, OutputPadding, Bias or FusedActivation fields. Zero points "
            "optional (0 when absent). Arrays index the spatial dims only. GroupCount = input channels gives "
            "depth-wise convolution. The page says DimensionCount must be 2, yet the 4.0 table allows 3D "
            "tensors (1 spatial dim): inconsistent. No output-size formula and no examples on the page. The "
            "page's heading is '# Tensor support' (h1), tables as usual."
        ),
    ),
    "BATCH_NORMALIZATION": Page(
        page="ns-directml-dml_batch_normalization_operator_desc",
        introduced="1.0",
        function="Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias)",
        constraints=(
            (
                "BiasTensor, InputTensor, MeanTensor, OutputTensor, ScaleTensor and VarianceTensor: same DataType"
                " and DimensionCount."
            ),
            "InputTensor and OutputTensor: same Sizes.",
            "Each dim of Mean/Variance/Scale/Bias is either 1 (broadcast) or equal to InputTensor's size.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "MeanTensor": ("4", _F),
                "VarianceTensor": ("4", _F),
                "ScaleTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
            "3.1": {
                "InputTensor": ("1-8", _F),
                "MeanTensor": ("1-8", _F),
                "VarianceTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "BiasTensor": ("1-8", _F),
                "OutputTensor": ("1-8", _F),
            },
        },
        notes=(
            "Inference batch norm with supplied statistics; all of Mean/Variance/Scale/Bias are required (not "
            "optional). Spatial = FALSE used to forbid broadcasting Mean/Variance over H and W; deprecated in "
            "4.0 and has no effect. Epsilon is added to the variance inside the sqrt. FusedActivation optional. "
            "No examples."
        ),
    ),
    "MEAN_VARIANCE_NORMALIZATION": Page(
        page="ns-directml-dml_mean_variance_normalization_operator_desc",
        introduced="1.0",
        function=(
            "Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias), Mean/Variance "
            "computed over {H, W} (CrossChannel FALSE) or {C, H, W} (CrossChannel TRUE); NormalizeVariance FALSE: "
            "Output = FusedActivation(Scale * (Input - Mean) + Bias)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same Sizes.",
            "BiasTensor, InputTensor, OutputTensor and ScaleTensor: same DataType.",
            "Scale/Bias dims are {N, C, H, W} with any dim replaceable by 1 (broadcast).",
            "Below 5.2 ScaleTensor and BiasTensor come together (both or neither); from 5.2 either may be null.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "ScaleTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
        },
        notes=(
            "Single table, no feature-level heading. Mean and variance are computed from the input itself (per "
            "batch element; per channel unless CrossChannel). Epsilon: 0.00001 recommended. Absent Scale/Bias "
            "act as 1/0. FusedActivation optional. Superseded by MEAN_VARIANCE_NORMALIZATION1 (2.1): Axes {2,3} "
            "= CrossChannel FALSE, {1,2,3} = TRUE. No examples."
        ),
    ),
    "MEAN_VARIANCE_NORMALIZATION1": Page(
        page="ns-directml-dml_mean_variance_normalization1_operator_desc",
        introduced="2.1",
        function=(
            "Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias), Mean/Variance "
            "over Axes; NormalizeVariance FALSE: Output = FusedActivation(Scale * (Input - Mean) + Bias)"
        ),
        constraints=(
            "BiasTensor, InputTensor, OutputTensor and ScaleTensor: same DataType and DimensionCount.",
            (
                "Below 4.0 Scale/Bias are {N', C, H', W'} with the channel dim equal to the input's and N', H', W'"
                " equal or 1; from 4.0 any dim may be 1 (broadcast)."
            ),
            "Below 5.2 ScaleTensor and BiasTensor come together (both or neither); from 5.2 either may be null.",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", _F),
                "ScaleTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
            "3.1": {
                "InputTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "BiasTensor": ("1-8", _F),
                "OutputTensor": ("1-8", _F),
            },
        },
        notes=(
            "Axes (AxisCount entries) are the dims reduced for Mean and Variance; superset of "
            "MEAN_VARIANCE_NORMALIZATION: Axes {2,3} = CrossChannel FALSE, {1,2,3} = CrossChannel TRUE. The page "
            "states no range/uniqueness rule for Axes. Output Sizes are the input's. Epsilon: 0.00001 "
            "recommended. FusedActivation optional. No examples."
        ),
    ),
    "MEAN_VARIANCE_NORMALIZATION2": Page(
        page="ns-directml-dml_mean_variance_normalization2_operator_desc",
        introduced="6.3",
        function=(
            "Output = FusedActivation(Scale * (Input - (UseMean ? Mean : 0)) / (UseVariance ? sqrt(Variance + "
            "Epsilon) : 1) + Bias), Mean/Variance over Axes (semantics of UseMean/UseVariance inferred: the page "
            "says TBD)"
        ),
        constraints=(
            "BiasTensor, InputTensor, OutputTensor and ScaleTensor: same DataType and DimensionCount.",
            (
                "Below 4.0 Scale/Bias are {N', C, H', W'} with the channel dim equal to the input's and N', H', W'"
                " equal or 1; from 4.0 any dim may be 1 (broadcast)."
            ),
            "Below 5.2 ScaleTensor and BiasTensor come together (both or neither); from 5.2 either may be null.",
        ),
        support={
            "6.3": {
                "InputTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "BiasTensor": ("1-8", _F),
                "OutputTensor": ("1-8", _F),
            },
        },
        notes=(
            "Only in MicrosoftDocs/windows-ai-docs (docs/directml/api/), not in sdk-api. The page is a stub: "
            "description, UseMean and UseVariance are all 'TBD'; fields = MEAN_VARIANCE_NORMALIZATION1's with "
            "NormalizeVariance replaced by UseMean + UseVariance (BOOLs). Requires the DirectML redistributable "
            "1.15.0+. Single table, no heading (keyed with the introducing level 6.3). Epsilon: 0.00001 "
            "recommended. FusedActivation optional. No examples."
        ),
    ),
    "LP_NORMALIZATION": Page(
        page="ns-directml-dml_lp_normalization_operator_desc",
        introduced="1.0",
        function="Output = Input / (sum(|Input|^P along Axis))^(1/P), P in {1, 2}; Epsilon guards division by zero",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "P must be 1 or 2.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "3.1": {"InputTensor": ("1-8", _F), "OutputTensor": ("1-8", _F)},
        },
        notes=(
            "Normalizes each 1-D slice along the single Axis (range not stated; presumably < DimensionCount). "
            "The page does not say exactly how Epsilon enters (e.g. max(norm, Epsilon) vs norm + Epsilon); "
            "0.00001 recommended. No examples."
        ),
    ),
    "LOCAL_RESPONSE_NORMALIZATION": Page(
        page="ns-directml-dml_local_response_normalization_operator_desc",
        introduced="1.0",
        function="Output = Input / (Bias + (Alpha / LocalSize) * sum(Input^2 over the local region))^Beta",
        constraints=(
            "InputTensor and OutputTensor: same DataType and Sizes.",
            "LocalSize must be >= 1.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
        },
        notes=(
            "Single table, no heading. Input {N, C, H, W}, 4D only at every level. LocalSize = number of elements "
            "summed per dimension: Width, Height, and also Channel when CrossChannel is TRUE (the page's wording; "
            "it does not pin down the window alignment/centering or whether CrossChannel TRUE excludes the "
            "spatial window). Recommended defaults: Alpha 0.0001, Beta 0.75, Bias 1. No examples."
        ),
    ),
}
