"""The pages of QUANTIZE, DEQUANTIZE, DYNAMIC_QUANTIZE_LINEAR and the quantized-linear operators."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

_DEQUANTIZE = "dequantize(x, Scale, ZeroPoint) = (x - ZeroPoint) * Scale"

_QUANTIZE = (
    "quantize(y, Scale, ZeroPoint) = clamp(round(y / Scale) + ZeroPoint, Min, Max), Min/Max = 0/255 for UINT8, "
    "-128/127 for INT8"
)

_ROUNDING = (
    " round() is round-half-to-even and the clamp saturates (as ELEMENT_WISE_QUANTIZE_LINEAR); a Scale of 0 is "
    "undefined behaviour."
)

_FOUR_BIT = (
    " The page also lists INT4 and UINT4 (packed two to a byte); this server does not carry 4-bit tensors, so its "
    "table here leaves them out and such tensors are refused as unsupported data types."
)

PAGES: dict[str, Page] = {
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": Page(
        page="ns-directml-dml_quantized_linear_matrix_multiply_operator_desc",
        introduced="2.1",
        function=(
            "Output = quantize(dequantize(A, AScale, AZeroPoint) x dequantize(B, BScale, BZeroPoint), OutputScale, "
            f"OutputZeroPoint) over the leading (batch, channel) dimensions; {_DEQUANTIZE}; {_QUANTIZE}"
        ),
        constraints=(
            "ATensor and AZeroPointTensor: same DataType.",
            "ATensor, BTensor and OutputTensor: same DimensionCount.",
            "BTensor and BZeroPointTensor: same DataType.",
            "OutputTensor and OutputZeroPointTensor: same DataType.",
            (
                "AScaleTensor, AZeroPointTensor, BScaleTensor, BZeroPointTensor, OutputScaleTensor and "
                "OutputZeroPointTensor: same DimensionCount."
            ),
            (
                "AScaleTensor/AZeroPointTensor: {1,1,1,1} (per tensor) or {1,1,M,1} (per row); BScaleTensor/"
                "BZeroPointTensor: {1,1,1,1} or {1,1,1,N} (per column); OutputScaleTensor/OutputZeroPointTensor: "
                "{1,1,1,1} or {1,1,M,1} (per row)."
            ),
            "A is {Batch, Channel, M, K}, B {Batch, Channel, K, N}, Output {Batch, Channel, M, N}.",
        ),
        support={
            "2.1": {
                "ATensor": ("4", "INT8 UINT8"),
                "AScaleTensor": ("4", "FLOAT32"),
                "AZeroPointTensor": ("4", "INT8 UINT8"),
                "BTensor": ("4", "INT8 UINT8"),
                "BScaleTensor": ("4", "FLOAT32"),
                "BZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputScaleTensor": ("4", "FLOAT32"),
                "OutputZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputTensor": ("4", "INT8 UINT8"),
            },
            "4.0": {
                "ATensor": ("2-4", "INT8 UINT8"),
                "AScaleTensor": ("1-4", "FLOAT32"),
                "AZeroPointTensor": ("1-4", "INT8 UINT8"),
                "BTensor": ("2-4", "INT8 UINT8"),
                "BScaleTensor": ("1-4", "FLOAT32"),
                "BZeroPointTensor": ("1-4", "INT8 UINT8"),
                "OutputScaleTensor": ("1-4", "FLOAT32"),
                "OutputZeroPointTensor": ("1-4", "INT8 UINT8"),
                "OutputTensor": ("2-4", "INT8 UINT8"),
            },
        },
        notes=(
            "Mathematically dequantize -> matrix multiply -> quantize. Zero points are optional (0 when absent). "
            "From 4.0 the batch and channel dimensions are optional and the scale/zero-point tensors may drop "
            "leading 1s (a 1-D per-row tensor is {M})." + _ROUNDING + " The page gives no examples."
        ),
    ),
    "QUANTIZED_LINEAR_CONVOLUTION": Page(
        page="ns-directml-dml_quantized_linear_convolution_operator_desc",
        introduced="2.1",
        function=(
            "Output = quantize(conv(dequantize(Input, InputScale, InputZeroPoint), dequantize(Filter, FilterScale, "
            f"FilterZeroPoint)) + Bias, OutputScale, OutputZeroPoint) (forward cross-correlation); {_DEQUANTIZE}; "
            f"{_QUANTIZE}"
        ),
        constraints=(
            "FilterTensor and FilterZeroPointTensor: same DataType.",
            "InputTensor and InputZeroPointTensor: same DataType.",
            "OutputTensor and OutputZeroPointTensor: same DataType.",
            "InputScaleTensor, InputZeroPointTensor, OutputScaleTensor, OutputZeroPointTensor: {1,1,1,1}.",
            "FilterScaleTensor, FilterZeroPointTensor: {1,1,1,1} (per tensor) or {1,OutputChannelCount,1,1}.",
            "BiasTensor: {1,OutputChannelCount,1,1}.",
            "DimensionCount: only 2 is supported; Strides, Dilations, StartPadding, EndPadding have DimensionCount "
            "values.",
            "GroupCount divides the input channel count (depth-wise when equal to it).",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", "INT8 UINT8"),
                "InputScaleTensor": ("4", "FLOAT32"),
                "InputZeroPointTensor": ("4", "INT8 UINT8"),
                "FilterTensor": ("4", "INT8 UINT8"),
                "FilterScaleTensor": ("4", "FLOAT32"),
                "FilterZeroPointTensor": ("4", "INT8 UINT8"),
                "BiasTensor": ("4", "INT32"),
                "OutputScaleTensor": ("4", "FLOAT32"),
                "OutputZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputTensor": ("4", "INT8 UINT8"),
            },
        },
        notes=(
            "Mathematically dequantize -> convolve -> quantize; the page does not say in which domain the INT32 "
            "bias is: as in ONNX QLinearConv (which DirectML's ONNX Runtime provider maps onto this operator) it is "
            "added to the INT32 accumulator, i.e. dequantized with scale InputScale * FilterScale and zero point 0. "
            "Padding is a dequantized 0 (the input zero point). Output sizes follow CONVOLUTION's forward formula."
            + _ROUNDING
            + " The page gives no examples."
        ),
    ),
    "DYNAMIC_QUANTIZE_LINEAR": Page(
        page="ns-directml-dml_dynamic_quantize_linear_operator_desc",
        introduced="4.0",
        function=(
            "InputMin/InputMax = min/max(InputTensor); OutputScale = (InputMax - InputMin) / (Max - Min); "
            "OutputZeroPoint = Min - InputMin / OutputScale; OutputTensor = clamp(round(Input / OutputScale) + "
            "OutputZeroPoint, Min, Max), Min/Max = 0/255 for UINT8, -128/127 for INT8"
        ),
        constraints=(
            "InputTensor, OutputScaleTensor, OutputTensor and OutputZeroPointTensor: same DimensionCount.",
            "OutputTensor and OutputZeroPointTensor: same DataType.",
            "OutputScaleTensor and OutputZeroPointTensor: exactly 1 element each.",
        ),
        support={
            "4.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
                "OutputScaleTensor": ("1-8", "FLOAT32"),
                "OutputZeroPointTensor": ("1-8", "INT8 UINT8"),
            },
        },
        notes=(
            "The page's formula leaves three things open, bridged as ONNX DynamicQuantizeLinear (which DirectML's "
            "ONNX Runtime provider maps onto this operator) does: the range is widened to contain 0 (InputMin = "
            "min(min(x), 0), InputMax = max(max(x), 0)) so that 0 is exactly representable; the zero point is "
            "rounded half to even and saturated to [Min, Max]; an all-zero input (an empty range, scale 0) gives "
            "scale 0, zero point Min and every output Min. OutputTensor has the input's sizes. The page also "
            "lists AValue/BValue lines that play no part. No examples."
        ),
    ),
    "QUANTIZED_LINEAR_AVERAGE_POOLING": Page(
        page="ns-directml-dml_quantized_linear_average_pooling_operator_desc",
        introduced="6.2",
        function=(
            "Output = quantize(average_pooling1(dequantize(Input, InputScale, InputZeroPoint)), OutputScale, "
            f"OutputZeroPoint); {_DEQUANTIZE}; {_QUANTIZE}"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount.",
            "InputTensor and InputZeroPointTensor: same DataType.",
            "OutputTensor and OutputZeroPointTensor: same DataType.",
            (
                "InputScaleTensor, InputZeroPointTensor, OutputScaleTensor, OutputZeroPointTensor: {1,1,1,1} (per "
                "tensor) or {1,ChannelCount,1,1} (per channel)."
            ),
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (as AVERAGE_POOLING1).",
        ),
        support={
            "6.2": {
                "InputTensor": ("4-5", "INT8 UINT8"),
                "InputScaleTensor": ("1-5", "FLOAT32"),
                "InputZeroPointTensor": ("1-5", "INT8 UINT8"),
                "OutputScaleTensor": ("1-5", "FLOAT32"),
                "OutputZeroPointTensor": ("1-5", "INT8 UINT8"),
                "OutputTensor": ("4-5", "INT8 UINT8"),
            },
        },
        notes=(
            "Window, Strides, StartPadding, EndPadding, Dilations and IncludePadding as AVERAGE_POOLING1: padding "
            "elements are a dequantized 0 and count in the divisor only with IncludePadding. The page does not "
            "require the input and output data types to be equal." + _ROUNDING + " No examples."
        ),
    ),
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": Page(
        page="ns-directml-dml_matrix_multiply_integer_to_float_operator_desc",
        introduced="6.2",
        function=(
            "Output = dequantize(A, AScale, AZeroPoint) x dequantize(B, BScale, BZeroPoint) + Bias over the leading "
            f"(batch, channel) dimensions; {_DEQUANTIZE}"
        ),
        constraints=(
            "AScaleTensor, AZeroPointTensor, BScaleTensor and BZeroPointTensor: same DimensionCount.",
            "ATensor, BiasTensor, BTensor and OutputTensor: same DimensionCount.",
            "BiasTensor and OutputTensor: same Sizes.",
            "ATensor, AZeroPointTensor, BTensor and BZeroPointTensor: same DataType.",
            "AScaleTensor, BiasTensor, BScaleTensor and OutputTensor: same DataType.",
            (
                "AScaleTensor/AZeroPointTensor: {1,1,1,1} (per tensor) or {1,1,M,1} (per row); BScaleTensor/"
                "BZeroPointTensor: {1,1,1,1} or {1,1,1,N} (per column); leading 1s optional."
            ),
        ),
        support={
            "6.2": {
                "ATensor": ("2-4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "AScaleTensor": ("1-4", "FLOAT32 FLOAT16"),
                "AZeroPointTensor": ("1-4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BTensor": ("2-4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BScaleTensor": ("1-4", "FLOAT32 FLOAT16"),
                "BZeroPointTensor": ("1-4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "BiasTensor": ("2-4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("2-4", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "A is {[Batch], [Channel], M, K}, B {[Batch], [Channel], K, N}, Output and Bias {[Batch], [Channel], M, "
            "N}. The page's member list also describes OutputScaleTensor and OutputZeroPointTensor, which the "
            "struct does not have. Zero points are optional (0 when absent). FLOAT16 computes in FLOAT32. No "
            "examples."
        ),
    ),
    "QUANTIZE": Page(
        page="ns-directml-dml_quantize_operator_desc",
        introduced="6.3",
        function=(
            "QuantizationType SCALE: Output = clamp(round(Input / Scale), Min, Max); SCALE_ZERO_POINT: Output = "
            "clamp(round(Input / Scale) + ZeroPoint, Min, Max); QuantizationTensors = {Scale[, ZeroPoint]}"
        ),
        constraints=(
            "InputTensor, OutputTensor and QuantizationTensors: same DimensionCount.",
            "QuantizationTensorCount is the length of QuantizationTensors.",
        ),
        support={
            "6.3": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "QuantizationTensors": ("1-8", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
        },
        notes=(
            "The page leaves QuantizationType and QuantizationTensors 'TBD'; DirectML.h and its users (ONNX "
            "Runtime's QuantizeLinear-21 lowering) give the rest: NONE is not a quantization, SCALE takes one "
            "tensor {Scale} and SCALE_ZERO_POINT two {Scale, ZeroPoint}; Scale is a float tensor and ZeroPoint has "
            "the output's data type; both have the input's sizes, a per-tensor, per-axis or blocked scale being "
            "broadcast through strides (0 where it repeats). Min/Max are the output type's range."
            + _ROUNDING
            + _FOUR_BIT
        ),
    ),
    "DEQUANTIZE": Page(
        page="ns-directml-dml_dequantize_operator_desc",
        introduced="6.3",
        function=(
            "QuantizationType SCALE: Output = Input * Scale; SCALE_ZERO_POINT: Output = (Input - ZeroPoint) * Scale; "
            "QuantizationTensors = {Scale[, ZeroPoint]}"
        ),
        constraints=(
            "InputTensor, OutputTensor and QuantizationTensors: same DimensionCount.",
            "QuantizationTensorCount is the length of QuantizationTensors.",
        ),
        support={
            "6.3": {
                "InputTensor": ("1-8", "INT8 UINT8"),
                "QuantizationTensors": ("1-8", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "As QUANTIZE: SCALE takes {Scale}, SCALE_ZERO_POINT {Scale, ZeroPoint}; Scale is a float tensor, "
            "ZeroPoint has the input's data type; both have the input's sizes (broadcast through strides). The "
            "difference is exact; FLOAT16 output computes in FLOAT32." + _FOUR_BIT
        ),
    ),
}
