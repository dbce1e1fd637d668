"""Chunking: b consecutive keyframes of one tour go to the VLM together (paper: b = 8).

A chunk is identified by the index of its first keyframe, so chunking is reproducible after a
restart: the same keyframes always form the same chunks.
"""

from __future__ import annotations

from .model import Keyframe


class Chunker:
    def __init__(self, size: int = 8) -> None:
        if size < 1:
            raise ValueError(f"chunk size must be >= 1, got {size}")
        self.size = size
        self._buffer: list[Keyframe] = []

    def add(self, keyframe: Keyframe) -> list[Keyframe] | None:
        """Add a keyframe; returns a full chunk when one is complete. A keyframe of another
        tour first closes the current (partial) chunk, which is returned."""
        if self._buffer and self._buffer[-1].tour_id != keyframe.tour_id:
            done = self._buffer
            self._buffer = [keyframe]
            return done
        self._buffer.append(keyframe)
        if len(self._buffer) >= self.size:
            done, self._buffer = self._buffer, []
            return done
        return None

    def flush(self) -> list[Keyframe] | None:
        """The partial chunk at the end of a tour (or after a quiet period), if any."""
        done, self._buffer = self._buffer, []
        return done or None

    @property
    def pending(self) -> int:
        return len(self._buffer)


def chunk_keyframes(keyframes: list[Keyframe], size: int) -> list[list[Keyframe]]:
    """Split a tour's keyframes (in order) into chunks of ``size`` (the last may be shorter)."""
    chunker = Chunker(size)
    chunks = [c for kf in keyframes if (c := chunker.add(kf))]
    tail = chunker.flush()
    return chunks + ([tail] if tail else [])
