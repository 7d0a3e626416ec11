"""The pages of the point-wise ACTIVATION_* operators, and which activations fuse into other operators."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_activation_*_operator_desc.md (ops up to
# CELU / RELU_GRAD) and MicrosoftDocs/windows-ai-docs docs/directml/api/ (GELU, SOFTMAX1, LOG_SOFTMAX1,
# HARDMAX1, SWISH, HARD_SWISH). support levels are listed ascending; the pages list them descending.

PAGES: dict[str, Page] = {
    "ACTIVATION_ELU": Page(
        page="ns-directml-dml_activation_elu_operator_desc",
        introduced="1.0",
        function="f(x) = x if x >= 0 else Alpha * (exp(x) - 1)",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha: typical default 1.0. In-place execution allowed: OutputTensor may alias InputTensor when "
            "binding. Per the feature-level history, strides on 5D input/output tensors are supported from "
            "2.0."
        ),
    ),
    "ACTIVATION_HARD_SIGMOID": Page(
        page="ns-directml-dml_activation_hard_sigmoid_operator_desc",
        introduced="1.0",
        function="f(x) = max(0, min(Alpha * x + Beta, 1))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha: typical default 0.2; Beta: typical default 0.5. In-place execution allowed: OutputTensor "
            "may alias InputTensor when binding. Per the feature-level history, strides on 5D input/output "
            "tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_IDENTITY": Page(
        page="ns-directml-dml_activation_identity_operator_desc",
        introduced="1.0",
        function="f(x) = x",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Plain copy. In-place execution allowed: OutputTensor may alias InputTensor when binding. Only "
            "float types are listed (integer copies need ELEMENT_WISE_IDENTITY). Per the feature-level "
            "history, strides on 5D input/output tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_LEAKY_RELU": Page(
        page="ns-directml-dml_activation_leaky_relu_operator_desc",
        introduced="1.0",
        function="f(x) = x if x >= 0 else Alpha * x",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha: typical default 0.01. In-place execution allowed: OutputTensor may alias InputTensor "
            "when binding. Per the feature-level history, strides on 5D input/output tensors are supported "
            "from 2.0."
        ),
    ),
    "ACTIVATION_LINEAR": Page(
        page="ns-directml-dml_activation_linear_operator_desc",
        introduced="1.0",
        function="f(x) = Alpha * x + Beta",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "No defaults documented for Alpha/Beta. In-place execution allowed: OutputTensor may alias "
            "InputTensor when binding. Per the feature-level history, strides on 5D input/output tensors are "
            "supported from 2.0."
        ),
    ),
    "ACTIVATION_PARAMETERIZED_RELU": Page(
        page="ns-directml-dml_activation_parameterized_relu_operator_desc",
        introduced="1.0",
        function="f(x, slope) = x if x >= 0 else slope * x (slope read element-wise from SlopeTensor)",
        constraints=("InputTensor, SlopeTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "SlopeTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "2.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "SlopeTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "SlopeTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
            "5.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
                "SlopeTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
            },
        },
        notes=(
            "SlopeTensor must have the full input Sizes (any broadcasting has to come from strides). Signed "
            "integer types (INT32, INT16, INT8) from 5.1. In-place execution allowed: OutputTensor may alias "
            "InputTensor when binding. Per the feature-level history, strides on 5D input/output tensors are "
            "supported from 2.0."
        ),
    ),
    "ACTIVATION_PARAMETRIC_SOFTPLUS": Page(
        page="ns-directml-dml_activation_parametric_softplus_operator_desc",
        introduced="1.0",
        function="f(x) = Alpha * ln(1 + exp(Beta * x))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "No defaults documented for Alpha/Beta. In-place execution allowed: OutputTensor may alias "
            "InputTensor when binding. Per the feature-level history, strides on 5D input/output tensors are "
            "supported from 2.0."
        ),
    ),
    "ACTIVATION_RELU": Page(
        page="ns-directml-dml_activation_relu_operator_desc",
        introduced="1.0",
        function="f(x) = max(0, x)",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
            "5.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
            },
        },
        notes=(
            "Signed integer types (INT32, INT16, INT8) from 5.1. In-place execution allowed: OutputTensor "
            "may alias InputTensor when binding. Per the feature-level history, strides on 5D input/output "
            "tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_SCALED_ELU": Page(
        page="ns-directml-dml_activation_scaled_elu_operator_desc",
        introduced="1.0",
        function="f(x) = Gamma * x if x > 0 else Gamma * (Alpha * exp(x) - Alpha)",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha: typical default 1.6732; Gamma: typical default 1.0507 (SELU constants). Branch test is "
            "strictly x > 0 (unlike ELU's x >= 0; both give 0 at x = 0). In-place execution allowed: "
            "OutputTensor may alias InputTensor when binding. Per the feature-level history, strides on 5D "
            "input/output tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_SCALED_TANH": Page(
        page="ns-directml-dml_activation_scaled_tanh_operator_desc",
        introduced="1.0",
        function="f(x) = Alpha * tanh(Beta * x)",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha: typical default 1.0; Beta: typical default 0.5. In-place execution allowed: OutputTensor "
            "may alias InputTensor when binding. Per the feature-level history, strides on 5D input/output "
            "tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_SIGMOID": Page(
        page="ns-directml-dml_activation_sigmoid_operator_desc",
        introduced="1.0",
        function="f(x) = 1 / (1 + exp(-x))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "In-place execution allowed: OutputTensor may alias InputTensor when binding. Per the "
            "feature-level history, strides on 5D input/output tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_SOFTPLUS": Page(
        page="ns-directml-dml_activation_softplus_operator_desc",
        introduced="1.0",
        function="f(x) = ln(1 + exp(Steepness * x)) / Steepness",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            (
                "Steepness must be >= 1 per the page (the rule is misplaced under the OutputTensor field); "
                "the feature-level history says 6.4 relaxes this to allow Steepness < 1."
            ),
        ),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Steepness: typical default 1.0. In-place execution allowed: OutputTensor may alias InputTensor "
            "when binding. Per the feature-level history, strides on 5D input/output tensors are supported "
            "from 2.0."
        ),
    ),
    "ACTIVATION_SOFTSIGN": Page(
        page="ns-directml-dml_activation_softsign_operator_desc",
        introduced="1.0",
        function="f(x) = x / (1 + abs(x))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "In-place execution allowed: OutputTensor may alias InputTensor when binding. Per the "
            "feature-level history, strides on 5D input/output tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_TANH": Page(
        page="ns-directml-dml_activation_tanh_operator_desc",
        introduced="1.0",
        function="f(x) = (1 - exp(-2 * x)) / (1 + exp(-2 * x))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "i.e. tanh(x). In-place execution allowed: OutputTensor may alias InputTensor when binding. Per "
            "the feature-level history, strides on 5D input/output tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_THRESHOLDED_RELU": Page(
        page="ns-directml-dml_activation_thresholded_relu_operator_desc",
        introduced="1.0",
        function="f(x) = x if x > Alpha else 0",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "1.0": {"InputTensor": ("4", "FLOAT32 FLOAT16"), "OutputTensor": ("4", "FLOAT32 FLOAT16")},
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha is the threshold (typical default 1.0); strict comparison, so x == Alpha gives 0. "
            "In-place execution allowed: OutputTensor may alias InputTensor when binding. Per the "
            "feature-level history, strides on 5D input/output tensors are supported from 2.0."
        ),
    ),
    "ACTIVATION_SHRINK": Page(
        page="ns-directml-dml_activation_shrink_operator_desc",
        introduced="2.0",
        function="f(x) = x - Bias if x > Threshold; x + Bias if x < -Threshold; else 0",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "2.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
            "5.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Bias: typical default 0.0; Threshold: typical default 0.5. Integer support per the page's "
            "tables starts at 5.1 and includes unsigned types (UINT32/16/8, for which x < -Threshold needs "
            "care), although the feature-level history already lists SHRINK among the ops given integer "
            "support in 2.1. How Bias/Threshold are converted for integer tensors is not stated. In-place "
            "execution allowed: OutputTensor may alias InputTensor when binding."
        ),
    ),
    "ACTIVATION_CELU": Page(
        page="ns-directml-dml_activation_celu_operator_desc",
        introduced="3.0",
        function="f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "3.0": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha: typical default 1.0 (Alpha = 0 would divide by zero; no range documented). Single table, "
            "no heading (keyed by the introducing level). In-place execution allowed: OutputTensor may alias "
            "InputTensor when binding."
        ),
    ),
    "ACTIVATION_RELU_GRAD": Page(
        page="ns-directml-dml_activation_relu_grad_operator_desc",
        introduced="3.0",
        function="f(x, dy) = dy if x > 0 else 0 (x = InputTensor, dy = InputGradientTensor)",
        constraints=(
            "InputTensor, InputGradientTensor and OutputGradientTensor: same DataType, DimensionCount and Sizes.",
        ),
        support={
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "InputGradientTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputGradientTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
            "4.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16"),
                "InputGradientTensor": ("1-8", "FLOAT32 FLOAT16"),
                "OutputGradientTensor": ("1-8", "FLOAT32 FLOAT16"),
            },
            "5.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
                "InputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
                "OutputGradientTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8"),
            },
        },
        notes=(
            "Backward of ACTIVATION_RELU; strict x > 0, so the gradient at x == 0 is 0. The page's field "
            "list names the output 'OutputTensor' but its constraints and tables (and DirectML.h) call it "
            "OutputGradientTensor. The 4.0 table is identical to the 3.0 one, and the feature-level history "
            "says RELU_GRAD's max dimension count went from 4 to 8 only in 3.1, contradicting the 3.0 "
            "table's '1 to 8'. Signed integer types from 5.1. No in-place statement."
        ),
    ),
    "ACTIVATION_GELU": Page(
        page="ns-directml-dml_activation_gelu_operator_desc",
        introduced="5.1",
        function="f(x) = 0.5 * x * (1 + erf(x / sqrt(2)))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "5.1": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Exact (erf-based) GELU, not the tanh approximation; erf as in ELEMENT_WISE_ERF. No in-place "
            "statement. Needs DirectML 1.9+ (redistributable). Not on the documented fusable-activation "
            "list."
        ),
    ),
    "ACTIVATION_SWISH": Page(
        page="ns-directml-dml_activation_swish_operator_desc",
        introduced="6.2",
        function="f(x) = x * sigmoid(SigmoidInputScale * x)",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "6.2": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "SigmoidInputScale: typical default 1.0. In-place execution allowed: OutputTensor may alias "
            "InputTensor when binding. Needs DirectML 1.13+. The feature-level history (6.3) records a fix: "
            "SWISH gave wrong results for strided input tensors before that."
        ),
    ),
    "ACTIVATION_HARD_SWISH": Page(
        page="ns-directml-dml_activation_hard_swish_operator_desc",
        introduced="6.2",
        function="f(x) = x * max(0, min(Alpha * x + Beta, 1)) (x * HardSigmoid(x, Alpha, Beta))",
        constraints=("InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",),
        support={
            "6.2": {"InputTensor": ("1-8", "FLOAT32 FLOAT16"), "OutputTensor": ("1-8", "FLOAT32 FLOAT16")},
        },
        notes=(
            "Alpha: typical default 0.2; no default documented for Beta (HARD_SIGMOID's is 0.5; ONNX "
            "HardSwish uses Alpha = 1/6, Beta = 0.5). In-place execution allowed: OutputTensor may alias "
            "InputTensor when binding. Needs DirectML 1.13+."
        ),
    ),
}

# Activations accepted in the FusedActivation field (a nullable DML_OPERATOR_DESC) of CONVOLUTION, GEMM,
# BATCH_NORMALIZATION, MEAN_VARIANCE_NORMALIZATION / MEAN_VARIANCE_NORMALIZATION1 and ELEMENT_WISE_ADD1 (the
# pages list no others), keyed to the level from which each is fusable (its own introducing level: the fusion
# page gives no per-activation level).
# Rules: the fused activation's own InputTensor and OutputTensor must be set to NULL; only its attributes
# matter (that it then acts on the host op's result is our reading, not stated). "Any operators not in this list
# are not supported for fused activation." ELEMENT_WISE_ADD1 accepts a fused activation only when its output
# DataType is FLOAT16 or FLOAT32.
# SOFTMAX: not on the fusion page's list; the feature-level history says that from 6.1 GEMM's FusedActivation also
# accepts ACTIVATION_SOFTMAX and ACTIVATION_SOFTMAX1 (GEMM only; see FUSABLE_GEMM_ONLY). GELU, SWISH, HARD_SWISH,
# HARDMAX*, LOG_SOFTMAX*, PARAMETERIZED_RELU and RELU_GRAD are not documented as fusable, and no Microsoft page
# found documents ELEMENT_WISE_CLIP as fusable (from 6.0 or any level), so it is left out.
# Sources: windows-ai-docs docs/directml/dml-fused-activations.md ("Using fused operators to improve performance"),
# ns-directml-dml_element_wise_add1_operator_desc, ns-directml-dml_gemm_operator_desc,
# ns-directml-dml_convolution_operator_desc, ns-directml-dml_batch_normalization_operator_desc,
# ns-directml-dml_mean_variance_normalization(1)_operator_desc (FusedActivation field docs), and
# dml-feature-level-history (DML_FEATURE_LEVEL_6_1 entry, seen via learn.microsoft.com's localized copies).
FUSABLE: dict[str, str] = {
    "ACTIVATION_ELU": "1.0",
    "ACTIVATION_HARD_SIGMOID": "1.0",
    "ACTIVATION_IDENTITY": "1.0",
    "ACTIVATION_LEAKY_RELU": "1.0",
    "ACTIVATION_LINEAR": "1.0",
    "ACTIVATION_PARAMETRIC_SOFTPLUS": "1.0",
    "ACTIVATION_RELU": "1.0",
    "ACTIVATION_SCALED_ELU": "1.0",
    "ACTIVATION_SCALED_TANH": "1.0",
    "ACTIVATION_SIGMOID": "1.0",
    "ACTIVATION_SOFTPLUS": "1.0",
    "ACTIVATION_SOFTSIGN": "1.0",
    "ACTIVATION_TANH": "1.0",
    "ACTIVATION_THRESHOLDED_RELU": "1.0",
    "ACTIVATION_SHRINK": "2.0",
    "ACTIVATION_CELU": "3.0",
}

# Activations fusable into GEMM's FusedActivation only (not CONVOLUTION & co.), per the 6.1 feature-level history.
FUSABLE_GEMM_ONLY: dict[str, str] = {
    "ACTIVATION_SOFTMAX": "6.1",
    "ACTIVATION_SOFTMAX1": "6.1",
}
