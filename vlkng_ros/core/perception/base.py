"""The VLM 'world expert' interface: one chunk of keyframes in, one chunk graph out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..model import ChunkGraph, Keyframe


class PerceptionError(RuntimeError):
    """Perception failed for a whole chunk (after retries). The chunk stays queued."""


class PerceptionUnavailable(PerceptionError):
    """The backend is down or misconfigured (circuit breaker open): every chunk would fail the
    same way, so the caller stops perceiving and leaves the rest queued."""


class PerceptionNotConfigured(ValueError):
    """No perception backend can serve this tour (no annotations, no model configured)."""


@dataclass
class ChunkInput:
    tour_id: str
    chunk_index: int
    keyframes: list[Keyframe]  # b keyframes, increasing stamps
    images: list[np.ndarray | None]  # RGB uint8 HxWx3 per keyframe (None if unavailable)


class Perceiver(ABC):
    """Backends: annotations (simulated perception), openai, gemini, transformers."""

    name: str = "abstract"

    @abstractmethod
    def perceive(self, chunk: ChunkInput) -> ChunkGraph:
        """Detect objects (chunk-local ids, per-frame boxes, attributes, affordances,
        description) and relations. Invalid items (boxes outside the image, unknown ids,
        frames not in the chunk) are dropped with a reason in ``ChunkGraph.warnings``.
        Raises PerceptionError when nothing usable could be obtained."""
