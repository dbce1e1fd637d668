"""Per-backend defaults for the model settings left empty in the config (one home).

An empty ``model`` / ``base_url`` / ``api_key_env`` means "what this backend usually needs", so
``--backend transformers`` never asks Hugging Face for a Gemini model name. docs/MODELS.md says
why each default was chosen and what fits a 6 GB GPU.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# (role, backend) -> model. perception = multi-image VLM; llm = STOA judge / decomposition / answer.
# The openai defaults are Ollama tags; one model for both roles, so a 6 GB GPU never swaps models.
DEFAULT_MODELS: dict[tuple[str, str], str] = {
    ("perception", "openai"): "qwen2.5vl:3b",
    ("perception", "gemini"): "gemini-2.5-flash",
    ("perception", "transformers"): "Qwen/Qwen2-VL-2B-Instruct",
    ("llm", "openai"): "qwen2.5vl:3b",
    ("llm", "gemini"): "gemini-2.5-flash",
    ("llm", "transformers"): "Qwen/Qwen2.5-1.5B-Instruct",
}
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
DEFAULT_BASE_URL = {"openai": "http://localhost:11434/v1"}  # Ollama's OpenAI-compatible API


def resolved(cfg: Any, role: str, backend: str | None = None) -> Any:
    """A copy of a PerceptionConfig/LLMConfig with empty model/base_url/api_key_env filled in for
    ``backend`` (default ``cfg.backend``)."""
    backend = backend or cfg.backend
    out = dataclasses.replace(cfg)
    if not out.model:
        out.model = DEFAULT_MODELS.get((role, backend), "")
    if not out.base_url:
        out.base_url = DEFAULT_BASE_URL.get(backend, "")
    if not out.api_key_env:
        out.api_key_env = DEFAULT_KEY_ENV.get(backend, "")
    return out
