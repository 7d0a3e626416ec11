"""The page of CAST."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_<name>_operator_desc.md, except
# MEAN_VARIANCE_NORMALIZATION2, which only exists in MicrosoftDocs/windows-ai-docs docs/directml/api/.
# support levels are listed ascending; the pages list them descending. Tables a page splits by reduce
# function are keyed "X.Y|<functions>".

_ALL11 = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"

PAGES: dict[str, Page] = {
    "CAST": Page(
        page="ns-directml-dml_cast_operator_desc",
        introduced="1.0",
        function="f(x) = (OutputTensor.DataType) x",
        constraints=(
            "InputTensor and OutputTensor: same DimensionCount and Sizes (DataTypes may differ: that is the point).",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT16 INT8 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT16 INT8 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
            "3.1": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("1-8", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
            "4.1": {"InputTensor": ("1-8", _ALL11), "OutputTensor": ("1-8", _ALL11)},
        },
        notes=(
            "The page does not define rounding, saturation/overflow or NaN handling for float->int or narrowing "
            "casts. Surprise: the 1.0 table has no INT32/UINT32 at all (only FLOAT32 FLOAT16 INT16 INT8 UINT16 "
            "UINT8); 32/64-bit integers arrive in 3.0, more than 4 dims in 3.1, FLOAT64 in 4.1. Some types may be "
            "unsupported on some hardware: check IDMLDevice::CheckFeatureSupport with "
            "DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT. (The page's InputTensor field text is a copy-paste of an "
            "output description.)"
        ),
    ),
}
