"""The pages of ACTIVATION_SOFTMAX, LOG_SOFTMAX and HARDMAX (and their 1 versions): activations over axes."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_activation_*_operator_desc.md (ops up to
# CELU / RELU_GRAD) and MicrosoftDocs/windows-ai-docs docs/directml/api/ (GELU, SOFTMAX1, LOG_SOFTMAX1,
# HARDMAX1, SWISH, HARD_SWISH). support levels are listed ascending; the pages list them descending.

PAGES: dict[str, Page] = {
    "ACTIVATION_HARDMAX": Page(
        page="ns-directml-dml_activation_hardmax_operator_desc",
        introduced="1.0",
        function="f(x)[i] = 1 if x[i] is the first occurrence of the largest value of its row (last axis) else 0",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            (
                "InputTensor effective rank (DimensionCount not counting leading size-1 dims) must be <= 2, "
                "e.g. {1, 1, BatchCount, Width} is treated as {BatchCount, Width}."
            ),
        ),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Reduction is over the last dimension only (one row per batch entry); ties go to the first "
            "maximum. Output has the input's shape and data type. No in-place statement on the page. For "
            "arbitrary axes see ACTIVATION_HARDMAX1 (5.1)."
        ),
    ),
    "ACTIVATION_LOG_SOFTMAX": Page(
        page="ns-directml-dml_activation_log_softmax_operator_desc",
        introduced="1.0",
        function="f(x)[i] = ln(exp(x[i]) / sum_j exp(x[j])), j over the last axis (each row)",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "InputTensor effective rank (leading size-1 dims excluded) must be <= 2.",
        ),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Natural log of softmax over the last dimension. The page's formula comment writes the sum as "
            "x_0..x_j with j the element count (an off-by-one in the docs; the intent is all elements of the "
            "row). No in-place statement. For arbitrary axes see ACTIVATION_LOG_SOFTMAX1 (5.1)."
        ),
    ),
    "ACTIVATION_SOFTMAX": Page(
        page="ns-directml-dml_activation_softmax_operator_desc",
        introduced="1.0",
        function="f(x)[i] = exp(x[i]) / sum_j exp(x[j]), j over the last axis (each row)",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            (
                "InputTensor effective rank (leading size-1 dims excluded) must be <= 2, e.g. {1, 1, "
                "BatchCount, Width} == {BatchCount, Width}."
            ),
        ),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Softmax over the last dimension only (the page gives the 1-D formula). No in-place statement. "
            "For arbitrary axes see ACTIVATION_SOFTMAX1 (5.1), which equals this op when Axes == "
            "{DimensionCount - 1}. Fusable into GEMM only, from 6.1 (see FUSABLE_GEMM_ONLY)."
        ),
    ),
    "ACTIVATION_SOFTMAX1": Page(
        page="ns-directml-dml_activation_softmax1_operator_desc",
        introduced="5.1",
        function=(
            "f(x)[i] = exp(x[i]) / sum_j exp(x[j]), j over all elements sharing i's coordinates outside Axes "
            "(joint reduction over Axes)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "AxisCount/Axes: Axes values must lie in [0, InputTensor.DimensionCount - 1].",
        ),
        support={
            "5.1": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Equivalent to ACTIVATION_SOFTMAX when AxisCount == 1 and Axes == {DimensionCount - 1}; no "
            "effective-rank limit. Several axes are reduced together. No in-place statement. Fusable into "
            "GEMM only, from 6.1 (see FUSABLE_GEMM_ONLY)."
        ),
    ),
    "ACTIVATION_LOG_SOFTMAX1": Page(
        page="ns-directml-dml_activation_log_softmax1_operator_desc",
        introduced="5.1",
        function="f(x)[i] = ln(exp(x[i]) / sum_j exp(x[j])), j over the elements sharing i's coordinates outside Axes",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "AxisCount/Axes: Axes values must lie in [0, InputTensor.DimensionCount - 1].",
        ),
        support={
            "5.1": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Equivalent to ACTIVATION_LOG_SOFTMAX when AxisCount == 1 and Axes == {DimensionCount - 1}. "
            "Beware: the page's three worked examples are copied from HARDMAX1 (they show 0/1 outputs), so "
            "they are not valid log-softmax results. No in-place statement."
        ),
    ),
    "ACTIVATION_HARDMAX1": Page(
        page="ns-directml-dml_activation_hardmax1_operator_desc",
        introduced="5.1",
        function=(
            "f(x)[i] = 1 if x[i] is the first maximum (ArgMax, DML_AXIS_DIRECTION_INCREASING) of the "
            "elements sharing i's coordinates outside Axes, else 0"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "AxisCount/Axes: Axes values must lie in [0, InputTensor.DimensionCount - 1].",
        ),
        support={
            "5.1": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Defined via REDUCE with DML_REDUCE_FUNCTION_ARGMAX over Axes, broadcast back: exactly one 1 per "
            "reduced group (first max in row-major order of the reduced axes), e.g. Axes {0, 2} reduces both "
            "axes jointly. Equivalent to ACTIVATION_HARDMAX when AxisCount == 1 and Axes == {DimensionCount "
            "- 1}. No in-place statement."
        ),
    ),
}
