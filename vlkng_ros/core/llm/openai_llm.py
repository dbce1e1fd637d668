"""The OpenAI-compatible LLM backend (STOA judging, query decomposition, answering)."""

from __future__ import annotations

from typing import Any, Sequence

from .base import LLM, LLMUsage
from .openai_client import OpenAICompatClient


class OpenAILLM(LLM):
    """``generate_json`` through :class:`OpenAICompatClient` (retries, breaker, schema checks)."""

    name = "openai"

    def __init__(self, cfg: Any, backoff_base_s: float | None = None,
                 client: OpenAICompatClient | None = None) -> None:
        self.cfg = cfg
        self.client = client or OpenAICompatClient.from_config(cfg, backoff_base_s=backoff_base_s)

    def generate_json(self, prompt: str, schema: dict[str, Any],
                      images: Sequence[bytes] = (), usage: LLMUsage | None = None) -> Any:
        return self.client.generate_json(prompt, schema, images=images, usage=usage)
