"""Perception backends by config name: auto | annotations | openai | gemini | transformers."""

from __future__ import annotations

from typing import Any, Callable

from ..config import PerceptionConfig, VlkngConfig
from ..llm.base import LLM
from ..llm.defaults import resolved
from .base import Perceiver, PerceptionNotConfigured

PERCEPTION_BACKENDS = ("auto", "annotations", "openai", "gemini", "transformers")

NO_MODEL_INSTRUCTION = (
    "this tour has no annotations.jsonl and no perception model is configured: choose one, e.g. "
    "a local server (`ollama pull qwen2.5vl:3b`, then --backend openai, or --set "
    "perception.base_url=http://localhost:11434/v1), Gemini (export GEMINI_API_KEY=..., then "
    "--backend gemini) or a local transformers VLM (--backend transformers, needs a GPU); "
    "see docs/MODELS.md")


def resolve_backend(cfg: VlkngConfig, has_annotations: bool) -> str:
    """The backend ``auto`` stands for: annotations for a tour that has them, the openai backend
    when a server URL is configured; otherwise PerceptionNotConfigured with an instruction.
    Any other value is returned as is (after a check)."""
    backend = cfg.perception.backend
    if backend not in PERCEPTION_BACKENDS:
        raise ValueError(f"unknown perception.backend {backend!r}; choose one of {PERCEPTION_BACKENDS}")
    if backend != "auto":
        return backend
    if has_annotations:
        return "annotations"
    if cfg.perception.base_url:
        return "openai"
    raise PerceptionNotConfigured(NO_MODEL_INSTRUCTION)


def make_perceiver(cfg: VlkngConfig, annotations: dict[int, dict[str, Any]] | None = None,
                   llm_factory: Callable[[PerceptionConfig], LLM] | None = None) -> Perceiver:
    """Build ``cfg.perception.backend`` (``auto`` resolved by :func:`resolve_backend`).

    ``annotations`` (stamp_ns -> annotation line) is required by the annotations backend.
    ``llm_factory``, when given, replaces the model behind the openai/gemini/transformers backends:
    it receives the (defaults-resolved) perception config and returns any multimodal :class:`LLM`
    (a scripted model in tests, another provider); prompt, schema and parsing stay the same."""
    backend = resolve_backend(cfg, bool(annotations))
    if backend == "annotations":
        from .annotations import AnnotationPerceiver

        if not annotations:
            raise PerceptionNotConfigured(
                "perception.backend 'annotations' needs the tour's annotations.jsonl (simulated "
                "perception); this tour has none. " + NO_MODEL_INSTRUCTION.split(": ", 1)[1])
        return AnnotationPerceiver(annotations, cfg.perception)
    from .llm_perceiver import LLMPerceiver

    pcfg = resolved(cfg.perception, "perception", backend)
    pcfg.backend = backend
    max_side = pcfg.image_max_side or 1280
    if llm_factory is not None:
        return LLMPerceiver(llm_factory(pcfg), name=backend, max_side=max_side)
    if backend == "openai":
        from ..llm.openai_llm import OpenAILLM

        return LLMPerceiver(OpenAILLM(pcfg), name="openai", max_side=max_side)
    if backend == "gemini":
        from .gemini import GeminiPerceiver

        return GeminiPerceiver(pcfg, max_side=max_side)
    from .transformers_vlm import TransformersPerceiver

    device = getattr(pcfg, "device", None) or cfg.embeddings.device
    return TransformersPerceiver(pcfg.model, device=device, temperature=pcfg.temperature,
                                 max_retries=pcfg.max_retries, max_new_tokens=pcfg.max_output_tokens,
                                 max_side=pcfg.image_max_side, dtype=pcfg.dtype,
                                 load_in_4bit=pcfg.load_in_4bit)
