"""The pages of ELEMENT_WISE_QUANTIZE_LINEAR, ELEMENT_WISE_DEQUANTIZE_LINEAR and ELEMENT_WISE_QUANTIZED_LINEAR_ADD."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

PAGES: dict[str, Page] = {
    "ELEMENT_WISE_QUANTIZE_LINEAR": Page(
        page="ns-directml-dml_element_wise_quantize_linear_operator_desc",
        introduced="1.0",
        function=(
            "f(input, scale, zero_point) = clamp(round(input / scale) + zero_point, Min, Max), with [Min, Max] ="
            " [0, 255] for UINT8 output and [-128, 127] for INT8 output"
        ),
        constraints=(
            "InputTensor, OutputTensor, ScaleTensor and ZeroPointTensor: same DimensionCount and Sizes.",
            "OutputTensor and ZeroPointTensor: same DataType.",
            "ScaleTensor must be FLOAT32 when InputTensor is INT32; otherwise ScaleTensor's DataType equals"
            " InputTensor's.",
            "A scale of 0 is undefined behaviour.",
            "OutputTensor is INT8/UINT8 (UINT8 only at 1.0), whatever the input type.",
            "ZeroPointTensor is required before 6.2 and optional from 6.2.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "UINT8"),
                "OutputTensor": ("4", "UINT8"),
            },
            "2.1": {
                "InputTensor": ("4", "FLOAT32 INT32"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputTensor": ("4", "INT8 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 INT32"),
                "ScaleTensor": ("1-8", "FLOAT32"),
                "ZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
            "6.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
            "6.2": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
        },
        notes=(
            "Scale and zero point are full tensors with the output's sizes (per-element, broadcast via strides),"
            " not scalars. The page's 'round' does not name a tie-breaking rule (ONNX QuantizeLinear, which this"
            " mirrors, rounds half to even). Saturates to the output type's range. The 6.2 table marks"
            " ZeroPointTensor as 'Optional input' (the page does not say what an absent one"
            " means; 0 is the natural reading); earlier tables list it as a required input. INT32 input is"
            " quantized with a FLOAT32 scale. No in-place support stated."
        ),
    ),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": Page(
        page="ns-directml-dml_element_wise_dequantize_linear_operator_desc",
        introduced="1.0",
        function="f(input, scale, zero_point) = (input - zero_point) * scale",
        constraints=(
            "InputTensor, OutputTensor, ScaleTensor and ZeroPointTensor: same DimensionCount and Sizes.",
            "InputTensor and ZeroPointTensor: same DataType.",
            "OutputTensor and ScaleTensor: same DataType.",
            "A scale of 0 is undefined behaviour.",
            "OutputTensor is a float type (FLOAT32, plus FLOAT16 from 6.0) while the input is an integer type.",
            "ZeroPointTensor is required before 6.2 and optional from 6.2.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "UINT8"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "UINT8"),
                "OutputTensor": ("4", "FLOAT32"),
            },
            "2.1": {
                "InputTensor": ("4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("4", "FLOAT32"),
                "ZeroPointTensor": ("4", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32"),
            },
            "3.0": {
                "InputTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("1-8", "FLOAT32"),
                "ZeroPointTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32"),
            },
            "6.0": {
                "InputTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
            "6.2": {
                "InputTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "ScaleTensor": ("1-8", "FLOAT32 FLOAT16"),
                "ZeroPointTensor": ("1-8", "INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "Scale and zero point are full tensors with the output's sizes (per-element, broadcast via strides)."
            " The math is exact (input - zero_point), so an implementation should subtract in a wider signed type, not"
            " wrap for unsigned inputs (the page does not discuss this)."
            " The 6.2 table marks ZeroPointTensor as 'Optional input' (the page does not say what an absent one"
            " means; 0 is the natural reading); earlier tables list it as a required input. No in-place support stated."
        ),
    ),
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": Page(
        page="ns-directml-dml_element_wise_quantized_linear_add_operator_desc",
        introduced="4.0",
        function=(
            "f(a, b) = clamp(round(((a - AZeroPoint) * AScale + (b - BZeroPoint) * BScale) / OutputScale) + "
            "OutputZeroPoint, Min, Max); Min/Max = 0/255 for UINT8 output, -128/127 for INT8 output"
        ),
        constraints=(
            (
                "All nine tensors (A, AScale, AZeroPoint, B, BScale, BZeroPoint, OutputScale, Output, "
                "OutputZeroPoint): same DimensionCount."
            ),
            "ATensor and AZeroPointTensor: same DataType.",
            "BTensor and BZeroPointTensor: same DataType.",
            "OutputTensor and OutputZeroPointTensor: same DataType.",
            "AScaleTensor, BScaleTensor, OutputScaleTensor: exactly 1 element each, FLOAT32.",
            "AZeroPointTensor, BZeroPointTensor, OutputZeroPointTensor: optional, 1 element each, default 0.",
        ),
        support={
            "4.0": {
                "ATensor": ("1-8", "INT8 UINT8"),
                "AScaleTensor": ("1-8", "FLOAT32"),
                "AZeroPointTensor": ("1-8", "INT8 UINT8"),
                "BTensor": ("1-8", "INT8 UINT8"),
                "BScaleTensor": ("1-8", "FLOAT32"),
                "BZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputScaleTensor": ("1-8", "FLOAT32"),
                "OutputZeroPointTensor": ("1-8", "INT8 UINT8"),
                "OutputTensor": ("1-8", "INT8 UINT8"),
            },
        },
        notes=(
            "Single table without a feature-level heading. Scales and zero points are per-tensor (1 element), not "
            "per-axis. A, B and Output may each be INT8 or UINT8 independently (only each zero point must match "
            "its tensor). Rounding mode of round() is not specified on the page (assume half-to-even as in "
            "QuantizeLinear). Sizes-equality of A/B/Output is not stated as a constraint (only DimensionCount). No "
            "in-place statement on the page. Struct field order: ATensor, AScaleTensor, AZeroPointTensor, BTensor, "
            "BScaleTensor, BZeroPointTensor, OutputScaleTensor, OutputZeroPointTensor, OutputTensor."
        ),
    ),
}
