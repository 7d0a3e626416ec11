"""DirectML pooling, slicing, split/join, padding and tile operator pages (structural part 2) as data."""

from __future__ import annotations

from dmlrpc_server.operators.pages import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (newest stored versions),
# and MicrosoftDocs/windows-ai-docs docs/directml/api/ for AVERAGE_POOLING1 and LP_POOLING1 (6.2), which are
# not in sdk-api. Feature-level remarks cite windows-ai-docs docs/directml/dml-feature-level-history.md.
# support levels are listed ascending; the pages list them descending.

_POOL_OUT = (
    "Output size (page): Out.Sizes[0] = In.Sizes[0]; Out.Sizes[1] = In.Sizes[1]; for i in [0, DimensionCount): "
    "Out.Sizes[i+2] = (In.Sizes[i+2] + StartPadding[i] + EndPadding[i] - WindowSize[i]) / Strides[i] + 1 "
    "(unsigned integer division, i.e. floor). DimensionCount is the number of SPATIAL dimensions: 2 for a 4D "
    "InputTensor {N, C, H, W}, 3 for a 5D one {N, C, D, H, W}. Strides, WindowSize, StartPadding and EndPadding "
    "(and Dilations where present) have DimensionCount entries indexed over the spatial dims only, ordered "
    "{H, W} or {D, H, W}; batch and channel are never pooled."
)

PAGES: dict[str, Page] = {
    "AVERAGE_POOLING": Page(
        page="ns-directml-dml_average_pooling_operator_desc",
        introduced="1.0",
        function=(
            "y[n, c, o] = sum(x[n, c, o*Strides - StartPadding + k] for k in window WindowSize) / count, where "
            "out-of-bounds (padding) elements contribute 0 and count = prod(WindowSize) if IncludePadding else "
            "the number of in-bounds (non-padding) elements in the window"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " IncludePadding=FALSE: padding elements are excluded from the averaging divisor; "
            "IncludePadding=TRUE: they count in the divisor "
            "(presumably as zeros; the value of padding elements is not stated). The page has a single support "
            "table (no "
            "per-level split), no examples and no in-place statement. Superseded by AVERAGE_POOLING1 (6.2), which "
            "adds Dilations."
        ),
    ),
    "AVERAGE_POOLING1": Page(
        page="ns-directml-dml_average_pooling1_operator_desc",
        introduced="6.2",
        function=(
            "like AVERAGE_POOLING but window element k of spatial dim i is read at "
            "o*Strides[i] - StartPadding[i] + k*Dilations[i]; y = sum(window) / count, count = prod(WindowSize) "
            "if IncludePadding else number of non-padding elements in the window"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "6.2": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " CAUTION: the page's output-size formula does not mention Dilations; with dilation the "
            "window extent is presumably (WindowSize[i] - 1) * Dilations[i] + 1 (not stated on the page). The "
            "page's DimensionCount text also names only Strides/StartPadding/EndPadding, but Dilations is "
            "_Field_size_(DimensionCount) too. With Dilations all 1 ({1,1} for 4D, {1,1,1} for 5D) it equals "
            "AVERAGE_POOLING. Page lives only in MicrosoftDocs/windows-ai-docs (DirectML 1.13+ redistributable). "
            "No examples on the page."
        ),
    ),
    "MAX_POOLING": Page(
        page="ns-directml-dml_max_pooling_operator_desc",
        introduced="1.0",
        function="y[n, c, o] = max(x[n, c, o*Strides - StartPadding + k] for k in window WindowSize)",
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
            },
            "5.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            _POOL_OUT + " The page does not say which value padding elements take; for a max they must not win "
            "(treat as -inf / ignored). Integer types from 3.0 (INT8, UINT8) and 5.0 (all 8-64-bit ints); never "
            "FLOAT64. Newer versions: MAX_POOLING1 (2.0, optional indices), MAX_POOLING2 (2.1, dilations). No "
            "examples on the page."
        ),
    ),
    "MAX_POOLING1": Page(
        page="ns-directml-dml_max_pooling1_operator_desc",
        introduced="2.0",
        function=(
            "y = max over the window as in MAX_POOLING; optional indices[n, c, o] = flat (row-major, contiguous) "
            "index into InputTensor of the first element attaining the max"
        ),
        constraints=(
            "InputTensor, OutputIndicesTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            "OutputIndicesTensor, when given, has the same Sizes as OutputTensor.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "2.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "3.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "5.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT64 UINT32"),
            },
        },
        notes=(
            _POOL_OUT + " OutputIndicesTensor is optional (_Maybenull_); with it NULL the op equals MAX_POOLING. "
            "Indices are zero-based and treat InputTensor as one contiguous 1D array (so they include the "
            "batch/channel offset, not just the position inside the window). Ties: the first equal value "
            "encountered wins, later equal values are ignored. UINT64 indices only from 5.0. Example from an "
            "older (2020) revision of this page: input [[3,5,7,1],[9,4,2,8]] (implicit flat indices 0..7), "
            "window covering 3 elements along a row, stride 1 -> values [[7,7],[9,8]], indices [[2,2],[4,7]]."
        ),
    ),
    "MAX_POOLING2": Page(
        page="ns-directml-dml_max_pooling2_operator_desc",
        introduced="2.1",
        function=(
            "y[n, c, o] = max(x[n, c, o*Strides - StartPadding + k*Dilations] for k in window WindowSize); "
            "optional indices = flat contiguous index into InputTensor of the first max"
        ),
        constraints=(
            "InputTensor, OutputIndicesTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            "OutputIndicesTensor, when given, has the same Sizes as OutputTensor.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "2.1": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "3.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "5.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT64 UINT32"),
            },
        },
        notes=(
            _POOL_OUT + " CAUTION: the page's output-size formula does not mention Dilations; the dilated window "
            "extent is presumably (WindowSize[i] - 1) * Dilations[i] + 1 (not stated). Dilations has "
            "DimensionCount entries ({H, W} or {D, H, W}); with all ones it equals MAX_POOLING1. Indices: "
            "zero-based, InputTensor treated as contiguous 1D array, ties resolve to the first value encountered. "
            "OutputIndicesTensor optional. No examples on the page."
        ),
    ),
    "LP_POOLING": Page(
        page="ns-directml-dml_lp_pooling_operator_desc",
        introduced="1.0",
        function="y = (x1^P + x2^P + ... + xn^P)^(1/P) over the n elements x1..xn of each sliding window",
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " P is a UINT; commonly 1 (L1) or 2 (L2). The page writes x^P without absolute values "
            "(standard Lp pooling uses |x|^P; for odd P and negative inputs the page is ambiguous). Padding "
            "elements presumably contribute 0 (not stated). Single support table. No examples on the page."
        ),
    ),
    "LP_POOLING1": Page(
        page="ns-directml-dml_lp_pooling1_operator_desc",
        introduced="6.2",
        function=(
            "y = (x1^P + ... + xn^P)^(1/P) over each dilated sliding window (element k of spatial dim i at "
            "o*Strides[i] - StartPadding[i] + k*Dilations[i])"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "6.2": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " CAUTION: the page's output-size formula ignores Dilations; dilated window extent is "
            "presumably (WindowSize[i] - 1) * Dilations[i] + 1 (not stated). With Dilations all 1 it equals "
            "LP_POOLING. P: UINT, usually 1 or 2. Page lives only in MicrosoftDocs/windows-ai-docs (DirectML "
            "1.13+). No examples on the page."
        ),
    ),
    "MAX_UNPOOLING": Page(
        page="ns-directml-dml_max_unpooling_operator_desc",
        introduced="3.0",
        function=(
            "Output = zeros(OutputTensor.Sizes); for each element i of InputTensor: "
            "Output.flat[IndicesTensor[i]] = InputTensor[i]"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "InputTensor and IndicesTensor: same Sizes.",
            "OutputTensor has the same number of dimensions as InputTensor (4D only).",
        ),
        support={
            "3.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "IndicesTensor": ("4", "UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "5.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "IndicesTensor": ("4", "UINT64 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Inverse of max pooling with indices (MAX_POOLING1/2): InputTensor holds pooled values, IndicesTensor "
            "the OutputIndicesTensor of that pooling. Indices are zero-based into OutputTensor treated as one "
            "contiguous 1D array (including batch/channel offsets). Output elements not targeted by any index "
            "are 0. Output Sizes are not derived from attributes (no window/stride fields): the caller gives "
            "them, typically the original pooling input's Sizes. Behavior for duplicate or out-of-range indices "
            "is not documented. Input is {Batch, Channel, Height, Width}. No examples on the page."
        ),
    ),
    "ROI_POOLING": Page(
        page="ns-directml-dml_roi_pooling_operator_desc",
        introduced="1.0",
        function=(
            "y[r, c, ph, pw] = max(x[BatchID_r, c, h, w] for h in [StartY, EndY), w in [StartX, EndX)) with "
            "x1 = round(RoiX1*SpatialScale), x2 = round(RoiX2*SpatialScale), y1/y2 likewise; RegionHeight = "
            "y2 - y1 + 1, RegionWidth = x2 - x1 + 1; StartY = (ph*RegionHeight) / PooledSize.Height + y1; "
            "StartX = (pw*RegionWidth) / PooledSize.Width + x1; EndY = ((ph+1)*RegionHeight + PooledSize.Height "
            "- 1) / PooledSize.Height + y1; EndX = ((pw+1)*RegionWidth + PooledSize.Width - 1) / PooledSize.Width "
            "+ x1; coordinates clamped to the input bounds"
        ),
        constraints=(
            "InputTensor, OutputTensor and ROITensor: same DataType.",
            "ROITensor Sizes are {1, 1, NumROIs, 5}; each ROI row is [BatchID, x1, y1, x2, y2] with x2 >= x1 "
            "and y2 >= y1 (inclusive corner coordinates).",
            "OutputTensor Sizes are {NumROIs, InputChannelCount, PooledSize.Height, PooledSize.Width}.",
            "PooledSize (height, width) must equal the last 2 dims of OutputTensor.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "ROITensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "InputTensor is {BatchCount, ChannelCount, InputHeight, InputWidth}; Y indexes dim 2 (height), X dim "
            "3 (width). Note the ROI column order is [BatchID, x1, y1, x2, y2] (x before y). BatchID is stored "
            "in the float ROI tensor. The bin formulas use integer (floor) division: Start is floor, End is a "
            "ceil, so End is presumably "
            "exclusive (Caffe-style ROI max pooling; the page does not say). The rounding mode of round() is not "
            "specified. Out-of-bounds coordinates are clamped to the input; the value for an empty bin is not "
            "documented. SpatialScale (FLOAT) maps ROI coordinates into input-feature scale. Single support "
            "table. No examples on the page."
        ),
    ),
    "SLICE": Page(
        page="ns-directml-dml_slice_operator_desc",
        introduced="1.0",
        function="Output[o] = Input[Offsets + Strides * o] (per dimension), o ranging over OutputTensor.Sizes",
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount must equal the tensors' DimensionCount: 1..8 from 3.0, 4 or 5 before.",
            "Sizes must exactly equal OutputTensor.Sizes.",
            "Every element read must be in bounds: Offsets[i] + Strides[i] * (Sizes[i] - 1) < "
            "InputTensor.Sizes[i] (no out-of-bounds reads).",
        ),
        support={
            "1.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
            },
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
            "Offsets, Sizes and Strides have DimensionCount entries, one per dimension of the tensors (all "
            "dimensions, not just spatial), in elements. Strides are UINT (>= 1 implied; a stride of 2 takes "
            "every second element); no negative strides (see SLICE1). Pure data movement: any listed type. "
            "Examples, input (1,1,4,4) FLOAT32 [[1,2,3,4],[5,6,7,8],[9,10,11,12],[13,14,15,16]]: "
            "Ex1 Offsets {0,0,1,2}, Sizes {1,1,3,2}, Strides {1,1,1,1} -> (1,1,3,2) [[7,8],[11,12],[15,16]]; "
            "Ex2 Offsets {0,0,1,0}, Sizes {1,1,2,2}, Strides {1,1,2,3} -> (1,1,2,2) [[5,8],[13,16]]. Newer "
            "version SLICE1 from 2.1."
        ),
    ),
    "SLICE1": Page(
        page="ns-directml-dml_slice1_operator_desc",
        introduced="2.1",
        function=(
            "CopyStart = InputWindowOffsets; CopyStart[i] += InputWindowSizes[i] - 1 where InputWindowStrides[i] "
            "< 0; Output[o] = Input[CopyStart + InputWindowStrides * o]"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount must equal the tensors' DimensionCount: 1..8 from 3.0, 4 or 5 before.",
            "InputWindowOffsets[i] + InputWindowSizes[i] <= InputTensor.Sizes[i] (window inside the input).",
            "The window must not be empty in any dimension (InputWindowSizes[i] >= 1).",
            "InputWindowStrides[i] != 0 (may be negative).",
            "1 <= OutputTensor.Sizes[i] <= MaxCopiedElements[i] = 1 + (InputWindowSizes[i] - 1) / "
            "|InputWindowStrides[i]|.",
        ),
        support={
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
            "Arrays have one entry per tensor dimension (all dims). Positive stride: copy from the window start "
            "forward; negative stride: copy from the window end (offset + size - 1) backward, which reverses the "
            "dimension. Output sizes need not cover the whole window (any size from 1 to MaxCopiedElements). The "
            "page's field type shows InputWindowStrides as 'const UINT*' but the semantics require signed values "
            "(INT in directml.h). The page's MaxCopiedElements formula divides by the stride; use its magnitude. "
            "Differences from SLICE: negative strides allowed; window sizes need not equal output sizes. "
            "Examples, input (1,1,4,4) FLOAT32 [[1,2,3,4],[5,6,7,8],[9,10,11,12],[13,14,15,16]]: "
            "Ex1 InputWindowOffsets {0,0,0,1}, InputWindowSizes {1,1,4,3}, InputWindowStrides {1,1,2,2} -> "
            "(1,1,2,2) [[2,4],[10,12]]; Ex2 same offsets/sizes, InputWindowStrides {1,1,-2,2} -> (1,1,2,2) "
            "[[14,16],[6,8]] (axis 2 starts at 0 + 4 - 1 = 3)."
        ),
    ),
    "SPLIT": Page(
        page="ns-directml-dml_split_operator_desc",
        introduced="1.0",
        function=(
            "OutputTensors[j] = InputTensor[..., sum(OutputTensors[:j].Sizes[Axis]) : "
            "sum(OutputTensors[:j+1].Sizes[Axis]), ...] (consecutive pieces along Axis)"
        ),
        constraints=(
            "InputTensor and OutputTensors: same DataType and DimensionCount.",
            "OutputCount > 0 (size of the OutputTensors array).",
            "Axis in [0, InputTensor.DimensionCount - 1].",
            "Every output has the input's Sizes except along Axis.",
            "The outputs' Axis sizes sum exactly to InputTensor.Sizes[Axis].",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
                "OutputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
            },
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensors": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensor": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
                "OutputTensors": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
            },
        },
        notes=(
            "Inverse of JOIN. Axis is a plain dimension index (0 = outermost), unsigned, no negative axes. "
            "OutputTensors is an array of outputs (table kind 'Array of outputs'). A single output is a plain "
            "copy. E.g. an axis of size 3 splits as 1+1+1, 1+2, 2+1 or 3. Examples, input (1,1,6,2) FLOAT32 "
            "[[1,2],[3,4],[5,6],[7,8],[9,10],[11,12]]: Ex1 OutputCount 3, Axis 2 -> (1,1,2,2) [[1,2],[3,4]], "
            "(1,1,1,2) [[5,6]], (1,1,3,2) [[7,8],[9,10],[11,12]]; Ex2 OutputCount 2, Axis 3 -> (1,1,6,1) "
            "[1,3,5,7,9,11] and (1,1,6,1) [2,4,6,8,10,12]."
        ),
    ),
    "JOIN": Page(
        page="ns-directml-dml_join_operator_desc",
        introduced="1.0",
        function="OutputTensor = concatenate(InputTensors[0..InputCount-1], axis=Axis)",
        constraints=(
            "InputTensors and OutputTensor: same DataType and DimensionCount.",
            "InputCount > 0 (size of the InputTensors array).",
            "Axis in [0, OutputTensor.DimensionCount - 1].",
            "All inputs match the output's Sizes except along Axis, where each input size is non-zero.",
            "OutputTensor.Sizes[Axis] = sum of the inputs' Sizes[Axis].",
        ),
        support={
            "1.0": {
                "InputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
            },
            "2.1": {
                "InputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensors": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensors": (
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
            "Inverse of SPLIT. Axis: plain unsigned dimension index, no negative axes. A single input is a plain "
            "copy. Discrepancy: the page's 3.0 table lists 4-5 dims and 1-8 only from 4.1, while the feature-level "
            "history says JOIN's max dimension count rose from 4 to 8 in 3.1. Examples: Ex1 InputCount 2, Axis 3, "
            "(1,1,2,3) [[1,2,3],[4,5,6]] + (1,1,2,4) [[7,8,9,10],[11,12,13,14]] -> (1,1,2,7) "
            "[[1,2,3,7,8,9,10],[4,5,6,11,12,13,14]] (only axis 3 possible). Ex2 InputCount 3, inputs (1,1,2,2) "
            "A=[[1,2],[3,4]], B=[[5,6],[7,8]], C=[[9,10],[11,12]]: Axis 1 -> (1,3,2,2) [A, B, C]; Axis 2 -> "
            "(1,1,6,2) [[1,2],[3,4],[5,6],[7,8],[9,10],[11,12]]; Axis 3 -> (1,1,2,6) "
            "[[1,2,5,6,9,10],[3,4,7,8,11,12]]."
        ),
    ),
    "PADDING": Page(
        page="ns-directml-dml_padding_operator_desc",
        introduced="1.0",
        function=(
            "Output[i] = Input[i - StartPadding] inside the input region; padding regions by PaddingMode: "
            "CONSTANT -> PaddingValue, EDGE -> nearest edge value, REFLECTION -> mirror excluding the edge "
            "(numpy 'reflect'), SYMMETRIC -> mirror including the edge (numpy 'symmetric')"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount equals the DimensionCount of InputTensor and OutputTensor.",
            "OutputTensor.Sizes[i] = InputTensor.Sizes[i] + StartPadding[i] + EndPadding[i] for every i.",
            "DML_PADDING_MODE_SYMMETRIC requires feature level 3.0.",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "2.1": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "5.0": {
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
            "StartPadding/EndPadding have one entry per tensor dimension (all dims, UINT, no negative padding). "
            "PaddingValue is a FLOAT used only in CONSTANT mode; for non-float tensor types it may be truncated "
            "(10.6 -> 10). REFLECTION allows StartPadding/EndPadding >= the input size (periodic re-folding over "
            "earlier padding); SYMMETRIC likewise allows > the input size. Not on the page: the feature-level "
            "history says 6.4 adds DML_PADDING_MODE_WRAP for PADDING and PADDING1. Examples (all: input (1,1,4,4) "
            "FLOAT32 [[1,2,3,4],[5,6,7,8],[1,2,3,4],[5,6,7,8]], StartPadding {0,0,1,2}, EndPadding {0,0,3,4}, "
            "output (1,1,8,10)): Ex1 CONSTANT, PaddingValue 9 -> row 0 and rows 5-7 all 9, rows 1-4 = "
            "[9,9,<input row>,9,9,9,9]; Ex2 EDGE -> rows [1,1,1,2,3,4,4,4,4,4] x2, [5,5,5,6,7,8,8,8,8,8], "
            "[1,1,1,2,3,4,4,4,4,4], [5,5,5,6,7,8,8,8,8,8] x4; Ex3 REFLECTION -> rows alternate "
            "[7,6,5,6,7,8,7,6,5,6] (rows 0,2,4,6) and [3,2,1,2,3,4,3,2,1,2] (rows 1,3,5,7); Ex4 SYMMETRIC (3.0+) "
            "-> rows A,A,B,A,B,B,A,B with A=[2,1,1,2,3,4,4,3,2,1], B=[6,5,5,6,7,8,8,7,6,5]. All four match "
            "numpy.pad with modes constant/edge/reflect/symmetric."
        ),
    ),
    "PADDING1": Page(
        page="ns-directml-dml_padding1_operator_desc",
        introduced="5.0",
        function=(
            "as PADDING: Output[i] = Input[i - StartPadding] inside; padding by PaddingMode: CONSTANT -> "
            "PaddingValue (typed by PaddingValueDataType), EDGE -> edge value, REFLECTION -> numpy 'reflect', "
            "SYMMETRIC -> numpy 'symmetric'"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount equals the DimensionCount of InputTensor and OutputTensor.",
            "OutputTensor.Sizes[i] = InputTensor.Sizes[i] + StartPadding[i] + EndPadding[i] for every i.",
            "PaddingValueDataType must equal OutputTensor.DataType.",
        ),
        support={
            "5.0": {
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
            "Same as PADDING except PaddingValue is a DML_SCALAR_UNION interpreted per PaddingValueDataType (so "
            "64-bit integers and exact integer pad values are representable; no float truncation). PaddingValue "
            "is ignored outside CONSTANT mode. StartPadding/EndPadding: one UINT per tensor dimension. The page "
            "still says SYMMETRIC arrived in 3.0 (moot: the op itself is 5.0). Not on the page: 6.4 adds "
            "DML_PADDING_MODE_WRAP (feature-level history). Single support table. Examples identical to PADDING "
            "(PaddingValueDataType FLOAT32; input (1,1,4,4) [[1,2,3,4],[5,6,7,8],[1,2,3,4],[5,6,7,8]], "
            "StartPadding {0,0,1,2}, EndPadding {0,0,3,4} -> (1,1,8,10)): CONSTANT 9, EDGE, REFLECTION, SYMMETRIC "
            "give numpy.pad's constant(9)/edge/reflect/symmetric results."
        ),
    ),
    "TILE": Page(
        page="ns-directml-dml_tile_operator_desc",
        introduced="1.0",
        function="Output[o] = Input[o mod InputTensor.Sizes] (per dimension); i.e. numpy.tile(Input, Repeats)",
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "OutputTensor has the same DimensionCount as InputTensor.",
            "RepeatsCount equals InputTensor.DimensionCount.",
            "Repeats[i] > 0.",
            "OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i].",
        ),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Repeats has one entry per input dimension, in order (all dims). Unlike SLICE/SPLIT/JOIN, no FLOAT64 "
            "even at 4.1. Example: RepeatsCount 4, Repeats {1,1,3,3}, input (1,1,2,3) [[1,2,3],[4,5,6]] -> "
            "output (1,1,6,9): rows [1,2,3,1,2,3,1,2,3] and [4,5,6,4,5,6,4,5,6] alternating, 6 rows (the page "
            "mislabels the output as 'InputTensor')."
        ),
    ),
}
