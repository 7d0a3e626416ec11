"""The pages of the training operators: batch normalization and LRN gradients, and ADAM_OPTIMIZER."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md. The pages separate data types with commas; here
# they are space-separated, in the page's order.

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "ADAM_OPTIMIZER": Page(
        page="ns-directml-dml_adam_optimizer_operator_desc",
        introduced="3.0",
        function=(
            "M' = Beta1 * M + (1 - Beta1) * G; V' = Beta2 * V + (1 - Beta2) * G * G; "
            "Alpha = sqrt(1 - Beta2^T) / (1 - Beta1^T); X' = X - LearningRate * Alpha * M' / (sqrt(V') + Epsilon); "
            "OutputParameters = X', OutputFirstMoment = M', OutputSecondMoment = V' (X = InputParameters, "
            "M = InputFirstMoment, V = InputSecondMoment, G = Gradient, T = TrainingStep)"
        ),
        constraints=(
            (
                "GradientTensor, InputFirstMomentTensor, InputParametersTensor, InputSecondMomentTensor, "
                "OutputFirstMomentTensor, OutputParametersTensor and OutputSecondMomentTensor: same DataType and "
                "Sizes."
            ),
            (
                "TrainingStepTensor: a scalar (every size 1); UINT32 per the field's description, or per the "
                "table and the same-DataType constraint the parameters' FLOAT32/FLOAT16."
            ),
            "Beta1 and Beta2 should be between 0.0 and 1.0 (typical 0.9 and 0.999).",
            "Every output may alias an input at binding (in-place update), except TrainingStepTensor.",
        ),
        support={
            "3.0": {
                "InputParametersTensor": ("4", _F),
                "InputFirstMomentTensor": ("4", _F),
                "InputSecondMomentTensor": ("4", _F),
                "GradientTensor": ("4", _F),
                "TrainingStepTensor": ("4", "FLOAT32 FLOAT16 UINT32"),
                "OutputParametersTensor": ("4", _F),
                "OutputFirstMomentTensor": ("4", _F),
                "OutputSecondMomentTensor": ("4", _F),
            },
        },
        notes=(
            "Single table, no heading. The page contradicts itself on TrainingStepTensor: its table row lists "
            "FLOAT32, FLOAT16 and the constraint list puts it in the same-DataType group as the parameters, while "
            "the field's own description says it must be UINT32 (an integer step count). Both readings are "
            "transcribed: UINT32, or the parameters' own float type. T is used as given (the page says it "
            "typically starts at 0 and the caller increments it): at T = 0 the formula's bias correction is "
            "0 / 0. Epsilon: typical 1e-8 or FLT_EPSILON. The operator does not update T. No examples."
        ),
    ),
    "LOCAL_RESPONSE_NORMALIZATION_GRAD": Page(
        page="ns-directml-dml_local_response_normalization_grad_operator_desc",
        introduced="3.1",
        function=(
            "OutputGradient = d(LOCAL_RESPONSE_NORMALIZATION(Input)) / d(Input) applied to InputGradient: "
            "dX[m] = dY[m] * D[m]^-Beta - 2 * Alpha * Beta / LocalSize * X[m] * sum over the centres i whose "
            "window holds m of dY[i] * X[i] * D[i]^(-Beta - 1), D = Bias + Alpha / LocalSize * windowed sum of X^2"
        ),
        constraints=(
            "InputGradientTensor, InputTensor and OutputGradientTensor: same DataType and Sizes.",
            "InputTensor is {BatchCount, ChannelCount, Height, Width}.",
            "LocalSize must be at least 1; the local region is clipped so that every element is within bounds.",
        ),
        support={
            "3.1": {"InputTensor": ("4", _F), "InputGradientTensor": ("4", _F), "OutputGradientTensor": ("4", _F)},
        },
        notes=(
            "Single table, no heading. The page states no formula: it is the gradient of "
            "LOCAL_RESPONSE_NORMALIZATION with the same CrossChannel, LocalSize, Alpha, Beta and Bias. Its "
            "LocalSize wording (CrossChannel TRUE: the width and height of the region; FALSE: the number of "
            "elements) contradicts its own CrossChannel field (TRUE sums across channels, FALSE across the spatial "
            "dimensions); the forward operator's window is the one differentiated (CrossChannel TRUE: LocalSize "
            "channels; FALSE: LocalSize x LocalSize of H and W). Recommended defaults: Alpha 0.0001, Beta 0.75, "
            "Bias 1. No examples."
        ),
    ),
    "BATCH_NORMALIZATION_GRAD": Page(
        page="ns-directml-dml_batch_normalization_grad_operator_desc",
        introduced="3.1",
        function=(
            "OutputGradient = InputGradient * Scale / sqrt(Variance + Epsilon); OutputScaleGradient = "
            "sum(InputGradient * (Input - Mean) / sqrt(Variance + Epsilon)); OutputBiasGradient = "
            "sum(InputGradient); sums over the dimensions where Mean, Scale and Variance have size 1"
        ),
        constraints=(
            (
                "InputGradientTensor, InputTensor, MeanTensor, OutputBiasGradientTensor, OutputGradientTensor, "
                "OutputScaleGradientTensor, ScaleTensor and VarianceTensor: same DataType and DimensionCount."
            ),
            (
                "MeanTensor, OutputBiasGradientTensor, OutputScaleGradientTensor, ScaleTensor and VarianceTensor: "
                "same Sizes."
            ),
            "InputGradientTensor, InputTensor and OutputGradientTensor: same Sizes.",
            "Each dim of Mean/Variance/Scale is either 1 (broadcast) or equal to InputTensor's size.",
        ),
        support={
            "3.1": {
                "InputTensor": ("1-8", _F),
                "InputGradientTensor": ("1-8", _F),
                "MeanTensor": ("1-8", _F),
                "VarianceTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "OutputGradientTensor": ("1-8", _F),
                "OutputScaleGradientTensor": ("1-8", _F),
                "OutputBiasGradientTensor": ("1-8", _F),
            },
        },
        notes=(
            "Single table, no heading. The gradient of inference batch normalization (BATCH_NORMALIZATION): Mean "
            "and Variance are constants, so OutputGradient has no terms through them. Epsilon is added to the "
            "variance inside the sqrt; DirectML's schema marks it optional (a FLOAT cannot be null). No examples."
        ),
    ),
    "BATCH_NORMALIZATION_TRAINING": Page(
        page="ns-directml-dml_batch_normalization_training_operator_desc",
        introduced="4.1",
        function=(
            "Output = FusedActivation(Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias + FusedAdd), "
            "Mean and Variance of Input over the dimensions where Scale and Bias have size 1, written to "
            "OutputMeanTensor and OutputVarianceTensor"
        ),
        constraints=(
            (
                "BiasTensor, FusedAddTensor, InputTensor, OutputMeanTensor, OutputTensor, OutputVarianceTensor and "
                "ScaleTensor: same DataType and DimensionCount."
            ),
            "BiasTensor, OutputMeanTensor, OutputVarianceTensor and ScaleTensor: same Sizes.",
            "FusedAddTensor, InputTensor and OutputTensor: same Sizes.",
            "Each dim of Scale/Bias is either 1 (broadcast) or equal to InputTensor's size.",
        ),
        support={
            "4.1": {
                "InputTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "BiasTensor": ("1-8", _F),
                "FusedAddTensor": ("1-8", _F),
                "OutputTensor": ("1-8", _F),
                "OutputMeanTensor": ("1-8", _F),
                "OutputVarianceTensor": ("1-8", _F),
            },
        },
        notes=(
            "FusedAddTensor optional (added before the activation); FusedActivation optional. The page does not "
            "say which variance: the population variance (divided by the element count, not count - 1) is what "
            "normalizes the batch and what is written. No examples."
        ),
    ),
    "BATCH_NORMALIZATION_TRAINING_GRAD": Page(
        page="ns-directml-dml_batch_normalization_training_grad_operator_desc",
        introduced="4.1",
        function=(
            "Coef0 = 1 / sqrt(Variance + Epsilon); Coef1 = InputGradient * (Input - mean(Input)); "
            "OutputGradient = Scale * Coef0 * (InputGradient - mean(InputGradient) - (Input - mean(Input)) * "
            "mean(Coef1) / (Variance + Epsilon)); OutputScaleGradient = sum(InputGradient * (Input - Mean) / "
            "sqrt(Variance + Epsilon)); OutputBiasGradient = sum(InputGradient); means and sums over the "
            "dimensions where Mean, Scale and Variance have size 1"
        ),
        constraints=(
            (
                "InputGradientTensor, InputTensor, MeanTensor, OutputBiasGradientTensor, OutputGradientTensor, "
                "OutputScaleGradientTensor, ScaleTensor and VarianceTensor: same DataType and DimensionCount."
            ),
            (
                "MeanTensor, OutputBiasGradientTensor, OutputScaleGradientTensor, ScaleTensor and VarianceTensor: "
                "same Sizes."
            ),
            "InputGradientTensor, InputTensor and OutputGradientTensor: same Sizes.",
            "Each dim of Mean/Variance/Scale is either 1 (broadcast) or equal to InputTensor's size.",
        ),
        support={
            "4.1": {
                "InputTensor": ("1-8", _F),
                "InputGradientTensor": ("1-8", _F),
                "MeanTensor": ("1-8", _F),
                "VarianceTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "OutputGradientTensor": ("1-8", _F),
                "OutputScaleGradientTensor": ("1-8", _F),
                "OutputBiasGradientTensor": ("1-8", _F),
            },
        },
        notes=(
            "The page's InputCentered line reads 'InputCentered = InputCentered - mean(InputCentered)', a typo for "
            "Input - mean(Input). As written, OutputGradient centres Input on its own mean over the reduced "
            "dimensions (mean(Input)) and takes Variance from VarianceTensor, while OutputScaleGradient uses "
            "MeanTensor; the two agree when Mean and Variance come from BATCH_NORMALIZATION_TRAINING of the same "
            "Input. No examples."
        ),
    ),
}
