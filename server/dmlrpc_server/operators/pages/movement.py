"""The pages of SLICE(1), PADDING(1), TILE and REVERSE_SUBSEQUENCES."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (newest stored versions),
# and MicrosoftDocs/windows-ai-docs docs/directml/api/ for AVERAGE_POOLING1 and LP_POOLING1 (6.2), which are
# not in sdk-api. Feature-level remarks cite windows-ai-docs docs/directml/dml-feature-level-history.md.
# support levels are listed ascending; the pages list them descending.

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (REVERSE_SUBSEQUENCES lives at
# ns-directml-dml_reverse_subsequences_desc.md) and MicrosoftDocs/windows-ai-docs docs/directml/api/
# (DIAGONAL_MATRIX1, RESAMPLE2, RESAMPLE3). Support levels are listed ascending; the pages list them descending.
# The pages separate data types with commas; here they are space-separated, in the page's order.

_I8 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"

_ALL = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"

PAGES: dict[str, Page] = {
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
}
