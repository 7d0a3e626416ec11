"""The pages of BATCH, MEAN_VARIANCE (1/2), LP and LOCAL_RESPONSE_NORMALIZATION."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_<name>_operator_desc.md, except
# MEAN_VARIANCE_NORMALIZATION2, which only exists in MicrosoftDocs/windows-ai-docs docs/directml/api/.
# support levels are listed ascending; the pages list them descending. Tables a page splits by reduce
# function are keyed "X.Y|<functions>".

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "BATCH_NORMALIZATION": Page(
        page="ns-directml-dml_batch_normalization_operator_desc",
        introduced="1.0",
        function="Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias)",
        constraints=(
            (
                "BiasTensor, InputTensor, MeanTensor, OutputTensor, ScaleTensor and VarianceTensor: same DataType"
                " and DimensionCount."
            ),
            "InputTensor and OutputTensor: same Sizes.",
            "Each dim of Mean/Variance/Scale/Bias is either 1 (broadcast) or equal to InputTensor's size.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "MeanTensor": ("4", _F),
                "VarianceTensor": ("4", _F),
                "ScaleTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
            "3.1": {
                "InputTensor": ("1-8", _F),
                "MeanTensor": ("1-8", _F),
                "VarianceTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "BiasTensor": ("1-8", _F),
                "OutputTensor": ("1-8", _F),
            },
        },
        notes=(
            "Inference batch norm with supplied statistics; all of Mean/Variance/Scale/Bias are required (not "
            "optional). Spatial = FALSE used to forbid broadcasting Mean/Variance over H and W; deprecated in "
            "4.0 and has no effect. Epsilon is added to the variance inside the sqrt. FusedActivation optional. "
            "No examples."
        ),
    ),
    "MEAN_VARIANCE_NORMALIZATION": Page(
        page="ns-directml-dml_mean_variance_normalization_operator_desc",
        introduced="1.0",
        function=(
            "Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias), Mean/Variance "
            "computed over {H, W} (CrossChannel FALSE) or {C, H, W} (CrossChannel TRUE); NormalizeVariance FALSE: "
            "Output = FusedActivation(Scale * (Input - Mean) + Bias)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same Sizes.",
            "BiasTensor, InputTensor, OutputTensor and ScaleTensor: same DataType.",
            "Scale/Bias dims are {N, C, H, W} with any dim replaceable by 1 (broadcast).",
            "Below 5.2 ScaleTensor and BiasTensor come together (both or neither); from 5.2 either may be null.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "ScaleTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
        },
        notes=(
            "Single table, no feature-level heading. Mean and variance are computed from the input itself (per "
            "batch element; per channel unless CrossChannel). Epsilon: 0.00001 recommended. Absent Scale/Bias "
            "act as 1/0. FusedActivation optional. Superseded by MEAN_VARIANCE_NORMALIZATION1 (2.1): Axes {2,3} "
            "= CrossChannel FALSE, {1,2,3} = TRUE. No examples."
        ),
    ),
    "MEAN_VARIANCE_NORMALIZATION1": Page(
        page="ns-directml-dml_mean_variance_normalization1_operator_desc",
        introduced="2.1",
        function=(
            "Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias), Mean/Variance "
            "over Axes; NormalizeVariance FALSE: Output = FusedActivation(Scale * (Input - Mean) + Bias)"
        ),
        constraints=(
            "BiasTensor, InputTensor, OutputTensor and ScaleTensor: same DataType and DimensionCount.",
            (
                "Below 4.0 Scale/Bias are {N', C, H', W'} with the channel dim equal to the input's and N', H', W'"
                " equal or 1; from 4.0 any dim may be 1 (broadcast)."
            ),
            "Below 5.2 ScaleTensor and BiasTensor come together (both or neither); from 5.2 either may be null.",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", _F),
                "ScaleTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
            "3.1": {
                "InputTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "BiasTensor": ("1-8", _F),
                "OutputTensor": ("1-8", _F),
            },
        },
        notes=(
            "Axes (AxisCount entries) are the dims reduced for Mean and Variance; superset of "
            "MEAN_VARIANCE_NORMALIZATION: Axes {2,3} = CrossChannel FALSE, {1,2,3} = CrossChannel TRUE. The page "
            "states no range/uniqueness rule for Axes. Output Sizes are the input's. Epsilon: 0.00001 "
            "recommended. FusedActivation optional. No examples."
        ),
    ),
    "MEAN_VARIANCE_NORMALIZATION2": Page(
        page="ns-directml-dml_mean_variance_normalization2_operator_desc",
        introduced="6.3",
        function=(
            "Output = FusedActivation(Scale * (Input - (UseMean ? Mean : 0)) / (UseVariance ? sqrt(Variance + "
            "Epsilon) : 1) + Bias), Mean/Variance over Axes (semantics of UseMean/UseVariance inferred: the page "
            "says TBD)"
        ),
        constraints=(
            "BiasTensor, InputTensor, OutputTensor and ScaleTensor: same DataType and DimensionCount.",
            (
                "Below 4.0 Scale/Bias are {N', C, H', W'} with the channel dim equal to the input's and N', H', W'"
                " equal or 1; from 4.0 any dim may be 1 (broadcast)."
            ),
            "Below 5.2 ScaleTensor and BiasTensor come together (both or neither); from 5.2 either may be null.",
        ),
        support={
            "6.3": {
                "InputTensor": ("1-8", _F),
                "ScaleTensor": ("1-8", _F),
                "BiasTensor": ("1-8", _F),
                "OutputTensor": ("1-8", _F),
            },
        },
        notes=(
            "Only in MicrosoftDocs/windows-ai-docs (docs/directml/api/), not in sdk-api. The page is a stub: "
            "description, UseMean and UseVariance are all 'TBD'; fields = MEAN_VARIANCE_NORMALIZATION1's with "
            "NormalizeVariance replaced by UseMean + UseVariance (BOOLs). Requires the DirectML redistributable "
            "1.15.0+. Single table, no heading (keyed with the introducing level 6.3). Epsilon: 0.00001 "
            "recommended. FusedActivation optional. No examples."
        ),
    ),
    "LP_NORMALIZATION": Page(
        page="ns-directml-dml_lp_normalization_operator_desc",
        introduced="1.0",
        function="Output = Input / (sum(|Input|^P along Axis))^(1/P), P in {1, 2}; Epsilon guards division by zero",
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "P must be 1 or 2.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "3.1": {"InputTensor": ("1-8", _F), "OutputTensor": ("1-8", _F)},
        },
        notes=(
            "Normalizes each 1-D slice along the single Axis (range not stated; presumably < DimensionCount). "
            "The page does not say exactly how Epsilon enters (e.g. max(norm, Epsilon) vs norm + Epsilon); "
            "0.00001 recommended. No examples."
        ),
    ),
    "LOCAL_RESPONSE_NORMALIZATION": Page(
        page="ns-directml-dml_local_response_normalization_operator_desc",
        introduced="1.0",
        function="Output = Input / (Bias + (Alpha / LocalSize) * sum(Input^2 over the local region))^Beta",
        constraints=(
            "InputTensor and OutputTensor: same DataType and Sizes.",
            "LocalSize must be >= 1.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
        },
        notes=(
            "Single table, no heading. Input {N, C, H, W}, 4D only at every level. LocalSize = number of elements "
            "summed per dimension: Width, Height, and also Channel when CrossChannel is TRUE (the page's wording; "
            "it does not pin down the window alignment/centering or whether CrossChannel TRUE excludes the "
            "spatial window). Recommended defaults: Alpha 0.0001, Beta 0.75, Bias 1. No examples."
        ),
    ),
}
