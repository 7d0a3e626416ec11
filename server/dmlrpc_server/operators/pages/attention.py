"""The pages of MULTIHEAD_ATTENTION and MULTIHEAD_ATTENTION1."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/windows-ai-docs
# docs/directml/api/ (these pages live only there). Support levels are listed ascending; the pages list them
# descending.

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "MULTIHEAD_ATTENTION": Page(
        page="ns-directml-dml_multihead_attention_operator_desc",
        introduced="6.1",
        function=(
            "per batch b and head h: [Q, K, V += Bias] -> S = (Q_h @ K_h^T) * Scale [+ RelativePositionBias[b, h]] "
            "[+ MaskFilterValue where MaskTensor masks] -> P = softmax over the key axis -> Output_h = P @ V_h; "
            "K and V are PastKey/PastValue concatenated with the new keys/values along the sequence"
        ),
        constraints=(
            "Exactly one query, key and value, each given alone or stacked: Query (or StackedQueryKey or "
            "StackedQueryKeyValue), Key (or StackedQueryKey, StackedKeyValue or StackedQueryKeyValue), Value (or "
            "StackedKeyValue or StackedQueryKeyValue); a stacked tensor excludes the separate ones it holds.",
            "QueryTensor: [batchSize, sequenceLength, hiddenSize], hiddenSize = HeadCount * headSize; KeyTensor: "
            "[batchSize, kvSequenceLength, hiddenSize]; ValueTensor: [batchSize, kvSequenceLength, "
            "valueHiddenSize], valueHiddenSize = HeadCount * valueHeadSize; 4 or 5 dimensions with leading 1s.",
            "StackedQueryKeyTensor: [batchSize, sequenceLength, HeadCount, 2, headSize]; StackedKeyValueTensor: "
            "[batchSize, kvSequenceLength, HeadCount, 2, headSize]; StackedQueryKeyValueTensor: [batchSize, "
            "sequenceLength, HeadCount, 3, headSize] (stacked on the fourth dimension).",
            "BiasTensor: [hiddenSize + hiddenSize + valueHiddenSize], added to query, key and value; 2 to 5 "
            "dimensions with leading 1s.",
            "MaskTensor (INT32): per MaskType (see notes); applied after RelativePositionBias.",
            "RelativePositionBiasTensor: added to the scaled QxK product, [batchSize, HeadCount, sequenceLength, "
            "totalSequenceLength].",
            "PastKeyTensor, PastValueTensor: [batchSize, HeadCount, pastSequenceLength, headSize], concatenated "
            "before the new keys/values.",
            "OutputTensor: [batchSize, sequenceLength, valueHiddenSize].",
            "OutputPresentKeyTensor, OutputPresentValueTensor: [batchSize, HeadCount, pastSequenceLength + "
            "kvSequenceLength, headSize] (the concatenated keys/values).",
            "Every tensor but MaskTensor: one DataType.",
        ),
        support={
            "6.1": {
                "QueryTensor": ("3-5", _F),
                "KeyTensor": ("3-5", _F),
                "ValueTensor": ("3-5", _F),
                "StackedQueryKeyTensor": ("5", _F),
                "StackedKeyValueTensor": ("5", _F),
                "StackedQueryKeyValueTensor": ("5", _F),
                "BiasTensor": ("1-5", _F),
                "MaskTensor": ("1-5", "INT32"),
                "RelativePositionBiasTensor": ("4-5", _F),
                "PastKeyTensor": ("4-5", _F),
                "PastValueTensor": ("4-5", _F),
                "OutputTensor": ("3-5", _F),
                "OutputPresentKeyTensor": ("4-5", _F),
                "OutputPresentValueTensor": ("4-5", _F),
            },
        },
        notes=(
            "Scale is usually 1/sqrt(headSize); MaskFilterValue usually -10000. MaskType: BOOLEAN, a mask "
            "broadcast to [batchSize, HeadCount, sequenceLength, totalSequenceLength] whose 0s add "
            "MaskFilterValue; KEY_SEQUENCE_LENGTH, [1, batchSize] key lengths, keys at or after the length "
            "masked; KEY_SEQUENCE_END_START, [2, batchSize] end (exclusive) and start (inclusive) of the unmasked "
            "keys; KEY_QUERY_SEQUENCE_LENGTH_START_END, [batchSize * 3 + 2]: key lengths, query starts (and a "
            "final query end), key starts (and a final key end) of a packed batch. A masked score gets "
            "MaskFilterValue added (the page also says 'set to'; added is what the mask types' ONNX Runtime "
            "counterparts do), so a row whose keys are all masked is the softmax of the unmasked scores shifted "
            "alike: uniform weights for a row of equal scores, not zeros. The stacked layouts' pictures "
            "(MHA_Stacked*.png) show per-head interleaving: [b, s, h, k, d] holds head h's k-th tensor."
        ),
    ),
    "MULTIHEAD_ATTENTION1": Page(
        page="ns-directml-dml_multihead_attention1_operator_desc",
        introduced="6.3",
        function=(
            "MULTIHEAD_ATTENTION with QueryHeadCount query heads and KeyValueHeadCount key/value heads (grouped "
            "query attention: query head h reads key/value head h / (QueryHeadCount / KeyValueHeadCount))"
        ),
        constraints=(
            "As MULTIHEAD_ATTENTION, with hiddenSize = QueryHeadCount * headSize for the query and "
            "KeyValueHeadCount * headSize (valueHeadSize) for key and value; stacked tensors hold one head count "
            "for every part, so they need QueryHeadCount == KeyValueHeadCount.",
            "QueryHeadCount must be a multiple of KeyValueHeadCount.",
            "PastSequenceLengthsTensor: optional, one per batch (see notes).",
            "Every tensor but MaskTensor: one DataType (PastSequenceLengthsTensor included, per the page).",
        ),
        support={
            "6.3": {
                "QueryTensor": ("3-5", _F),
                "KeyTensor": ("3-5", _F),
                "ValueTensor": ("3-5", _F),
                "StackedQueryKeyTensor": ("5", _F),
                "StackedKeyValueTensor": ("5", _F),
                "StackedQueryKeyValueTensor": ("5", _F),
                "BiasTensor": ("1-5", _F),
                "MaskTensor": ("1-5", "INT32"),
                "RelativePositionBiasTensor": ("4-5", _F),
                "PastKeyTensor": ("4-5", _F),
                "PastValueTensor": ("4-5", _F),
                "PastSequenceLengthsTensor": ("1-5", _F),
                "OutputTensor": ("3-5", _F),
                "OutputPresentKeyTensor": ("4-5", _F),
                "OutputPresentValueTensor": ("4-5", _F),
            },
        },
        notes=(
            "The page's description, PastSequenceLengthsTensor, QueryHeadCount and KeyValueHeadCount are 'TBD'. "
            "The head counts are read as grouped-query attention (ONNX Runtime's GroupQueryAttention, which its "
            "DirectML provider maps onto this operator). PastSequenceLengthsTensor has no documented meaning; this "
            "server refuses it (UNIMPLEMENTED) rather than guess. Everything else as MULTIHEAD_ATTENTION."
        ),
    ),
}
