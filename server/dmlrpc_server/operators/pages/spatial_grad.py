"""The pages of AVERAGE/MAX_POOLING_GRAD, RESAMPLE_GRAD(1) and SLICE_GRAD."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md, and MicrosoftDocs/windows-ai-docs
# docs/directml/api/ for RESAMPLE_GRAD1 (5.1), which is not in sdk-api. Each page has a single support table,
# keyed here by the introducing level. The pages separate data types with commas; here they are space-separated.

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "AVERAGE_POOLING_GRAD": Page(
        page="ns-directml-dml_average_pooling_grad_operator_desc",
        introduced="3.0",
        function=(
            "dx[n, c, i] = sum over output positions o whose window (o*Strides - StartPadding + k, k in WindowSize) "
            "contains i of dy[n, c, o] / count(o), count(o) = prod(WindowSize) if IncludePadding else the number "
            "of in-bounds elements of o's window: the transpose of AVERAGE_POOLING"
        ),
        constraints=(
            "InputGradientTensor and OutputGradientTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for 4D tensors and 3 for 5D ones.",
            "Strides, WindowSize, StartPadding, EndPadding and IncludePadding: as in AVERAGE_POOLING, whose input "
            "is OutputGradientTensor and whose output is InputGradientTensor.",
        ),
        support={"3.0": {"InputGradientTensor": ("4-5", _F), "OutputGradientTensor": ("4-5", _F)}},
        notes=(
            "InputGradientTensor typically has the sizes of the forward pooling's output, OutputGradientTensor "
            "those of its input; the pooling output-size formula relates them (this server requires it: "
            "InputGradientTensor.Sizes = the pooled sizes of OutputGradientTensor.Sizes). Elements no window "
            "covers get 0. No Dilations (AVERAGE_POOLING has none). Example: a 2x2 window, stride 1, no padding, "
            "InputGradientTensor [[1, 2], [3, 4]] -> OutputGradientTensor [[0.25, 0.75, 0.5], [1, 2.5, 1.5], "
            "[0.75, 1.75, 1]] (each gradient spread evenly over its window's 4 elements)."
        ),
    ),
    "MAX_POOLING_GRAD": Page(
        page="ns-directml-dml_max_pooling_grad_operator_desc",
        introduced="3.0",
        function=(
            "dx = 0; for each output position o: dx[argmax(o)] += dy[o], argmax(o) = the element of InputTensor "
            "in o's window (o*Strides - StartPadding + k*Dilations) holding the maximum, the lowest logical element "
            "index on ties"
        ),
        constraints=(
            "InputTensor and OutputGradientTensor: same Sizes.",
            "InputGradientTensor, InputTensor and OutputGradientTensor: same DataType.",
            "DimensionCount = InputTensor's DimensionCount - 2; only 4D tensors, so 2.",
            "Strides, WindowSize, StartPadding, EndPadding and Dilations: as in MAX_POOLING2 over InputTensor, "
            "whose output has InputGradientTensor's sizes.",
        ),
        support={
            "3.0": {
                "InputTensor": ("4", _F),
                "InputGradientTensor": ("4", _F),
                "OutputGradientTensor": ("4", _F),
            }
        },
        notes=(
            "InputTensor is the forward MAX_POOLING2's input; it decides each window's winner, and each incoming "
            "gradient goes to its winner's position. Where winners coincide the gradients are summed; elements "
            "that win no window are 0. A window entirely in the padding has no winner (this server refuses it, as "
            "for the forward pooling). Example: 2x2 window, stride 1, InputTensor [[1, 2, 3], [2, 4, 2], [5, 6, 7]], "
            "InputGradientTensor [[1, 2], [4, 5]] -> OutputGradientTensor [[0, 0, 0], [0, 3, 0], [0, 4, 5]]."
        ),
    ),
    "RESAMPLE_GRAD": Page(
        page="ns-directml-dml_resample_grad_operator_desc",
        introduced="3.0",
        function=(
            "the transpose of RESAMPLE1: dx[i] = sum over output positions o of w(o, i) * dy[o], w(o, i) = the "
            "weight input element i has in output o (NEAREST_NEIGHBOR: 1 for the element o reads; LINEAR: the "
            "interpolation weights), inX = (outX - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d]"
        ),
        constraints=(
            "InputGradientTensor and OutputGradientTensor: same DataType.",
            "DimensionCount (length of Scales, InputPixelOffsets, OutputPixelOffsets) must equal the tensors' "
            "DimensionCount.",
            "InterpolationMode, Scales and the pixel offsets: as in RESAMPLE1, whose input is OutputGradientTensor "
            "and whose output is InputGradientTensor.",
        ),
        support={"3.0": {"InputGradientTensor": ("4", _F), "OutputGradientTensor": ("4", _F)}},
        notes=(
            "Arrays index all dimensions. Sizes are free, as in RESAMPLE1 (elements the forward resample clamps "
            "onto the edges collect those outputs' gradients; elements no output reads get 0). Example: "
            "NEAREST_NEIGHBOR, scales {0.5, 1.5} on a 2x2 input (forward [[1, 2], [3, 4]] -> [1, 1, 2]): "
            "InputGradientTensor [4, 5, 6] -> OutputGradientTensor [[9, 6], [0, 0]]."
        ),
    ),
    "RESAMPLE_GRAD1": Page(
        page="ns-directml-dml_resample_grad1_operator_desc",
        introduced="5.1",
        function=(
            "the transpose of RESAMPLE2: as RESAMPLE_GRAD, NEAREST_NEIGHBOR rounding the input coordinate by "
            "RoundingDirection (INCREASING = ceil, DECREASING = floor)"
        ),
        constraints=(
            "InputGradientTensor and OutputGradientTensor: same DataType and DimensionCount.",
            "DimensionCount (length of Scales, InputPixelOffsets, OutputPixelOffsets) must equal the tensors' "
            "DimensionCount.",
            "InterpolationMode, RoundingDirection, Scales and the pixel offsets: as in RESAMPLE2.",
        ),
        support={"5.1": {"InputGradientTensor": ("1-4", _F), "OutputGradientTensor": ("1-4", _F)}},
        notes=(
            "Page from MicrosoftDocs/windows-ai-docs. Equivalent to RESAMPLE_GRAD when InterpolationMode is LINEAR, "
            "or with NEAREST_NEIGHBOR, RoundingDirection = DECREASING and OutputPixelOffsets shifted by an extra "
            "-0.5. Same example as RESAMPLE_GRAD: [4, 5, 6] -> [[9, 6], [0, 0]]."
        ),
    ),
    "SLICE_GRAD": Page(
        page="ns-directml-dml_slice_grad_operator_desc",
        introduced="3.0",
        function=(
            "dx = 0; dx[CopyStart + InputWindowStrides * o] = dy[o] for o over InputGradientTensor.Sizes, CopyStart "
            "as in SLICE1 (InputWindowOffsets, plus InputWindowSizes - 1 where the stride is negative)"
        ),
        constraints=(
            "InputGradientTensor and OutputGradientTensor: same DataType and DimensionCount.",
            "DimensionCount must equal the tensors' DimensionCount.",
            "InputWindowOffsets, InputWindowSizes and InputWindowStrides: as in SLICE1 over OutputGradientTensor "
            "(the window inside it, not empty, InputGradientTensor.Sizes[i] in [1, 1 + (InputWindowSizes[i] - 1) "
            "/ |InputWindowStrides[i]|]).",
            "InputWindowStrides[i] != 0: with a zero stride the inverse mapping is ambiguous.",
        ),
        support={
            "3.0": {
                "InputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            }
        },
        notes=(
            "Arrays have one entry per tensor dimension. Negative strides flip the window's direction as in SLICE1. "
            "Pure data movement: values are copied bit-exactly and every element outside the slice is 0. Example: "
            "the SLICE1 taking [[a, c], [i, k]] from a 4x4 [[a, b, c, d], [e, f, g, h], [i, j, k, l], [m, n, o, p]] "
            "(strides 2 from offset 0 in both dimensions) -> SLICE_GRAD of [[a, c], [i, k]] is "
            "[[a, 0, c, 0], [0, 0, 0, 0], [i, 0, k, 0], [0, 0, 0, 0]]."
        ),
    ),
}
