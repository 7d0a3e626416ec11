"""The pages of CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_<name>_operator_desc.md, except
# MEAN_VARIANCE_NORMALIZATION2, which only exists in MicrosoftDocs/windows-ai-docs docs/directml/api/.
# support levels are listed ascending; the pages list them descending. Tables a page splits by reduce
# function are keyed "X.Y|<functions>".

PAGES: dict[str, Page] = {
    "CUMULATIVE_SUMMATION": Page(
        page="ns-directml-dml_cumulative_summation_operator_desc",
        introduced="2.1",
        function=(
            "INCREASING: y[i] = sum(x[0..i]) (HasExclusiveSum: sum(x[0..i-1]), 0 first); DECREASING: y[i] = "
            "sum(x[i..n-1]) (exclusive: sum(x[i+1..n-1])), along Axis"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "Axis must be < InputTensor.DimensionCount.",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
        },
        notes=(
            "In-place execution supported (OutputTensor may alias InputTensor). Exclusive: the tally is written "
            "before adding the current element, so the grand total is never written. Examples, input {1,1,3,4} "
            "FLOAT32 [[[[2,1,3,5],[3,8,7,3],[9,6,2,4]]]]: (1) Axis 3, INCREASING, inclusive -> "
            "[[2,3,6,11],[3,11,18,21],[9,15,17,21]]. (2) Axis 3, INCREASING, exclusive -> "
            "[[0,2,3,6],[0,3,11,18],[0,9,15,17]]. (3) Axis 3, DECREASING, inclusive -> "
            "[[11,9,8,5],[21,18,10,3],[21,12,6,4]]. (4) Axis 2, INCREASING, inclusive -> "
            "[[2,1,3,5],[5,9,10,8],[14,15,12,12]]. Note: more than 4 dims only from 4.0 (not 3.0)."
        ),
    ),
    "CUMULATIVE_PRODUCT": Page(
        page="ns-directml-dml_cumulative_product_operator_desc",
        introduced="3.1",
        function=(
            "INCREASING: y[i] = prod(x[0..i]) (HasExclusiveProduct: prod(x[0..i-1]), 1 first); DECREASING: y[i] "
            "= prod(x[i..n-1]) (exclusive: prod(x[i+1..n-1])), along Axis"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType, DimensionCount and Sizes.",
            "Axis must be < InputTensor.DimensionCount.",
        ),
        support={
            "3.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "4.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 UINT32"),
            },
            "5.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
            },
        },
        notes=(
            "In-place execution supported (OutputTensor may alias InputTensor). Exclusive: the tally is written "
            "before multiplying in the current element (first output 1), the full product is never written. "
            "Examples, input {1,1,3,4} FLOAT32 [[[[2,1,3,5],[3,8,7,3],[9,6,2,4]]]]: (1) Axis 3, INCREASING, "
            "inclusive -> [[2,2,6,30],[3,24,168,504],[9,54,108,432]]. (2) Axis 3, INCREASING, exclusive -> "
            "[[1,2,2,6],[1,3,24,168],[1,9,54,108]]. (3) Axis 3, DECREASING, inclusive -> "
            "[[30,15,15,5],[504,168,21,3],[432,48,8,4]]. (4) Axis 2, INCREASING, inclusive -> "
            "[[2,1,3,5],[6,8,21,15],[54,48,42,60]]. (The page's InputTensor text also carries a stray sentence "
            "copied from a batch-normalization grad page.)"
        ),
    ),
}
