"""The pages of GATHER, GATHER_ELEMENTS, GATHER_ND and GATHER_ND1."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

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
}
