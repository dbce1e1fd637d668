"""Text/multimodal LLM interface used by STOA judging, query decomposition and answering."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Sequence


class LLMError(RuntimeError):
    """The model could not give a valid answer (after retries). Callers fall back, and say so."""


@dataclass
class LLMUsage:
    prompt_chars: int = 0
    output_chars: int = 0
    calls: int = 0
    retries: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt_tokens(self) -> int:
        """Approximate tokens (chars/4), the accounting unit used in every report."""
        return self.prompt_chars // 4


class LLM(ABC):
    """Backends: gemini (google-genai), transformers (local). None configured = offline mode."""

    name: str = "abstract"

    @abstractmethod
    def generate_json(self, prompt: str, schema: dict[str, Any],
                      images: Sequence[bytes] = (), usage: LLMUsage | None = None) -> Any:
        """Return the parsed JSON the model produced for ``prompt`` (plus JPEG ``images``),
        validated against the JSON-schema subset ``schema`` (type/properties/required/items/
        enum). Raises LLMError on failure after the backend's retries."""
