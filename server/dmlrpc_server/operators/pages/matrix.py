"""The pages of GEMM and MATRIX_MULTIPLY_INTEGER."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_<name>_operator_desc.md, except
# MEAN_VARIANCE_NORMALIZATION2, which only exists in MicrosoftDocs/windows-ai-docs docs/directml/api/.
# support levels are listed ascending; the pages list them descending. Tables a page splits by reduce
# function are keyed "X.Y|<functions>".

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "GEMM": Page(
        page="ns-directml-dml_gemm_operator_desc",
        introduced="1.0",
        function="Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C); C = 0 when CTensor is null",
        constraints=(
            "ATensor, BTensor, CTensor and OutputTensor: same DataType and DimensionCount.",
            "CTensor and OutputTensor: same Sizes.",
            (
                "A is {Batch, Channel, M, K} ({.., K, M} if TransA = TRANSPOSE); B is {Batch, Channel, K, N} ({..,"
                " N, K} if TransB = TRANSPOSE); C and Output are {Batch, Channel, M, N}."
            ),
        ),
        support={
            "1.0": {
                "ATensor": ("4", _F),
                "BTensor": ("4", _F),
                "CTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
            "4.0": {
                "ATensor": ("2-4", _F),
                "BTensor": ("2-4", _F),
                "CTensor": ("2-4", _F),
                "OutputTensor": ("2-4", _F),
            },
        },
        notes=(
            "BatchCount * ChannelCount independent {M,K} x {K,N} products; from 4.0 the Batch/Channel dims are "
            "optional (2-4 dims). CTensor optional (values 0 when absent; Beta ignored then); C has the output's "
            "sizes per the constraints (the page does not describe broadcasting of C beyond tensor strides). "
            "TransA/TransB: DML_MATRIX_TRANSFORM_NONE or _TRANSPOSE (transposes the last two dims). "
            "FusedActivation optional, applied last. No worked examples on the page."
        ),
    ),
    "MATRIX_MULTIPLY_INTEGER": Page(
        page="ns-directml-dml_matrix_multiply_integer_operator_desc",
        introduced="2.1",
        function="Output[b,c,m,n] = sum_k (A[b,c,m,k] - AZeroPoint) * (B[b,c,k,n] - BZeroPoint), in INT32",
        constraints=(
            "ATensor, BTensor and OutputTensor: same DimensionCount.",
            "BTensor and BZeroPointTensor: same DataType.",
            "ATensor and AZeroPointTensor: same DataType.",
            "OutputTensor is INT32 whatever the INT8/UINT8 input types.",
            (
                "AZeroPointTensor: {1,1,1,1} (per tensor) or {1,1,M,1} (per row); BZeroPointTensor: {1,1,1,1} (per"
                " tensor) or {1,1,1,N} (per column)."
            ),
        ),
        support={
            "2.1": {
                "ATensor": ("4", "INT8 UINT8"),
                "AZeroPointTensor": ("4", "INT8 UINT8"),
                "BTensor": ("4", "INT8 UINT8"),
                "BZeroPointTensor": ("4", "INT8 UINT8"),
                "OutputTensor": ("4", "INT32"),
            },
            "4.0": {
                "ATensor": ("2-4", "INT8 UINT8"),
                "AZeroPointTensor": ("1-4", "INT8 UINT8"),
                "BTensor": ("2-4", "INT8 UINT8"),
                "BZeroPointTensor": ("2-4", "INT8 UINT8"),
                "OutputTensor": ("2-4", "INT32"),
            },
            "5.2": {
                "ATensor": ("2-4", "INT8 UINT8"),
                "AZeroPointTensor": ("1-4", "INT8 UINT8"),
                "BTensor": ("2-4", "INT8 UINT8"),
                "BZeroPointTensor": ("1-4", "INT8 UINT8"),
                "OutputTensor": ("2-4", "INT32"),
            },
        },
        notes=(
            "A is {Batch, Channel, M, K}, B {Batch, Channel, K, N}, Output {Batch, Channel, M, N}; no transpose "
            "options. Zero points optional (treated as 0 when absent); A and B may differ in signedness (each "
            "INT8 or UINT8) as long as each zero point matches its tensor. From 4.0 Batch/Channel dims optional; "
            "5.2 only relaxes BZeroPointTensor to 1-4 dims. Page dims columns: AZeroPoint { [1], [1], "
            "AZeroPointCount, [1] }, BZeroPoint { [1], [1], 1, BZeroPointCount }. No examples."
        ),
    ),
}
