"""LLM backends by config name: none (offline mode) | openai | gemini | transformers."""

from __future__ import annotations

from ..config import LLMConfig
from .base import LLM
from .defaults import resolved

LLM_BACKENDS = ("none", "openai", "gemini", "transformers")


def make_llm(cfg: LLMConfig) -> LLM | None:
    """None for ``none`` (callers run their deterministic offline path)."""
    if cfg.backend == "none":
        return None
    if cfg.backend not in LLM_BACKENDS:
        raise ValueError(f"unknown llm.backend {cfg.backend!r}; choose one of {LLM_BACKENDS}")
    cfg = resolved(cfg, "llm")
    if cfg.backend == "openai":
        from .openai_llm import OpenAILLM

        return OpenAILLM(cfg)
    if cfg.backend == "gemini":
        from .gemini import GeminiLLM

        return GeminiLLM(cfg)
    from .transformers_llm import TransformersLLM

    return TransformersLLM(cfg.model, device=getattr(cfg, "device", "auto"),
                           temperature=cfg.temperature, max_retries=cfg.max_retries)
