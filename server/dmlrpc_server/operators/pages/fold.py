"""The pages of FOLD and UNFOLD."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md, and MicrosoftDocs/windows-ai-docs
# docs/directml/api/ for the pages that live only there (FOLD, UNFOLD, ROI_ALIGN_GRAD, MULTIHEAD_ATTENTION,
# MULTIHEAD_ATTENTION1). Support levels are listed ascending; the pages list them descending.

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "FOLD": Page(
        page="ns-directml-dml_fold_operator_desc",
        introduced="6.4",
        function=(
            "out[n, c, p] = sum of in[n, c*prod(WindowSizes) + k, b] over every window offset k and block b whose "
            "element lands on spatial position p, i.e. p[d] = b[d]*Strides[d] - StartPadding[d] + "
            "k[d]*Dilations[d] (col2im: summing the overlapping values of sliding blocks)"
        ),
        constraints=(
            "BlocksPerDimension[d] = (OutputSize[d] + StartPadding[d] + EndPadding[d] - Dilations[d] * "
            "(WindowSizes[d] - 1) - 1) / Strides[d] + 1; BlockCount = prod(BlocksPerDimension).",
            "InputTensor: {N, C*prod(WindowSizes), BlockCount}; OutputTensor: {N, C, OutputSize...}.",
            "DimensionCount (the spatial dimensions) must be <= 6.",
            "InputTensor and OutputTensor must have the same DimensionCount (see notes).",
        ),
        support={
            "6.4": {"InputTensor": ("3-8", _F), "OutputTensor": ("3-8", _F)},
        },
        notes=(
            "Page lives only in MicrosoftDocs/windows-ai-docs (DirectML 1.15.1+ redistributable). Its tensor-support "
            "table leaves the data types blank; FLOAT32 and FLOAT16 are the types ONNX Runtime's DirectML "
            "provider folds through this operator (Col2Im), so those are the ones taken here. The 'same "
            "DimensionCount' constraint contradicts the page's own examples (a 3-D input folds into a 4-D "
            "output): the input is 3-D and the output has 2 + DimensionCount dimensions. Window offsets are "
            "row-major over the spatial dimensions and channel-major in the input's dimension 1 (as in the "
            "examples and UNFOLD). Example 1: input FLOAT32 {1,9,4} = 0..35 (row-major), WindowSizes {3,3}, "
            "Strides {1,1}, Dilations {1,1}, no padding -> {1,1,4,4} = [[0,5,13,9],[14,38,54,32],[38,86,102,56],"
            "[26,57,65,35]]. Example 2: input {1,9,8} = 0..71, StartPadding {1,0}, EndPadding {1,0} -> {1,1,4,4} = "
            "[[26,70,102,60],[78,183,231,129],[84,195,243,135],[82,182,214,116]]. Example 3: input {1,18,8} = "
            "0..143, same attributes -> {1,2,4,4}: channel 0 as example 2, channel 1 = [[170,358,390,204],"
            "[294,615,663,345],[300,627,675,351],[226,470,502,260]]."
        ),
    ),
    "UNFOLD": Page(
        page="ns-directml-dml_unfold_operator_desc",
        introduced="6.4",
        function=(
            "out[n, c*prod(WindowSizes) + k, b] = in[n, c, b[d]*Strides[d] - StartPadding[d] + k[d]*Dilations[d] "
            "for each d], 0 where that position lies in the padding (im2col)"
        ),
        constraints=(
            "BlocksPerDimension[d] = (SpatialSize[d] + StartPadding[d] + EndPadding[d] - Dilations[d] * "
            "(WindowSizes[d] - 1) - 1) / Strides[d] + 1; BlockCount = prod(BlocksPerDimension).",
            "InputTensor: {N, C, SpatialSize...}; OutputTensor: {N, C*prod(WindowSizes), BlockCount}.",
            "DimensionCount must be in [1, 6].",
            "InputTensor and OutputTensor must have the same DimensionCount (see notes).",
        ),
        support={
            "6.4": {"InputTensor": ("3-8", _F), "OutputTensor": ("3-8", _F)},
        },
        notes=(
            "Page lives only in MicrosoftDocs/windows-ai-docs (DirectML 1.15.1+ redistributable). Its tensor-support "
            "table leaves the data types blank; FLOAT32 and FLOAT16 are taken, as for FOLD. The 'same "
            "DimensionCount' constraint contradicts the page's examples (a 4-D input unfolds into a 3-D output): "
            "the output is 3-D and the input has 2 + DimensionCount dimensions. Blocks are numbered row-major "
            "over the spatial dimensions (the last dimension of the output). Example 1: input FLOAT32 {1,1,5,5} "
            "= 0..24, WindowSizes {3,3}, Strides {1,1}, Dilations {1,1}, no padding -> {1,9,9}, row k = the "
            "window offset (k // 3, k % 3): row 0 = [0,1,2,5,6,7,10,11,12], row 8 = [12,13,14,17,18,19,22,23,24]. "
            "Example 2: StartPadding {1,0}, EndPadding {1,0} -> {1,9,15}: row 0 = [0,0,0,0,1,2,5,6,7,10,11,12,"
            "15,16,17], row 8 = [7,8,9,12,13,14,17,18,19,22,23,24,0,0,0]."
        ),
    ),
}
