"""Text/multimodal LLM interface used by STOA judging, query decomposition and answering."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Sequence


class LLMError(RuntimeError):
    """The model could not give a valid answer (after retries). Callers fall back, and say so."""


class BackendUnavailable(LLMError):
    """The backend cannot be reached or is misconfigured (circuit breaker open): every further
    request would fail the same way, so callers stop and keep their work queued."""


@dataclass
class LLMUsage:
    prompt_chars: int = 0
    output_chars: int = 0
    calls: int = 0
    retries: int = 0
    seconds: float = 0.0
    input_tokens: int = 0  # as the server counted them (0 when it does not say)
    output_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, other: "LLMUsage") -> None:
        """Accumulate ``other`` into this one (totals over several calls)."""
        for name in ("prompt_chars", "output_chars", "calls", "retries", "seconds",
                     "input_tokens", "output_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def prompt_tokens(self) -> int:
        """Approximate tokens (chars/4), the accounting unit used in every report."""
        return self.prompt_chars // 4


def backoff_sleep(base_s: float, max_s: float, retry_index: int, who: str, reason: str) -> None:
    """Sleep before retry ``retry_index`` (0-based): ``base * 2**n`` capped at ``max_s``, scaled
    by a random factor in [0.5, 1.0] (jitter, so parallel chunks do not retry in step)."""
    import logging
    import random
    import time

    delay = min(max_s, base_s * (2 ** retry_index)) * (0.5 + 0.5 * random.random())
    logging.getLogger("vlkng.llm").info("%s: retrying in %.2f s (%s)", who, delay, reason[:120])
    time.sleep(delay)


class CircuitBreaker:
    """Stops a backend after ``threshold`` consecutive connection failures (or at once on a
    configuration error such as a rejected key or an unknown model), so a build or a live run
    says what is wrong once instead of retrying every chunk. After ``reset_after_s`` one request
    is let through again (half-open): a server that came back closes the breaker."""

    def __init__(self, threshold: int = 3, reset_after_s: float = 60.0, what: str = "backend") -> None:
        import threading

        self.threshold = max(1, int(threshold))
        self.reset_after_s = float(reset_after_s)
        self.what = what
        self.failures = 0
        self.reason = ""
        self.opened_at: float | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None

    def check(self) -> None:
        """Raise BackendUnavailable while open (until the half-open probe is due)."""
        import time

        with self._lock:
            if self.opened_at is None:
                return
            if self.reset_after_s > 0 and time.monotonic() - self.opened_at >= self.reset_after_s:
                self.opened_at = time.monotonic()  # one probe now; the next check waits again
                return
            raise BackendUnavailable(self.reason)

    def success(self) -> None:
        with self._lock:
            self.failures = 0
            self.opened_at = None
            self.reason = ""

    def failure(self, reason: str, fatal: bool = False) -> bool:
        """Count one connection failure (``fatal``: open at once). True when now open."""
        import logging
        import time

        with self._lock:
            self.failures += 1
            if self.opened_at is None and (fatal or self.failures >= self.threshold):
                self.opened_at = time.monotonic()
                self.reason = reason
                logging.getLogger("vlkng.llm").error("%s", reason)  # said once, when it opens
            return self.opened_at is not None


class LLM(ABC):
    """Backends: openai (any OpenAI-compatible server), gemini (google-genai), transformers
    (local). None configured = offline mode."""

    name: str = "abstract"

    @abstractmethod
    def generate_json(self, prompt: str, schema: dict[str, Any],
                      images: Sequence[bytes] = (), usage: LLMUsage | None = None) -> Any:
        """Return the parsed JSON the model produced for ``prompt`` (plus JPEG ``images``),
        validated against the JSON-schema subset ``schema`` (type/properties/required/items/
        enum). Raises LLMError on failure after the backend's retries."""
