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


@lru_cache(maxsize=200_000)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


class HashingEmbedder(TextEmbedder):
    name = "hashing"

    def __init__(self, dim: int = 256, ngrams: tuple[int, ...] = (3, 4)) -> None:
        self.dim = int(dim)
        self.ngrams = ngrams

    def _features(self, text: str) -> list[tuple[str, float]]:
        feats: list[tuple[str, float]] = []
        for word in _WORD.findall(text.lower()):
            feats.append(("w:" + word, 2.0))
            padded = f" {word} "
            for n in self.ngrams:
                feats += [(padded[i:i + n], 1.0) for i in range(max(1, len(padded) - n + 1))]
        return feats

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in self._features(str(text)):
                idx, sign = _bucket(feature, self.dim)
                out[row, idx] += sign * weight
        return normalize(out)
