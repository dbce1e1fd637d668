"""Gemini as the VLM world expert: one multi-image prompt per chunk, JSON-schema output."""

from __future__ import annotations

from typing import Any

from ..config import PerceptionConfig
from ..llm.base import LLMError
from ..llm.gemini import GeminiLLM
from .base import PerceptionError
from .llm_perceiver import LLMPerceiver


class GeminiPerceiver(LLMPerceiver):
    """Uses ``cfg.model`` at ``cfg.temperature`` (paper: 0.1), with the shared Gemini client's
    retries (429, 5xx, timeouts, invalid JSON) and safety handling."""

    name = "gemini"

    def __init__(self, cfg: PerceptionConfig | Any, backoff_base_s: float | None = None,
                 max_side: int = 1280) -> None:
        try:
            llm = GeminiLLM(cfg, backoff_base_s=backoff_base_s)
        except LLMError as e:
            raise PerceptionError(str(e)) from e
        super().__init__(llm, max_side=max_side)
