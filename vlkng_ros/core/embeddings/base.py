"""Embedding interfaces. Vectors are float32, L2-normalised, shape (n, dim)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

import numpy as np


class TextEmbedder(ABC):
    name: str = "abstract"
    dim: int = 0

    @abstractmethod
    def embed_texts(self, texts: Sequence[str]) -> np.ndarray: ...


class ImageTextEmbedder(TextEmbedder):
    """A joint image/text space (SigLIP2): crops and queries are comparable."""

    @abstractmethod
    def embed_images(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """RGB uint8 HxWx3 crops -> unit vectors in the same space as embed_texts."""


def normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)
