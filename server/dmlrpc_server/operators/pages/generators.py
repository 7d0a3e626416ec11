"""The pages of ONE_HOT, FILL_VALUE_CONSTANT/SEQUENCE, DIAGONAL_MATRIX(1) and NONZERO_COORDINATES."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (REVERSE_SUBSEQUENCES lives at
# ns-directml-dml_reverse_subsequences_desc.md) and MicrosoftDocs/windows-ai-docs docs/directml/api/
# (DIAGONAL_MATRIX1, RESAMPLE2, RESAMPLE3). Support levels are listed ascending; the pages list them descending.
# The pages separate data types with commas; here they are space-separated, in the page's order.

_F = "FLOAT32 FLOAT16"

_I8 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"

_ALL = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"

PAGES: dict[str, Page] = {
    "ONE_HOT": Page(
        page="ns-directml-dml_one_hot_operator_desc",
        introduced="2.0",
        function=(
            "out[..., i (along Axis), ...] = OnValue if i == k else OffValue, where k = Indices[..., 0, ...] "
            "(k + AxisSize if k < 0); OffValue = element 0 of ValuesTensor, OnValue = element 1 along the "
            "fastest-changing ValuesTensor dimension of size > 1"
        ),
        constraints=(
            "IndicesTensor, OutputTensor and ValuesTensor: same DimensionCount.",
            "OutputTensor and ValuesTensor: same DataType.",
            "IndicesTensor sizes equal OutputTensor's except along Axis, where IndicesTensor's size must be 1.",
            "OutputTensor's Axis size may be any value > 0.",
            "ValuesTensor may have any sizes but must hold at least two elements.",
            "Axis < IndicesTensor.DimensionCount.",
        ),
        support={
            "2.0": {"IndicesTensor": ("4", "UINT32"), "ValuesTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "2.1": {"IndicesTensor": ("4", "UINT32"), "ValuesTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "3.0": {
                "IndicesTensor": ("1-8", "INT64 INT32 UINT64 UINT32"),
                "ValuesTensor": ("1-8", _I8),
                "OutputTensor": ("1-8", _I8),
            },
            "4.1": {
                "IndicesTensor": ("1-8", "INT64 INT32 UINT64 UINT32"),
                "ValuesTensor": ("1-8", _ALL),
                "OutputTensor": ("1-8", _ALL),
            },
        },
        notes=(
            "Indices are relative to the start of each sequence along Axis (0 = first element of every "
            "sequence). An index >= the Axis size of OutputTensor is ignored: the whole sequence becomes "
            "OffValue. From 3.0, negative indices (signed index types) count from the end (-1 = last); the "
            "example shows an in-range negative -3 on size 4 -> position 1 (out-of-range negatives are not "
            "described). Axis indexes all dimensions of the tensor (0 = outermost). Other ValuesTensor elements "
            "are unused. "
            "Examples (ValuesTensor FLOAT32 {1,1,1,2} = [0,1] unless stated, output FLOAT32): "
            "(1) Indices UINT32 {1,1,3,1} = [0,3,2], Axis=3 -> {1,1,3,4} = [[1,0,0,0],[0,0,0,1],[0,0,1,0]]; "
            "(2) Indices UINT32 {1,1,1,4} = [0,2,1,0], Axis=2 -> {1,1,3,4} = [[1,0,0,1],[0,0,1,0],[0,1,0,0]]; "
            "(3) Indices UINT32 {1,1,3,1} = [0,3,2], Values {1,1,3,1} = [4,2,9] (off=4, on=2, 9 unused), "
            "Axis=3 -> {1,1,3,4} = [[2,4,4,4],[4,4,4,2],[4,4,2,4]]; "
            "(4) Indices INT32 {1,1,3,1} = [-3,100,3], Axis=3 -> {1,1,3,4} = [[0,1,0,0],[0,0,0,0],[0,0,0,1]]."
        ),
    ),
    "FILL_VALUE_CONSTANT": Page(
        page="ns-directml-dml_fill_value_constant_operator_desc",
        introduced="2.1",
        function="f() = Value for every output element (Value interpreted as ValueDataType)",
        constraints=(
            "ValueDataType must equal OutputTensor.DataType.",
            "OutputTensor may have any sizes.",
        ),
        support={
            "2.1": {"OutputTensor": ("4", _I8)},
            "4.0": {"OutputTensor": ("1-8", _I8)},
            "4.1": {"OutputTensor": ("1-8", _ALL)},
        },
        notes=(
            "No input tensors; Value is a DML_SCALAR_UNION read according to ValueDataType. No Tensor "
            "constraints section on the page. Example: Value=13.0, OutputTensor FLOAT32 {1,1,2,4} -> all 13.0."
        ),
    ),
    "FILL_VALUE_SEQUENCE": Page(
        page="ns-directml-dml_fill_value_sequence_operator_desc",
        introduced="2.1",
        function=(
            "out[i] = ValueStart + i * ValueDelta, i = running element index over output coordinates in "
            "row-major (last dimension fastest) order; implemented as value += ValueDelta per element"
        ),
        constraints=(
            "ValueDataType must equal OutputTensor.DataType (it types both ValueStart and ValueDelta).",
            "OutputTensor may have any sizes.",
        ),
        support={
            "2.1": {"OutputTensor": ("4", _I8)},
            "4.0": {"OutputTensor": ("1-8", _I8)},
            "5.0": {"OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8")},
        },
        notes=(
            "No input tensors. Pseudocode: for each output coordinate, write Value then Value += Delta (so the "
            "accumulation is sequential in the output type). FLOAT64 is never listed, even at 5.0. "
            "Example 2 uses a negative delta with UINT8 (ValueDelta = -2), so a faithful implementation "
            "implies unsigned arithmetic wraps (two's-complement add of the delta). Examples: "
            "(1) ValueStart=3, ValueDelta=2, FLOAT32 {1,1,1,3} -> [3,5,7]; "
            "(2) ValueStart=10, ValueDelta=-2, UINT8 {1,1,2,2} -> [[10,8],[6,4]]. No Tensor constraints section "
            "on the page."
        ),
    ),
    "DIAGONAL_MATRIX": Page(
        page="ns-directml-dml_diagonal_matrix_operator_desc",
        introduced="2.0",
        function="out[..., y, x] = Value if x == y + Offset else 0 (y = row, x = column of the last two dims)",
        constraints=(
            "OutputTensor dims {Batch1, Batch2, OutputHeight, OutputWidth}; height and width need not be equal.",
        ),
        support={
            "2.0": {"OutputTensor": ("4", _F)},
            "2.1": {"OutputTensor": ("4", _I8)},
            "4.0": {"OutputTensor": ("2-4", _I8)},
            "5.1": {"OutputTensor": ("2-4", _ALL)},
        },
        notes=(
            "Generator (no input). Leading dims before the last two are batch: every 2D matrix is filled the "
            "same way. Offset > 0 shifts the diagonal right/up, < 0 left/down. Value is a FLOAT; for non-float "
            "output types it may be truncated (10.6 -> 10). No Tensor constraints section. Examples (FLOAT32, "
            "Value=1.0): Offset=0 {1,1,3,3} -> [[1,0,0],[0,1,0],[0,0,1]]; Offset=1 {1,1,3,3} -> "
            "[[0,1,0],[0,0,1],[0,0,0]]; Offset=-1 {1,1,3,2} -> [[0,0],[1,0],[0,1]]; Offset=-3 {1,1,3,2} -> all 0."
        ),
    ),
    "DIAGONAL_MATRIX1": Page(
        page="ns-directml-dml_diagonal_matrix1_operator_desc",
        introduced="5.1",
        function=(
            "topX = x - y; useValue = (DiagonalFillEnd >= DiagonalFillBegin) XOR (topX >= DiagonalFillBegin) "
            "XOR (topX < DiagonalFillEnd); out[..., y, x] = Value if useValue else (InputTensor[..., y, x] if "
            "InputTensor is given else 0)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "ValueDataType must equal OutputTensor.DataType.",
            "InputTensor is optional.",
        ),
        support={
            "5.1": {"InputTensor": ("2-4", _ALL), "OutputTensor": ("2-4", _ALL)},
        },
        notes=(
            "Page from MicrosoftDocs/windows-ai-docs (not in sdk-api). Single table, no feature-level heading. "
            "Fill range [DiagonalFillBegin, DiagonalFillEnd) of diagonals (topX = x - y); if Begin > End the "
            "fill is inverted (everything outside [End, Begin) is filled). Leading dims are batch (stack of 2D "
            "matrices). Equals DIAGONAL_MATRIX when Begin = Offset and End = Offset + 1 (with no input). Value "
            "is a DML_SCALAR_UNION typed by ValueDataType. Examples (FLOAT32, sizes {4,5}): "
            "(1) no input, Value=7, Begin=0, End=1 -> page shows [[1,0,0,0,0],[0,1,0,0,0],[0,0,1,0,0],"
            "[0,0,0,1,0]] -- inconsistent with Value=7 (pseudocode gives 7 on the diagonal); "
            "(2) no input, Value=7, Begin=0, End=3 -> [[7,7,7,0,0],[0,7,7,7,0],[0,0,7,7,7],[0,0,0,7,7]]; "
            "input X = [[4,7,3,7,9],[1,2,8,6,9],[9,4,1,8,7],[4,3,4,2,4]]: "
            "(3) Value=0, Begin=INT32_MIN, End=1 -> [[0,7,3,7,9],[0,0,8,6,9],[0,0,0,8,7],[0,0,0,0,4]]; "
            "(4) Value=0, Begin=1, End=0 -> [[4,0,0,0,0],[0,2,0,0,0],[0,0,1,0,0],[0,0,0,2,0]]."
        ),
    ),
    "NONZERO_COORDINATES": Page(
        page="ns-directml-dml_nonzero_coordinates_operator_desc",
        introduced="3.0",
        function=(
            "OutputCount = #{i : in[i] != 0}; OutputCoordinates[0, ..., r, :] = last N coordinates of the r-th "
            "non-zero element in ascending linear-index order (rows r >= OutputCount undefined)"
        ),
        constraints=(
            "OutputCountTensor: UINT32 scalar (all sizes 1).",
            "OutputCoordinatesTensor: UINT32, sizes {1,...,1, M, N} with M = InputTensor element count and "
            "effective rank of InputTensor <= N <= InputTensor.DimensionCount.",
            "Effective rank = DimensionCount without leading size-1 dims ({1,2,3,4} -> 3, {1,1,1,1} -> 0).",
        ),
        support={
            "3.0": {
                "InputTensor": ("4-5", _I8),
                "OutputCountTensor": ("4-5", "UINT32"),
                "OutputCoordinatesTensor": ("4-5", "UINT32"),
            },
            "4.0": {
                "InputTensor": ("1-8", _I8),
                "OutputCountTensor": ("1-8", "UINT32"),
                "OutputCoordinatesTensor": ("2-8", "UINT32"),
            },
        },
        notes=(
            "For FLOAT32/FLOAT16 both +0.0 and -0.0 count as zero (NaN is not mentioned). "
            "OutputCoordinatesTensor must be sized for the worst case (every element non-zero); only "
            "OutputCount rows are written, the rest are undefined after execution. Coordinates are in "
            "ascending element order (non-zeros at {1,0},{1,2},{0,5} are written [[0,5],[1,0],[1,2]]). With "
            "N above the effective rank, the extra leading (size-1) coordinate columns hold 0 (per the example). 3.0 "
            "dimension layouts: input {[D0],D1,D2,D3,D4}, count {[1],1,1,1,1}, coordinates {[1],1,1,M,N} "
            "(4D: {1,1,M,N}, 5D: {1,1,1,M,N}); 4.0: input up to 8D, coordinates {[1]...,M,N}. No Tensor "
            "constraints section: rules come from the field texts. Example: input FLOAT32 {1,1,2,4} = "
            "[[1.0,0.0,0.0,2.0],[-0.0,3.5,0.0,-5.2]] -> OutputCount UINT32 {1,1,1,1} = [4], "
            "OutputCoordinates UINT32 {1,1,8,3} = [[0,0,0],[0,0,3],[0,1,1],[0,1,3], 4 undefined rows]."
        ),
    ),
}
