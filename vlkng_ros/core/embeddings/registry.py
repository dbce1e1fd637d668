"""Embedding backends by config name. Models are loaded once per process and shared."""

from __future__ import annotations

import threading
from typing import Any, Callable

from ..config import EmbeddingConfig
from .base import ImageTextEmbedder, TextEmbedder

TEXT_BACKENDS = ("minilm", "siglip2", "hashing")
IMAGE_BACKENDS = ("none", "siglip2")

_cache: dict[tuple[Any, ...], Any] = {}
_cache_lock = threading.Lock()


def _cached(key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    with _cache_lock:  # held while loading so concurrent callers get the same instance
        if key not in _cache:
            _cache[key] = build()
        return _cache[key]


def _siglip(cfg: EmbeddingConfig) -> ImageTextEmbedder:
    from .siglip2 import SigLIP2Embedder

    return _cached(("siglip2", cfg.siglip_model, cfg.device),
                   lambda: SigLIP2Embedder(cfg.siglip_model, device=cfg.device))


def make_text_embedder(cfg: EmbeddingConfig) -> TextEmbedder:
    backend = cfg.text_backend
    if backend == "minilm":
        from .minilm import MiniLMEmbedder

        runtime = getattr(cfg, "minilm_runtime", "auto")
        threads = int(getattr(cfg, "minilm_blas_threads", 1))
        return _cached(("minilm", cfg.device, runtime, threads),
                       lambda: MiniLMEmbedder(device=cfg.device, runtime=runtime, blas_threads=threads))
    if backend == "siglip2":
        return _siglip(cfg)
    if backend == "hashing":
        from .hashing import HashingEmbedder

        return _cached(("hashing",), HashingEmbedder)
    raise ValueError(f"unknown embeddings.text_backend {backend!r}; choose one of {TEXT_BACKENDS}")


def make_image_embedder(cfg: EmbeddingConfig) -> ImageTextEmbedder | None:
    backend = cfg.image_backend
    if backend == "none":
        return None
    if backend == "siglip2":
        return _siglip(cfg)
    raise ValueError(f"unknown embeddings.image_backend {backend!r}; choose one of {IMAGE_BACKENDS}")
