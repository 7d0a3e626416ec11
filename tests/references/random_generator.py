"""NumPy reference of DirectML's RANDOM_GENERATOR (Philox 4x32-10), written from the page and the Philox paper."""

from __future__ import annotations

import numpy as np

_MASK = 0xFFFFFFFF
_M0, _M1 = 0xD2511F53, 0xCD9E8D57
_W0, _W1 = 0x9E3779B9, 0xBB67AE85


def philox4x32_10(counter: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, int, int, int]:
    """One Philox 4x32-10 block: ten rounds of the S-box, the key bumped by the Weyl constants between rounds."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + _W0) & _MASK, (k1 + _W1) & _MASK
        product0, product1 = _M0 * c0, _M1 * c2
        hi0, lo0 = product0 >> 32, product0 & _MASK
        hi1, lo1 = product1 >> 32, product1 & _MASK
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def _words(value: int) -> tuple[int, int, int, int]:
    return value & _MASK, (value >> 32) & _MASK, (value >> 64) & _MASK, (value >> 96) & _MASK


def random_generator(state: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` UINT32 values from a {1,1,1,6} state (counter words 0-3 least significant first, key words 4-5),
    and the next state (counter advanced by ceil(count / 4) modulo 2^128)."""
    words = [int(v) for v in state.reshape(-1)]
    counter = sum(word << (32 * i) for i, word in enumerate(words[:4]))
    key = (words[4], words[5])
    blocks = -(-count // 4)
    values: list[int] = []
    for i in range(blocks):
        values.extend(philox4x32_10(_words((counter + i) % (1 << 128)), key))
    advanced = _words((counter + blocks) % (1 << 128))
    next_state = np.array([*advanced, *key], np.uint32).reshape(state.shape)
    return np.array(values[:count], np.uint32), next_state
