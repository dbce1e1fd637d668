"""A deterministic, dependency-free feature-hashing text embedder.

Character n-grams (3 and 4, of each word padded with spaces) and whole words are hashed (BLAKE2b)
into 256 signed buckets, then L2-normalised. It knows no semantics (no synonyms, no paraphrases):
it exists for scale benchmarks (100k objects: fast, no model load) and as a no-model fallback.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Sequence

import numpy as np

from .base import TextEmbedder, normalize

_WORD = re.compile(r"[a-z0-9]+")


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


@lru_cache(maxsize=100_000)
def _word_vector(word: str, dim: int, ngrams: tuple[int, ...]) -> np.ndarray:
    """The dense contribution of one word (whole word weighted 2, each n-gram 1); words repeat
    across object descriptions, so caching per word makes 100k texts cheap."""
    vec = np.zeros(dim, dtype=np.float32)
    idx, sign = _bucket("w:" + word, dim)
    vec[idx] += 2.0 * sign
    padded = f" {word} "
    for n in ngrams:
        for i in range(max(1, len(padded) - n + 1)):
            idx, sign = _bucket(padded[i:i + n], dim)
            vec[idx] += sign
    return vec


class HashingEmbedder(TextEmbedder):
    name = "hashing"

    def __init__(self, dim: int = 256, ngrams: tuple[int, ...] = (3, 4)) -> None:
        self.dim = int(dim)
        self.ngrams = tuple(ngrams)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(str(text).lower()):
                out[row] += _word_vector(word, self.dim, self.ngrams)
        return normalize(out)
