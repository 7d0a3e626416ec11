"""The pages of VALUE_SCALE_2D, UPSAMPLE_2D and RESAMPLE(1/2/3)."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (REVERSE_SUBSEQUENCES lives at
# ns-directml-dml_reverse_subsequences_desc.md) and MicrosoftDocs/windows-ai-docs docs/directml/api/
# (DIAGONAL_MATRIX1, RESAMPLE2, RESAMPLE3). Support levels are listed ascending; the pages list them descending.
# The pages separate data types with commas; here they are space-separated, in the page's order.

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
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
}
