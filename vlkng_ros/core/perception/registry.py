"""Perception backends by config name: annotations | gemini | transformers."""

from __future__ import annotations

from typing import Any, Callable

from ..config import PerceptionConfig, VlkngConfig
from ..llm.base import LLM
from .base import Perceiver

PERCEPTION_BACKENDS = ("annotations", "gemini", "transformers")


def make_perceiver(cfg: VlkngConfig, annotations: dict[int, dict[str, Any]] | None = None,
                   llm_factory: Callable[[PerceptionConfig], LLM] | None = None) -> Perceiver:
    """Build ``cfg.perception.backend``.

    ``annotations`` (stamp_ns -> annotation line) is required by the annotations backend.
    ``llm_factory``, when given, replaces the model behind the gemini/transformers backends: it
    receives the perception config and returns any multimodal :class:`LLM` (a scripted model in
    tests, another provider); prompt, schema and parsing stay the same."""
    pcfg = cfg.perception
    backend = pcfg.backend
    if backend not in PERCEPTION_BACKENDS:
        raise ValueError(f"unknown perception.backend {backend!r}; choose one of {PERCEPTION_BACKENDS}")
    if backend == "annotations":
        from .annotations import AnnotationPerceiver

        if annotations is None:
            raise ValueError("perception.backend 'annotations' needs the tour's annotations.jsonl "
                             "(this tour has none; choose gemini or transformers)")
        return AnnotationPerceiver(annotations, pcfg)
    from .llm_perceiver import LLMPerceiver

    if llm_factory is not None:
        return LLMPerceiver(llm_factory(pcfg), name=backend)
    if backend == "gemini":
        from .gemini import GeminiPerceiver

        return GeminiPerceiver(pcfg)
    from .transformers_vlm import TransformersPerceiver

    device = getattr(pcfg, "device", None) or cfg.embeddings.device
    return TransformersPerceiver(pcfg.model, device=device, temperature=pcfg.temperature,
                                 max_retries=pcfg.max_retries)
