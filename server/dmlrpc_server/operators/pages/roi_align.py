"""The pages of ROI_ALIGN, ROI_ALIGN1 and ROI_ALIGN_GRAD."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md, and MicrosoftDocs/windows-ai-docs
# docs/directml/api/ for the pages that live only there (FOLD, UNFOLD, ROI_ALIGN_GRAD, MULTIHEAD_ATTENTION,
# MULTIHEAD_ATTENTION1). Support levels are listed ascending; the pages list them descending.

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "ROI_ALIGN": Page(
        page="ns-directml-dml_roi_align_operator_desc",
        introduced="3.0",
        function=(
            "ROI_ALIGN1 with InputPixelOffset = 0.5, OutputPixelOffset = -0.5 and AlignRegionsToCorners = FALSE "
            "(pixels treated as centred, per the ROI_ALIGN1 page): out[r, c, y, x] = the AVERAGE or MAX of the "
            "interpolated input samples of output element (y, x) of region r"
        ),
        constraints=(
            "InputTensor, OutputTensor and ROITensor: same DataType.",
            "InputTensor: {BatchCount, ChannelCount, InputHeight, InputWidth}.",
            "ROITensor: {NumROIs, 4}, {1, NumROIs, 4} or {1, 1, NumROIs, 4}; each ROI is [x1, y1, x2, y2].",
            "BatchIndicesTensor: {NumROIs}, {1, NumROIs}, {1, 1, NumROIs} or {1, 1, 1, NumROIs}; values outside "
            "[0, BatchCount) are undefined.",
            "OutputTensor: {NumROIs, ChannelCount, OutputHeight, OutputWidth}.",
            "ReductionFunction: DML_REDUCE_FUNCTION_AVERAGE or DML_REDUCE_FUNCTION_MAX.",
            "InterpolationMode: NEAREST_NEIGHBOR or LINEAR (bilinear over 4 input elements).",
            "Samples per output element: ScaledCropSize / OutputSize clamped to [MinimumSamplesPerOutput, "
            "MaximumSamplesPerOutput].",
        ),
        support={
            "3.0": {
                "InputTensor": ("4", _F),
                "ROITensor": ("2-4", _F),
                "BatchIndicesTensor": ("1-4", "UINT32"),
                "OutputTensor": ("4", _F),
            },
        },
        notes=(
            "Mask R-CNN's ROI align. SpatialScaleX/Y multiply the ROI coordinates (e.g. the input width/height "
            "for normalised ROIs). OutOfBoundsInputValue is read where the scaled ROIs fall outside the input. "
            "The page gives no algorithm of its own; ROI_ALIGN1's page defines it and says ROI_ALIGN is its "
            "behaviour with centred pixels (offsets 0.5 / -0.5) and no corner alignment. See ROI_ALIGN1's notes "
            "for how the pseudo-code's gaps are read."
        ),
    ),
    "ROI_ALIGN1": Page(
        page="ns-directml-dml_roi_align1_operator_desc",
        introduced="4.0",
        function=(
            "per region r: X1 = ROI[r,0]*SpatialScaleX, Y1 = ROI[r,1]*SpatialScaleY, X2, Y2 likewise; "
            "SizeX = X2 - X1; Sx = clamp(SizeX / OutputWidth, MinimumSamplesPerOutput, MaximumSamplesPerOutput); "
            "scaleX = SizeX / (OutputWidth * Sx); out[r, c, y, x] = reduce over sampleX in [x*Sx, x*Sx + Sx), "
            "sampleY likewise, of interpolate2D(Input[BatchIndices[r], c], (sampleX - OutputPixelOffset) * scaleX "
            "+ X1 - InputPixelOffset, (sampleY - OutputPixelOffset) * scaleY + Y1 - InputPixelOffset)"
        ),
        constraints=(
            "InputTensor, OutputTensor and ROITensor: same DataType.",
            "InputTensor: {BatchCount, ChannelCount, InputHeight, InputWidth}.",
            "ROITensor: {NumROIs, 4}, {1, NumROIs, 4} or {1, 1, NumROIs, 4}; each ROI is [x1, y1, x2, y2]; "
            "regions may be empty (every sample from one coordinate) or inverted (x2 < x1: mirrored).",
            "BatchIndicesTensor: {NumROIs}, {1, NumROIs}, {1, 1, NumROIs} or {1, 1, 1, NumROIs}; values outside "
            "[0, BatchCount) are undefined.",
            "OutputTensor: {NumROIs, ChannelCount, OutputHeight, OutputWidth}.",
            "ReductionFunction: DML_REDUCE_FUNCTION_AVERAGE or DML_REDUCE_FUNCTION_MAX.",
            "InterpolationMode: NEAREST_NEIGHBOR or LINEAR.",
        ),
        support={
            "4.0": {
                "InputTensor": ("4", _F),
                "ROITensor": ("2-4", _F),
                "BatchIndicesTensor": ("1-4", "UINT32"),
                "OutputTensor": ("4", _F),
            },
        },
        notes=(
            "InputPixelOffset: offset from (0,0) of the input coordinates to the top-left pixel centre, typically "
            "0 or 0.5 (0.5 = ROI_ALIGN). OutputPixelOffset: offset from the top-left pixel centre to (0,0) of the "
            "output coordinates, typically 0 or -0.5 (-0.5 = ROI_ALIGN). AlignRegionsToCorners stretches the "
            "sample points to the region's very corners instead of spreading them evenly within it (FALSE = "
            "ROI_ALIGN). The page's pseudo-code has gaps, read here as follows (stated in the operator module "
            "too): the sample count per output element is an integer, ceil(ScaledCropSize / OutputSize) clamped "
            "to [Minimum, Maximum]SamplesPerOutput (Mask R-CNN's adaptive count; an inverted region clamps to the "
            "minimum); the sample loop runs over that many samples (the pseudo-code's '<=' would take one more); "
            "outputSampleToInputScaleY uses the Y sizes (the pseudo-code repeats the X ones); with "
            "AlignRegionsToCorners the scale is SizeX / (OutputWidth * Sx - 1), so the samples span X1..X2. "
            "interpolate2D reads OutOfBoundsInputValue for a sample outside [-1, InputWidth] x [-1, InputHeight] "
            "(the bounds of ONNX RoiAlign, which ONNX Runtime's DirectML provider maps onto this operator); "
            "inside, the coordinate is clamped to [0, size - 1] and LINEAR weighs the 2x2 neighbours, "
            "NEAREST_NEIGHBOR takes floor(coordinate + 0.5). MAX is the maximum of the interpolated samples. "
            "The page's example is an image (roi_align_examples.png) without numbers."
        ),
    ),
    "ROI_ALIGN_GRAD": Page(
        page="ns-directml-dml_roi_align_grad_operator_desc",
        introduced="4.1",
        function=(
            "the backward pass of ROI_ALIGN1 with the same attributes: OutputGradient[BatchIndices[r], c] += the "
            "transpose of region r's sampling applied to InputGradient[r, c] (every input element receives dY "
            "times the weight with which it entered each output element); OutputROIGradient = the gradient with "
            "respect to the ROI coordinates"
        ),
        constraints=(
            "InputGradientTensor, InputTensor, OutputGradientTensor, OutputROIGradientTensor and ROITensor: same "
            "DataType.",
            "InputGradientTensor: the sizes of the forward's output, {NumROIs, ChannelCount, OutputHeight, "
            "OutputWidth}.",
            "InputTensor (optional): the forward's input {BatchCount, ChannelCount, InputHeight, InputWidth}; "
            "required when OutputROIGradientTensor is supplied or ReductionFunction is MAX.",
            "ROITensor: {NumROIs, 4}, {1, NumROIs, 4} or {1, 1, NumROIs, 4}; BatchIndicesTensor: {NumROIs} with "
            "leading 1s, values in [0, BatchCount).",
            "OutputGradientTensor (optional): the sizes of the forward's input.",
            "OutputROIGradientTensor (optional): ROITensor's sizes.",
            "At least one of OutputGradientTensor and OutputROIGradientTensor must be supplied.",
            "ReductionFunction, InterpolationMode, SpatialScaleX/Y, Input/OutputPixelOffset, Minimum/Maximum"
            "SamplesPerOutput, AlignRegionsToCorners: as ROI_ALIGN1's.",
        ),
        support={
            "4.1": {
                "InputTensor": ("4", _F),
                "InputGradientTensor": ("4", _F),
                "ROITensor": ("2-4", _F),
                "BatchIndicesTensor": ("1-4", "UINT32"),
                "OutputGradientTensor": ("4", _F),
                "OutputROIGradientTensor": ("2-4", _F),
            },
        },
        notes=(
            "The page's example: a nearest-neighbour ROI_ALIGN1 of four 2x2 regions of a 4x4 input to 1x3 outputs "
            "reads input columns 0, 0, 1 of row 0 of each region; the gradient [[1, 2, 3]], [[4, 5, 6]], "
            "[[7, 8, 9]], [[10, 11, 12]] becomes [[3, 3, 9, 6], [0, 0, 0, 0], [15, 9, 21, 12], [0, 0, 0, 0]]. The "
            "example does not give its offsets or sample counts; with one sample per output and ROI_ALIGN's "
            "offsets its coordinates fall on .5 ties, which it resolves downward (ROI_ALIGN1 here rounds "
            "floor(x + 0.5)). Without an OutOfBoundsInputValue the out-of-bounds samples of the forward carry no "
            "gradient. The ROI gradient is given only as pseudo-code for Minimum = MaximumSamplesPerOutput = 1 "
            "(image gradients of the bilinear taps times the gradient, weighted by (inputWidth - x) and x), with "
            "its coordinates and inputWidth/inputHeight undefined; this server refuses it (UNIMPLEMENTED)."
        ),
    ),
}
