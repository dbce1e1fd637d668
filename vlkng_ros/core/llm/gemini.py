"""The Gemini LLM backend (STOA judging, query decomposition, answering)."""

from __future__ import annotations

from typing import Any, Sequence

from ..config import LLMConfig
from .base import LLM, LLMUsage
from .gemini_client import GeminiClient


class GeminiLLM(LLM):
    """``generate_json`` through :class:`GeminiClient` (retries, safety, schema checks there)."""

    name = "gemini"

    def __init__(self, cfg: LLMConfig | Any, backoff_base_s: float | None = None,
                 client: GeminiClient | None = None) -> None:
        self.cfg = cfg
        self.client = client or GeminiClient.from_config(cfg, backoff_base_s=backoff_base_s)

    def generate_json(self, prompt: str, schema: dict[str, Any],
                      images: Sequence[bytes] = (), usage: LLMUsage | None = None) -> Any:
        return self.client.generate_json(prompt, schema, images=images, usage=usage)
