"""The pages of the ELEMENT_WISE_* trigonometric, hyperbolic, exponential, logarithm and error functions."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

PAGES: dict[str, Page] = {
    "ELEMENT_WISE_ACOS": Page(
        page="ns-directml-dml_element_wise_acos_operator_desc",
        introduced="1.0",
        function="f(x) = acos(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ASIN": Page(
        page="ns-directml-dml_element_wise_asin_operator_desc",
        introduced="1.0",
        function="f(x) = asin(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ATAN": Page(
        page="ns-directml-dml_element_wise_atan_operator_desc",
        introduced="1.0",
        function="f(x) = atan(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_COS": Page(
        page="ns-directml-dml_element_wise_cos_operator_desc",
        introduced="1.0",
        function="f(x) = cos(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_EXP": Page(
        page="ns-directml-dml_element_wise_exp_operator_desc",
        introduced="1.0",
        function="f(x) = exp(x) (natural exponential); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_LOG": Page(
        page="ns-directml-dml_element_wise_log_operator_desc",
        introduced="1.0",
        function="f(x) = ln(x) (natural log); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Negative x gives an indefinite result (NaN); x == 0 gives -INF. In-place execution supported (OutputTensor"
            " may alias InputTensor)."
        ),
    ),
    "ELEMENT_WISE_SIN": Page(
        page="ns-directml-dml_element_wise_sin_operator_desc",
        introduced="1.0",
        function="f(x) = sin(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_TAN": Page(
        page="ns-directml-dml_element_wise_tan_operator_desc",
        introduced="1.0",
        function="f(x) = tan(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes="In-place execution supported (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ERF": Page(
        page="ns-directml-dml_element_wise_erf_operator_desc",
        introduced="2.0",
        function=(
            "f(x) = erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt; ScaleBias applied to the input first: x*Scale+Bias"
        ),
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_SINH": Page(
        page="ns-directml-dml_element_wise_sinh_operator_desc",
        introduced="2.0",
        function="f(x) = sinh(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_COSH": Page(
        page="ns-directml-dml_element_wise_cosh_operator_desc",
        introduced="2.0",
        function="f(x) = cosh(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_TANH": Page(
        page="ns-directml-dml_element_wise_tanh_operator_desc",
        introduced="2.0",
        function="f(x) = tanh(x); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ASINH": Page(
        page="ns-directml-dml_element_wise_asinh_operator_desc",
        introduced="2.0",
        function="f(x) = asinh(x) = ln(x + sqrt(x*x + 1)); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ACOSH": Page(
        page="ns-directml-dml_element_wise_acosh_operator_desc",
        introduced="2.0",
        function="f(x) = acosh(x) = ln(x + sqrt(x*x - 1)); ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ATANH": Page(
        page="ns-directml-dml_element_wise_atanh_operator_desc",
        introduced="2.0",
        function="f(x) = atanh(x) = ln((1 + x) / (1 - x)) / 2; ScaleBias applied to the input first: x*Scale+Bias",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes="Supports in-place execution (OutputTensor may alias InputTensor).",
    ),
    "ELEMENT_WISE_ATAN_YX": Page(
        page="ns-directml-dml_element_wise_atan_yx_operator_desc",
        introduced="3.1",
        function="f(y, x) = atan2(y, x) with y = ATensor, x = BTensor",
        constraints=("ATensor, BTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.1": {
                "ATensor": ("1-8", "FLOAT32 FLOAT16"),
                "BTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "Single table without a feature-level heading. ATensor is the Y coordinate, BTensor the X. Result is "
            "undefined at the origin (a == 0 and b == 0). Supports in-place execution (OutputTensor may alias "
            "ATensor or BTensor)."
        ),
    ),
}
