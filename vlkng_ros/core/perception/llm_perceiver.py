"""A perceiver over any multimodal :class:`LLM`: one multi-image prompt per chunk.

The Gemini and local-transformers VLM backends are this class with a different model behind it.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from ..llm.base import LLM, LLMError, LLMUsage
from ..images import encode_jpeg
from ..model import ChunkGraph
from .base import ChunkInput, PerceptionError, Perceiver
from .parse import CHUNK_SCHEMA, build_chunk_prompt, parse_chunk_graph

log = logging.getLogger(__name__)


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
        for i, (kf, img) in enumerate(zip(chunk.keyframes, chunk.images)):
            if img is None:
                skipped.append(f"frame {kf.stamp_ns}: no image available; not sent to the model")
                continue
            try:
                jpegs.append(encode_jpeg(img, self.jpeg_quality, self.max_side))
                sent.append(i)
            except ValueError as e:
                skipped.append(f"frame {kf.stamp_ns}: image unusable ({e}); not sent to the model")
        if not sent:
            raise PerceptionError(f"{where}: none of its {len(chunk.keyframes)} images is usable")
        usage = LLMUsage()
        try:
            data = self.llm.generate_json(build_chunk_prompt(len(sent)), CHUNK_SCHEMA,
                                          images=jpegs, usage=usage)
        except LLMError as e:
            raise PerceptionError(f"{self.name} perception failed for {where}: {e}") from e
        finally:
            with self._lock:
                for field in ("prompt_chars", "output_chars", "calls", "retries", "seconds"):
                    setattr(self.usage, field, getattr(self.usage, field) + getattr(usage, field))
        graph = parse_chunk_graph(data, chunk, sent)
        graph.warnings[:0] = skipped
        for w in graph.warnings:
            log.warning("%s: %s", where, w)
        return graph
