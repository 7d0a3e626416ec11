"""The page of RANDOM_GENERATOR."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md, and MicrosoftDocs/windows-ai-docs
# docs/directml/api/ for the pages that live only there (FOLD, UNFOLD, ROI_ALIGN_GRAD, MULTIHEAD_ATTENTION,
# MULTIHEAD_ATTENTION1). Support levels are listed ascending; the pages list them descending.

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
}
