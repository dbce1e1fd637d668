"""LLM backends by config name: none (offline mode) | gemini | transformers."""

from __future__ import annotations

from ..config import LLMConfig
from .base import LLM

LLM_BACKENDS = ("none", "gemini", "transformers")


def make_llm(cfg: LLMConfig) -> LLM | None:
    """None for ``none`` (callers run their deterministic offline path)."""
    if cfg.backend == "none":
        return None
    if cfg.backend == "gemini":
        from .gemini import GeminiLLM

        return GeminiLLM(cfg)
    if cfg.backend == "transformers":
        from .transformers_llm import TransformersLLM

        return TransformersLLM(cfg.model, device=getattr(cfg, "device", "auto"),
                               temperature=cfg.temperature, max_retries=cfg.max_retries)
    raise ValueError(f"unknown llm.backend {cfg.backend!r}; choose one of {LLM_BACKENDS}")
