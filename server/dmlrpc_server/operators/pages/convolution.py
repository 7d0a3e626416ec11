"""The pages of CONVOLUTION and CONVOLUTION_INTEGER."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_<name>_operator_desc.md, except
# MEAN_VARIANCE_NORMALIZATION2, which only exists in MicrosoftDocs/windows-ai-docs docs/directml/api/.
# support levels are listed ascending; the pages list them descending. Tables a page splits by reduce
# function are keyed "X.Y|<functions>".

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
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
}
