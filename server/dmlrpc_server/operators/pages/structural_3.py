"""DirectML reference pages, data-movement/generator operators part 3 (SPACE_TO_DEPTH .. NONZERO_COORDINATES)."""

from __future__ import annotations

from dmlrpc_server.operators.pages import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (REVERSE_SUBSEQUENCES lives at
# ns-directml-dml_reverse_subsequences_desc.md) and MicrosoftDocs/windows-ai-docs docs/directml/api/
# (DIAGONAL_MATRIX1, RESAMPLE2, RESAMPLE3). Support levels are listed ascending; the pages list them descending.
# The pages separate data types with commas; here they are space-separated, in the page's order.

_F = "FLOAT32 FLOAT16"
_I8 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_ALL = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"

PAGES: dict[str, Page] = {
    "SPACE_TO_DEPTH": Page(
        page="ns-directml-dml_space_to_depth_operator_desc",
        introduced="1.0",
        function=(
            "out[n, (bh*B + bw)*C + c, h, w] = in[n, c, h*B + bh, w*B + bw] for B = BlockSize, C = input channels, "
            "0 <= bh, bw < B (depth-column-row order)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {Batch, Channels, Height, Width}.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of DEPTH_TO_SPACE. Output sizes (per the example and the operation's meaning): "
            "{N, C*B*B, H/B, W/B}. NOTE: the page's OutputTensor field text wrongly gives "
            "{Batch, Channels / (BlockSize*BlockSize), Height*BlockSize, Width*BlockSize} (copied from "
            "DEPTH_TO_SPACE); the worked example contradicts it. BlockSize is both block width and height. "
            "Equivalent to SPACE_TO_DEPTH1 with Order = DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW. "
            "Example: BlockSize=2, input UINT32 {1,2,4,6} = "
            "[[[[0,18,1,19,2,20],[36,54,37,55,38,56],[3,21,4,22,5,23],[39,57,40,58,41,59]],"
            "[[9,27,10,28,11,29],[45,63,46,64,47,65],[12,30,13,31,14,32],[48,66,49,67,50,68]]]] -> "
            "output UINT32 {1,8,2,3} = [[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],"
            "[[27,28,29],[30,31,32]],[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],"
            "[[63,64,65],[66,67,68]]]]."
        ),
    ),
    "SPACE_TO_DEPTH1": Page(
        page="ns-directml-dml_space_to_depth1_operator_desc",
        introduced="2.1",
        function=(
            "Order DEPTH_COLUMN_ROW: out[n, (bh*B + bw)*C + c, h, w] = in[n, c, h*B + bh, w*B + bw]; "
            "Order COLUMN_ROW_DEPTH: out[n, c*B*B + bh*B + bw, h, w] = in[n, c, h*B + bh, w*B + bw] "
            "(B = BlockSize, C = input channels)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {Batch, Channels, Height, Width}.",
        ),
        support={
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of DEPTH_TO_SPACE1. Output sizes {N, C*B*B, H/B, W/B} (per the examples; the page's "
            "OutputTensor text wrongly says {Batch, Channels/(B*B), Height*B, Width*B}). DML_DEPTH_SPACE_ORDER "
            "layouts (parenthesised dims are flattened, first = slowest): DEPTH_COLUMN_ROW: depth side "
            "[Batch, (BlockHeight, BlockWidth, Channels), H, W]; COLUMN_ROW_DEPTH: depth side "
            "[Batch, (Channels, BlockHeight, BlockWidth), H, W]; space side always "
            "[Batch, Channels, (Height, BlockHeight), (Width, BlockWidth)]. With DEPTH_COLUMN_ROW it equals "
            "SPACE_TO_DEPTH. Example 1 (DEPTH_COLUMN_ROW, B=2): same input/output as SPACE_TO_DEPTH's example. "
            "Example 2 (COLUMN_ROW_DEPTH, B=2): input UINT32 {1,2,4,6} = "
            "[[[[0,9,1,10,2,11],[18,27,19,28,20,29],[3,12,4,13,5,14],[21,30,22,31,23,32]],"
            "[[36,45,37,46,38,47],[54,63,55,64,56,65],[39,48,40,49,41,50],[57,66,58,67,59,68]]]] -> "
            "output UINT32 {1,8,2,3} = [[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],"
            "[[27,28,29],[30,31,32]],[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],"
            "[[63,64,65],[66,67,68]]]]."
        ),
    ),
    "DEPTH_TO_SPACE": Page(
        page="ns-directml-dml_depth_to_space_operator_desc",
        introduced="1.0",
        function=(
            "out[n, c, h*B + bh, w*B + bw] = in[n, (bh*B + bw)*Cout + c, h, w] for B = BlockSize, "
            "Cout = InputChannelCount / (B*B) (depth-column-row order)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {BatchCount, ChannelCount, Height, Width}.",
            "OutputChannelCount = InputChannelCount / (BlockSize*BlockSize); OutputHeight = InputHeight * "
            "BlockSize; OutputWidth = InputWidth * BlockSize.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of SPACE_TO_DEPTH; equivalent to DEPTH_TO_SPACE1 with Order = DEPTH_COLUMN_ROW. BlockSize "
            "is both block width and height. Example: BlockSize=2, input UINT32 {1,8,2,3} = "
            "[[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],[[27,28,29],[30,31,32]],"
            "[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],[[63,64,65],[66,67,68]]]] "
            "-> output UINT32 {1,2,4,6} = "
            "[[[[0,18,1,19,2,20],[36,54,37,55,38,56],[3,21,4,22,5,23],[39,57,40,58,41,59]],"
            "[[9,27,10,28,11,29],[45,63,46,64,47,65],[12,30,13,31,14,32],[48,66,49,67,50,68]]]]."
        ),
    ),
    "DEPTH_TO_SPACE1": Page(
        page="ns-directml-dml_depth_to_space1_operator_desc",
        introduced="2.1",
        function=(
            "Order DEPTH_COLUMN_ROW: out[n, c, h*B + bh, w*B + bw] = in[n, (bh*B + bw)*Cout + c, h, w]; "
            "Order COLUMN_ROW_DEPTH: out[n, c, h*B + bh, w*B + bw] = in[n, c*B*B + bh*B + bw, h, w] "
            "(B = BlockSize, Cout = InputChannelCount / (B*B))"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {BatchCount, ChannelCount, Height, Width}.",
            "OutputChannelCount = InputChannelCount / (BlockSize*BlockSize); OutputHeight = InputHeight * "
            "BlockSize; OutputWidth = InputWidth * BlockSize.",
        ),
        support={
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of SPACE_TO_DEPTH1; with Order = DEPTH_COLUMN_ROW it equals DEPTH_TO_SPACE. Order layouts "
            "as in DML_DEPTH_SPACE_ORDER (see SPACE_TO_DEPTH1 notes). Examples share the input UINT32 {1,8,2,3} = "
            "[[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],[[27,28,29],[30,31,32]],"
            "[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],[[63,64,65],[66,67,68]]]], "
            "B=2. Example 1 (DEPTH_COLUMN_ROW) -> {1,2,4,6} = "
            "[[[[0,18,1,19,2,20],[36,54,37,55,38,56],[3,21,4,22,5,23],[39,57,40,58,41,59]],"
            "[[9,27,10,28,11,29],[45,63,46,64,47,65],[12,30,13,31,14,32],[48,66,49,67,50,68]]]]. "
            "Example 2 (COLUMN_ROW_DEPTH) -> {1,2,4,6} = "
            "[[[[0,9,1,10,2,11],[18,27,19,28,20,29],[3,12,4,13,5,14],[21,30,22,31,23,32]],"
            "[[36,45,37,46,38,47],[54,63,55,64,56,65],[39,48,40,49,41,50],[57,66,58,67,59,68]]]]."
        ),
    ),
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
    "REVERSE_SUBSEQUENCES": Page(
        page="ns-directml-dml_reverse_subsequences_desc",
        introduced="2.1",
        function=(
            "out[..., i (along Axis), ...] = in[..., L-1-i, ...] if i < L else in[..., i, ...], "
            "L = min(SequenceLengths[..., 0, ...], AxisSize)"
        ),
        constraints=(
            "InputTensor, OutputTensor and SequenceLengthsTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType (and same Sizes).",
            "SequenceLengthsTensor sizes equal InputTensor's except along Axis, where its size must be 1.",
            "Axis < InputTensor.DimensionCount.",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", _I8),
                "SequenceLengthsTensor": ("4", "UINT32"),
                "OutputTensor": ("4", _I8),
            },
            "3.0": {
                "InputTensor": ("4-5", _I8),
                "SequenceLengthsTensor": ("4-5", "UINT32"),
                "OutputTensor": ("4-5", _I8),
            },
            "4.0": {
                "InputTensor": ("1-8", _I8),
                "SequenceLengthsTensor": ("1-8", "UINT32"),
                "OutputTensor": ("1-8", _I8),
            },
            "5.0": {
                "InputTensor": ("1-8", _ALL),
                "SequenceLengthsTensor": ("1-8", "UINT64 UINT32"),
                "OutputTensor": ("1-8", _ALL),
            },
        },
        notes=(
            "Page slug is ns-directml-dml_reverse_subsequences_desc (no '_operator'). Only the first L elements "
            "of each sequence are reversed; the rest are copied unchanged; a length above the Axis size acts as "
            "if clamped to it; lengths 0 and 1 are no-ops. Axis indexes all dimensions (0 = outermost). "
            "Examples (input FLOAT32 {1,1,3,4} = [[1,2,3,4],[5,6,7,8],[9,10,11,12]], lengths UINT32): "
            "(1) lengths {1,1,3,1} = [2,4,3], Axis=3 -> [[2,1,3,4],[8,7,6,5],[11,10,9,12]]; "
            "(2) lengths {1,1,1,4} = [2,3,1,0], Axis=2 -> [[5,10,3,4],[1,6,7,8],[9,2,11,12]]."
        ),
    ),
    "VALUE_SCALE_2D": Page(
        page="ns-directml-dml_value_scale_2d_operator_desc",
        introduced="1.0",
        function="f(x)[n, c, h, w] = Scale * x[n, c, h, w] + Bias[c]",
        constraints=(
            "InputTensor and OutputTensor: same DataType and Sizes.",
            "ChannelCount must be 1 or 3 and must equal the input's channel dimension (Sizes[1]); Bias has "
            "ChannelCount entries.",
            "Tensors are 4D {BatchCount, ChannelCount, Height, Width}.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
        },
        notes=(
            "Single table without a feature-level heading (keyed by the introducing level). Like "
            "ELEMENT_WISE_IDENTITY with scale/bias, but the bias is per channel rather than one scalar; Scale "
            "is one FLOAT applied to all values (the page words Bias as 'for each dimension', meaning each "
            "channel). No examples on the page."
        ),
    ),
    "UPSAMPLE_2D": Page(
        page="ns-directml-dml_upsample_2d_operator_desc",
        introduced="1.0",
        function=(
            "out[n, c, (d,) y, x] = NEAREST_NEIGHBOR: input element nearest to the corresponding pixel center; "
            "LINEAR: bilinear weighted average of the 2x2 nearest input elements in H and W only"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "Output sizes: 4D {N, C, H*ScaleSize.Height, W*ScaleSize.Width}; 5D {N, C, D, H*ScaleSize.Height, "
            "W*ScaleSize.Width}.",
            "0 < ScaleSize.Height <= UINT_MAX / InputHeight and 0 < ScaleSize.Width <= UINT_MAX / InputWidth "
            "(integer scales).",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", _F), "OutputTensor": ("4-5", _F)},
        },
        notes=(
            "Single table without a feature-level heading (keyed by the introducing level). Layout NCHW or "
            "NCDHW (strides may express other layouts). Only the last two dims (H, W) are upsampled; with 5D "
            "the depth is never interpolated, and linear mode never averages across batch, channel or depth. "
            "RESAMPLE is the preferred, more flexible operator. The OutputTensor field text says 'containing "
            "the input data' (page typo). No examples."
        ),
    ),
    "RESAMPLE": Page(
        page="ns-directml-dml_resample_operator_desc",
        introduced="2.0",
        function=(
            "per dimension d: inX = (outX + 0.5) / Scales[d] - 0.5 (pixel centers, i.e. RESAMPLE1 with "
            "InputPixelOffsets=0.5, OutputPixelOffsets=-0.5); NEAREST_NEIGHBOR picks the input element nearest "
            "to inX; LINEAR averages the 2 nearest neighbours per dimension (up to 4 dims, 16 taps)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "ScaleCount must equal the DimensionCount of InputTensor and OutputTensor (one scale per dimension).",
        ),
        support={
            "2.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "5.1": {"InputTensor": ("1-4", _F), "OutputTensor": ("1-4", _F)},
            "6.2": {
                "InputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
            },
        },
        notes=(
            "Scales index ALL dimensions (not only spatial): interpolation may run across channels or batches. "
            "Scale > 1 upsamples, < 1 downsamples. Scales need not equal OutputSize/InputSize: if the scaled "
            "input is larger than the output it is cropped; if smaller, output edges are clamped (edge "
            "replication). The inX formula is derived from RESAMPLE1's stated equivalence; RESAMPLE's own page "
            "only says 'nearest to the corresponding pixel center'. No examples."
        ),
    ),
    "RESAMPLE1": Page(
        page="ns-directml-dml_resample1_operator_desc",
        introduced="2.1",
        function=(
            "per dimension d: outX = (inX + InputPixelOffsets[d]) * Scales[d] + OutputPixelOffsets[d], i.e. "
            "inX = (outX - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d]; NEAREST_NEIGHBOR picks "
            "the nearest input element; LINEAR averages the 2 nearest neighbours per dimension (up to 4 dims)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (length of Scales, InputPixelOffsets, OutputPixelOffsets) must equal the tensors' "
            "DimensionCount.",
        ),
        support={
            "2.1": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "5.1": {"InputTensor": ("1-4", _F), "OutputTensor": ("1-4", _F)},
            "6.2": {
                "InputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
            },
        },
        notes=(
            "Arrays index all dimensions. Offsets of 0 use the top-left corner of a pixel instead of its center; "
            "InputPixelOffsets=0.5 and OutputPixelOffsets=-0.5 reproduce RESAMPLE exactly. Scales need not be "
            "OutputSize/InputSize: oversize results are cropped, undersize results clamp at the output edges. "
            "Linear interpolation is supported up to 4 dimensions (quadrilinear, 16 taps). No examples."
        ),
    ),
    "RESAMPLE2": Page(
        page="ns-directml-dml_resample2_operator_desc",
        introduced="5.1",
        function=(
            "as RESAMPLE1: inX = (outX - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d]; "
            "NEAREST_NEIGHBOR rounds inX by RoundingDirection (INCREASING = ceil, DECREASING = floor); LINEAR "
            "averages the 2 nearest neighbours per dimension (up to 4 dims) and ignores RoundingDirection"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (length of Scales, InputPixelOffsets, OutputPixelOffsets) must equal the tensors' "
            "DimensionCount.",
        ),
        support={
            "5.1": {"InputTensor": ("1-4", _F), "OutputTensor": ("1-4", _F)},
            "6.2": {
                "InputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
            },
        },
        notes=(
            "Page from MicrosoftDocs/windows-ai-docs. Equivalent to RESAMPLE1 when InterpolationMode is LINEAR, "
            "or when NEAREST_NEIGHBOR with RoundingDirection = DECREASING and OutputPixelOffsets shifted by an "
            "extra -0.5. Arrays index all dimensions; offsets 0.5 (input) / -0.5 (output) give pixel-center "
            "sampling like RESAMPLE. Oversize scaled input is cropped; undersize clamps at the output edges. "
            "No examples."
        ),
    ),
    "RESAMPLE3": Page(
        page="ns-directml-dml_resample3_operator_desc",
        introduced="6.4",
        function=(
            "as RESAMPLE2 (inX = (outX - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d], "
            "RoundingDirection for nearest); with Antialiased and LINEAR and 1/Scale > 2, the linear filter is "
            "stretched by max(1, 1/Scale) so more input pixels contribute"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (length of Scales, InputPixelOffsets, OutputPixelOffsets) must equal the tensors' "
            "DimensionCount.",
        ),
        support={
            "6.4": {
                "InputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("1-4", "FLOAT32 FLOAT16 INT8 UINT8"),
            },
        },
        notes=(
            "Page from MicrosoftDocs/windows-ai-docs; single table without a feature-level heading. With "
            "Antialiased = FALSE it equals RESAMPLE2. Antialiasing applies only when downscaling with LINEAR "
            "mode and 1/Scales > 2 (the page's condition; the filter stretch factor is max(1, 1/scale)). "
            "No examples."
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
