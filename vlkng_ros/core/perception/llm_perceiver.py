"""A perceiver over any multimodal :class:`LLM`: one multi-image prompt per chunk.

The OpenAI-compatible, Gemini and local-transformers VLM backends are this class with a
different model behind it. Every chunk graph records what perceiving it cost
(``ChunkGraph.perception``: model, seconds, tokens, calls, retries); the build reports it.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from ..images import encode_jpeg
from ..llm.base import LLM, BackendUnavailable, LLMError, LLMUsage
from ..model import ChunkGraph
from .base import ChunkInput, PerceptionError, PerceptionUnavailable, Perceiver
from .parse import CHUNK_SCHEMA, build_chunk_prompt, parse_chunk_graph

log = logging.getLogger(__name__)


def fit_image(rgb: np.ndarray, max_side: int = 0) -> np.ndarray:
    """RGB uint8 HxWx3 -> the same, downscaled (area) so the longer side is at most max_side."""
    import cv2

    img = np.asarray(rgb)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"expected a uint8 HxWx3 image, got {img.dtype} {img.shape}")
    if max_side and max(img.shape[:2]) > max_side:
        scale = max_side / max(img.shape[:2])
        img = cv2.resize(img, (max(1, round(img.shape[1] * scale)), max(1, round(img.shape[0] * scale))),
                         interpolation=cv2.INTER_AREA)
    return img


class LLMPerceiver(Perceiver):
    """Sends the chunk's images and the chunk prompt to ``llm`` and parses the answer.

    Boxes are asked for in the 0-1000 ``[ymin, xmin, ymax, xmax]`` convention (see parse.py), so
    downscaling the images before sending them does not change the pixel boxes returned."""

    name = "llm"

    def __init__(self, llm: LLM, name: str | None = None, jpeg_quality: int = 90,
                 max_side: int = 1280) -> None:
        self.llm = llm
        if name:
            self.name = name
        self.jpeg_quality = jpeg_quality
        self.max_side = max_side
        self.usage = LLMUsage()  # totals over every chunk this perceiver handled
        self._lock = threading.Lock()

    def perceive(self, chunk: ChunkInput) -> ChunkGraph:
        where = f"chunk {chunk.tour_id}#{chunk.chunk_index}"
        jpegs: list[bytes] = []
        sent: list[int] = []
        skipped: list[str] = []
        max_side = self.max_side
        if not max_side:  # the model's own working size (local models), else 1280
            try:
                max_side = getattr(self.llm, "preferred_max_side", lambda: 1280)() or 1280
            except LLMError as e:
                raise PerceptionError(f"{self.name} perception failed for {where}: {e}") from e
        for i, (kf, img) in enumerate(zip(chunk.keyframes, chunk.images)):
            if img is None:
                skipped.append(f"frame {kf.stamp_ns}: no image available; not sent to the model")
                continue
            try:
                jpegs.append(encode_jpeg(fit_image(img, max_side), self.jpeg_quality))
                sent.append(i)
            except ValueError as e:
                skipped.append(f"frame {kf.stamp_ns}: image unusable ({e}); not sent to the model")
        if not sent:
            raise PerceptionError(f"{where}: none of its {len(chunk.keyframes)} images is usable")
        usage = LLMUsage()
        try:
            data = self.llm.generate_json(build_chunk_prompt(len(sent)), CHUNK_SCHEMA,
                                          images=jpegs, usage=usage)
        except BackendUnavailable as e:
            raise PerceptionUnavailable(f"{self.name} perception unavailable: {e}") from e
        except LLMError as e:
            raise PerceptionError(f"{self.name} perception failed for {where}: {e}") from e
        finally:
            with self._lock:
                self.usage.add(usage)
        graph = parse_chunk_graph(data, chunk, sent)
        graph.warnings[:0] = skipped
        graph.perception = {
            "backend": self.name, "model": str(getattr(self.llm, "model_name", "")
                                                or getattr(getattr(self.llm, "client", None), "model", "")),
            "images": len(sent), "seconds": round(usage.seconds, 3), "calls": usage.calls,
            "retries": usage.retries, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "prompt_chars": usage.prompt_chars,
            "output_chars": usage.output_chars}
        for w in graph.warnings:
            log.warning("%s: %s", where, w)
        return graph
