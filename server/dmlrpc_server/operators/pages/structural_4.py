"""DirectML reference pages, structural part 4: sliding-block, random-generator, ROI-align and attention operators."""

from __future__ import annotations

from dmlrpc_server.operators.pages import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md, and MicrosoftDocs/windows-ai-docs
# docs/directml/api/ for the pages that live only there (FOLD, UNFOLD, ROI_ALIGN_GRAD, MULTIHEAD_ATTENTION,
# MULTIHEAD_ATTENTION1). Support levels are listed ascending; the pages list them descending.

_F = "FLOAT32 FLOAT16"

PAGES: dict[str, Page] = {
    "RANDOM_GENERATOR": Page(
        page="ns-directml-dml_random_generator_operator_desc",
        introduced="3.0",
        function=(
            "out[4*i + j] = Philox4x32-10(counter + i, key)[j] for 0 <= i < ceil(N / 4), N = OutputTensor's "
            "element count; OutputState = InputState with the 128-bit counter advanced by ceil(N / 4)"
        ),
        constraints=(
            "InputStateTensor and OutputStateTensor: same Sizes.",
            "InputStateTensor (PHILOX_4X32_10): UINT32, sizes {1,1,1,6}: elements 0-3 the 128-bit counter, "
            "elements 4-5 the 64-bit key.",
            "OutputTensor may have any sizes.",
            "Type: only DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10 is valid.",
        ),
        support={
            "3.0": {
                "InputStateTensor": ("4", "UINT32"),
                "OutputTensor": ("4", "UINT32"),
                "OutputStateTensor": ("4", "UINT32"),
            },
        },
        notes=(
            "Deterministic and pure: the output depends only on InputStateTensor; not cryptographically secure. "
            "Philox 4x32-10 as in Salmon et al., 'Parallel random numbers: as easy as 1, 2, 3' (SC11): ten "
            "rounds of (hi0, lo0) = mulhilo(0xD2511F53, c0), (hi1, lo1) = mulhilo(0xCD9E8D57, c2), "
            "c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0), the key bumped by (0x9E3779B9, 0xBB67AE85) mod 2^32 "
            "between rounds. The page draws the counter as elements 0-3 and the key as elements 4-5 without "
            "naming the word order; as the 128-bit value of the page's increment example (a multi-word carry), "
            "element 0 is read as the least significant counter word and element 4 as key word k0 (the "
            "little-endian memory order of the words). The remark: the counter should be incremented by "
            "ceil(outputSize / 4) per execution; with OutputStateTensor supplied the operator writes the "
            "incremented state (the key unchanged). Example: counter 0x48656c6c'6f46726f'6d536561'74746c65 and "
            "OutputTensor {3,3,20,7219} -> increment 324,855 -> 0x48656c6c'6f46726f'6d536561'746f776e. "
            "NOTE: that result is the counter minus 324,855 (0x4F4F7); the increment the text describes gives "
            "0x48656c6c'6f46726f'6d536561'7479615c, which is what this server writes."
        ),
    ),
    "ROI_ALIGN": Page(
        page="ns-directml-dml_roi_align_operator_desc",
        introduced="3.0",
        function=(
            "ROI_ALIGN1 with InputPixelOffset = 0.5, OutputPixelOffset = -0.5 and AlignRegionsToCorners = FALSE "
            "(pixels treated as centred, per the ROI_ALIGN1 page): out[r, c, y, x] = the AVERAGE or MAX of the "
            "interpolated input samples of output element (y, x) of region r"
        ),
        constraints=(
            "InputTensor, OutputTensor and ROITensor: same DataType.",
            "InputTensor: {BatchCount, ChannelCount, InputHeight, InputWidth}.",
            "ROITensor: {NumROIs, 4}, {1, NumROIs, 4} or {1, 1, NumROIs, 4}; each ROI is [x1, y1, x2, y2].",
            "BatchIndicesTensor: {NumROIs}, {1, NumROIs}, {1, 1, NumROIs} or {1, 1, 1, NumROIs}; values outside "
            "[0, BatchCount) are undefined.",
            "OutputTensor: {NumROIs, ChannelCount, OutputHeight, OutputWidth}.",
            "ReductionFunction: DML_REDUCE_FUNCTION_AVERAGE or DML_REDUCE_FUNCTION_MAX.",
            "InterpolationMode: NEAREST_NEIGHBOR or LINEAR (bilinear over 4 input elements).",
            "Samples per output element: ScaledCropSize / OutputSize clamped to [MinimumSamplesPerOutput, "
            "MaximumSamplesPerOutput].",
        ),
        support={
            "3.0": {
                "InputTensor": ("4", _F),
                "ROITensor": ("2-4", _F),
                "BatchIndicesTensor": ("1-4", "UINT32"),
                "OutputTensor": ("4", _F),
            },
        },
        notes=(
            "Mask R-CNN's ROI align. SpatialScaleX/Y multiply the ROI coordinates (e.g. the input width/height "
            "for normalised ROIs). OutOfBoundsInputValue is read where the scaled ROIs fall outside the input. "
            "The page gives no algorithm of its own; ROI_ALIGN1's page defines it and says ROI_ALIGN is its "
            "behaviour with centred pixels (offsets 0.5 / -0.5) and no corner alignment. See ROI_ALIGN1's notes "
            "for how the pseudo-code's gaps are read."
        ),
    ),
    "ROI_ALIGN1": Page(
        page="ns-directml-dml_roi_align1_operator_desc",
        introduced="4.0",
        function=(
            "per region r: X1 = ROI[r,0]*SpatialScaleX, Y1 = ROI[r,1]*SpatialScaleY, X2, Y2 likewise; "
            "SizeX = X2 - X1; Sx = clamp(SizeX / OutputWidth, MinimumSamplesPerOutput, MaximumSamplesPerOutput); "
            "scaleX = SizeX / (OutputWidth * Sx); out[r, c, y, x] = reduce over sampleX in [x*Sx, x*Sx + Sx), "
            "sampleY likewise, of interpolate2D(Input[BatchIndices[r], c], (sampleX - OutputPixelOffset) * scaleX "
            "+ X1 - InputPixelOffset, (sampleY - OutputPixelOffset) * scaleY + Y1 - InputPixelOffset)"
        ),
        constraints=(
            "InputTensor, OutputTensor and ROITensor: same DataType.",
            "InputTensor: {BatchCount, ChannelCount, InputHeight, InputWidth}.",
            "ROITensor: {NumROIs, 4}, {1, NumROIs, 4} or {1, 1, NumROIs, 4}; each ROI is [x1, y1, x2, y2]; "
            "regions may be empty (every sample from one coordinate) or inverted (x2 < x1: mirrored).",
            "BatchIndicesTensor: {NumROIs}, {1, NumROIs}, {1, 1, NumROIs} or {1, 1, 1, NumROIs}; values outside "
            "[0, BatchCount) are undefined.",
            "OutputTensor: {NumROIs, ChannelCount, OutputHeight, OutputWidth}.",
            "ReductionFunction: DML_REDUCE_FUNCTION_AVERAGE or DML_REDUCE_FUNCTION_MAX.",
            "InterpolationMode: NEAREST_NEIGHBOR or LINEAR.",
        ),
        support={
            "4.0": {
                "InputTensor": ("4", _F),
                "ROITensor": ("2-4", _F),
                "BatchIndicesTensor": ("1-4", "UINT32"),
                "OutputTensor": ("4", _F),
            },
        },
        notes=(
            "InputPixelOffset: offset from (0,0) of the input coordinates to the top-left pixel centre, typically "
            "0 or 0.5 (0.5 = ROI_ALIGN). OutputPixelOffset: offset from the top-left pixel centre to (0,0) of the "
            "output coordinates, typically 0 or -0.5 (-0.5 = ROI_ALIGN). AlignRegionsToCorners stretches the "
            "sample points to the region's very corners instead of spreading them evenly within it (FALSE = "
            "ROI_ALIGN). The page's pseudo-code has gaps, read here as follows (stated in the operator module "
            "too): the sample count per output element is an integer, ceil(ScaledCropSize / OutputSize) clamped "
            "to [Minimum, Maximum]SamplesPerOutput (Mask R-CNN's adaptive count; an inverted region clamps to the "
            "minimum); the sample loop runs over that many samples (the pseudo-code's '<=' would take one more); "
            "outputSampleToInputScaleY uses the Y sizes (the pseudo-code repeats the X ones); with "
            "AlignRegionsToCorners the scale is SizeX / (OutputWidth * Sx - 1), so the samples span X1..X2. "
            "interpolate2D reads OutOfBoundsInputValue for a sample outside [-1, InputWidth] x [-1, InputHeight] "
            "(the bounds of ONNX RoiAlign, which ONNX Runtime's DirectML provider maps onto this operator); "
            "inside, the coordinate is clamped to [0, size - 1] and LINEAR weighs the 2x2 neighbours, "
            "NEAREST_NEIGHBOR takes floor(coordinate + 0.5). MAX is the maximum of the interpolated samples. "
            "The page's example is an image (roi_align_examples.png) without numbers."
        ),
    ),
    "FOLD": Page(
        page="ns-directml-dml_fold_operator_desc",
        introduced="6.4",
        function=(
            "out[n, c, p] = sum of in[n, c*prod(WindowSizes) + k, b] over every window offset k and block b whose "
            "element lands on spatial position p, i.e. p[d] = b[d]*Strides[d] - StartPadding[d] + "
            "k[d]*Dilations[d] (col2im: summing the overlapping values of sliding blocks)"
        ),
        constraints=(
            "BlocksPerDimension[d] = (OutputSize[d] + StartPadding[d] + EndPadding[d] - Dilations[d] * "
            "(WindowSizes[d] - 1) - 1) / Strides[d] + 1; BlockCount = prod(BlocksPerDimension).",
            "InputTensor: {N, C*prod(WindowSizes), BlockCount}; OutputTensor: {N, C, OutputSize...}.",
            "DimensionCount (the spatial dimensions) must be <= 6.",
            "InputTensor and OutputTensor must have the same DimensionCount (see notes).",
        ),
        support={
            "6.4": {"InputTensor": ("3-8", _F), "OutputTensor": ("3-8", _F)},
        },
        notes=(
            "Page lives only in MicrosoftDocs/windows-ai-docs (DirectML 1.15.1+ redistributable). Its tensor-support "
            "table leaves the data types blank; FLOAT32 and FLOAT16 are the types ONNX Runtime's DirectML "
            "provider folds through this operator (Col2Im), so those are the ones taken here. The 'same "
            "DimensionCount' constraint contradicts the page's own examples (a 3-D input folds into a 4-D "
            "output): the input is 3-D and the output has 2 + DimensionCount dimensions. Window offsets are "
            "row-major over the spatial dimensions and channel-major in the input's dimension 1 (as in the "
            "examples and UNFOLD). Example 1: input FLOAT32 {1,9,4} = 0..35 (row-major), WindowSizes {3,3}, "
            "Strides {1,1}, Dilations {1,1}, no padding -> {1,1,4,4} = [[0,5,13,9],[14,38,54,32],[38,86,102,56],"
            "[26,57,65,35]]. Example 2: input {1,9,8} = 0..71, StartPadding {1,0}, EndPadding {1,0} -> {1,1,4,4} = "
            "[[26,70,102,60],[78,183,231,129],[84,195,243,135],[82,182,214,116]]. Example 3: input {1,18,8} = "
            "0..143, same attributes -> {1,2,4,4}: channel 0 as example 2, channel 1 = [[170,358,390,204],"
            "[294,615,663,345],[300,627,675,351],[226,470,502,260]]."
        ),
    ),
    "UNFOLD": Page(
        page="ns-directml-dml_unfold_operator_desc",
        introduced="6.4",
        function=(
            "out[n, c*prod(WindowSizes) + k, b] = in[n, c, b[d]*Strides[d] - StartPadding[d] + k[d]*Dilations[d] "
            "for each d], 0 where that position lies in the padding (im2col)"
        ),
        constraints=(
            "BlocksPerDimension[d] = (SpatialSize[d] + StartPadding[d] + EndPadding[d] - Dilations[d] * "
            "(WindowSizes[d] - 1) - 1) / Strides[d] + 1; BlockCount = prod(BlocksPerDimension).",
            "InputTensor: {N, C, SpatialSize...}; OutputTensor: {N, C*prod(WindowSizes), BlockCount}.",
            "DimensionCount must be in [1, 6].",
            "InputTensor and OutputTensor must have the same DimensionCount (see notes).",
        ),
        support={
            "6.4": {"InputTensor": ("3-8", _F), "OutputTensor": ("3-8", _F)},
        },
        notes=(
            "Page lives only in MicrosoftDocs/windows-ai-docs (DirectML 1.15.1+ redistributable). Its tensor-support "
            "table leaves the data types blank; FLOAT32 and FLOAT16 are taken, as for FOLD. The 'same "
            "DimensionCount' constraint contradicts the page's examples (a 4-D input unfolds into a 3-D output): "
            "the output is 3-D and the input has 2 + DimensionCount dimensions. Blocks are numbered row-major "
            "over the spatial dimensions (the last dimension of the output). Example 1: input FLOAT32 {1,1,5,5} "
            "= 0..24, WindowSizes {3,3}, Strides {1,1}, Dilations {1,1}, no padding -> {1,9,9}, row k = the "
            "window offset (k // 3, k % 3): row 0 = [0,1,2,5,6,7,10,11,12], row 8 = [12,13,14,17,18,19,22,23,24]. "
            "Example 2: StartPadding {1,0}, EndPadding {1,0} -> {1,9,15}: row 0 = [0,0,0,0,1,2,5,6,7,10,11,12,"
            "15,16,17], row 8 = [7,8,9,12,13,14,17,18,19,22,23,24,0,0,0]."
        ),
    ),
    "ROI_ALIGN_GRAD": Page(
        page="ns-directml-dml_roi_align_grad_operator_desc",
        introduced="4.1",
        function=(
            "the backward pass of ROI_ALIGN1 with the same attributes: OutputGradient[BatchIndices[r], c] += the "
            "transpose of region r's sampling applied to InputGradient[r, c] (every input element receives dY "
            "times the weight with which it entered each output element); OutputROIGradient = the gradient with "
            "respect to the ROI coordinates"
        ),
        constraints=(
            "InputGradientTensor, InputTensor, OutputGradientTensor, OutputROIGradientTensor and ROITensor: same "
            "DataType.",
            "InputGradientTensor: the sizes of the forward's output, {NumROIs, ChannelCount, OutputHeight, "
            "OutputWidth}.",
            "InputTensor (optional): the forward's input {BatchCount, ChannelCount, InputHeight, InputWidth}; "
            "required when OutputROIGradientTensor is supplied or ReductionFunction is MAX.",
            "ROITensor: {NumROIs, 4}, {1, NumROIs, 4} or {1, 1, NumROIs, 4}; BatchIndicesTensor: {NumROIs} with "
            "leading 1s, values in [0, BatchCount).",
            "OutputGradientTensor (optional): the sizes of the forward's input.",
            "OutputROIGradientTensor (optional): ROITensor's sizes.",
            "At least one of OutputGradientTensor and OutputROIGradientTensor must be supplied.",
            "ReductionFunction, InterpolationMode, SpatialScaleX/Y, Input/OutputPixelOffset, Minimum/Maximum"
            "SamplesPerOutput, AlignRegionsToCorners: as ROI_ALIGN1's.",
        ),
        support={
            "4.1": {
                "InputTensor": ("4", _F),
                "InputGradientTensor": ("4", _F),
                "ROITensor": ("2-4", _F),
                "BatchIndicesTensor": ("1-4", "UINT32"),
                "OutputGradientTensor": ("4", _F),
                "OutputROIGradientTensor": ("2-4", _F),
            },
        },
        notes=(
            "The page's example: a nearest-neighbour ROI_ALIGN1 of four 2x2 regions of a 4x4 input to 1x3 outputs "
            "reads input columns 0, 0, 1 of row 0 of each region; the gradient [[1, 2, 3]], [[4, 5, 6]], "
            "[[7, 8, 9]], [[10, 11, 12]] becomes [[3, 3, 9, 6], [0, 0, 0, 0], [15, 9, 21, 12], [0, 0, 0, 0]]. The "
            "example does not give its offsets or sample counts; with one sample per output and ROI_ALIGN's "
            "offsets its coordinates fall on .5 ties, which it resolves downward (ROI_ALIGN1 here rounds "
            "floor(x + 0.5)). Without an OutOfBoundsInputValue the out-of-bounds samples of the forward carry no "
            "gradient. The ROI gradient is given only as pseudo-code for Minimum = MaximumSamplesPerOutput = 1 "
            "(image gradients of the bilinear taps times the gradient, weighted by (inputWidth - x) and x), with "
            "its coordinates and inputWidth/inputHeight undefined; this server refuses it (UNIMPLEMENTED)."
        ),
    ),
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
