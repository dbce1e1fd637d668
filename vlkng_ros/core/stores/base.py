"""Store interfaces. Every backend passes the same contract suite (test/test_graph_store_contract.py).

The graph store is the source of truth for keyframes, objects, relations and which chunks were
merged; `apply_merge` is atomic so a crash never leaves a chunk half-merged or merged twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..model import Keyframe, ObjectNode, Relation


OBJECTS_PAGE = 500  # objects per store round trip when walking the whole graph


class StoreError(RuntimeError):
    """A store backend failed (server down, bad credentials, corrupt file)."""


class GraphStore(ABC):
    """Objects, relations, keyframes and merge bookkeeping. Implementations: sqlite, neo4j."""

    name: str = "abstract"

    # --- keyframes ---------------------------------------------------------------------------
    @abstractmethod
    def upsert_keyframes(self, keyframes: Iterable[Keyframe]) -> None:
        """Insert or replace keyframes, keyed by (tour_id, stamp_ns)."""

    @abstractmethod
    def get_keyframe(self, tour_id: str, stamp_ns: int) -> Keyframe | None: ...

    @abstractmethod
    def keyframes(self, tour_id: str | None = None) -> list[Keyframe]:
        """Keyframes of one tour (or all), ordered by (tour_id, stamp_ns)."""

    @abstractmethod
    def count_keyframes(self, tour_id: str | None = None) -> int: ...

    # --- merge bookkeeping -------------------------------------------------------------------
    @abstractmethod
    def chunk_merged(self, chunk_id: str) -> bool: ...

    @abstractmethod
    def merged_chunks(self, tour_id: str | None = None) -> set[str]: ...

    @abstractmethod
    def apply_merge(self, chunk_id: str, objects: Sequence[ObjectNode],
                    relations: Sequence[Relation], removed_ids: Sequence[str] = ()) -> bool:
        """Atomically: delete the objects ``removed_ids`` (consolidated into another node) with
        every relation touching them, replace each given object node by id (full state, including
        its observations), union each relation's stamps into the stored edge (keyed by subject,
        predicate, object), and mark ``chunk_id`` merged. If ``chunk_id`` was already merged,
        change nothing and return False; else return True."""

    # --- objects -----------------------------------------------------------------------------
    @abstractmethod
    def get_objects(self, ids: Iterable[str]) -> list[ObjectNode]:
        """The objects with these ids that exist, in the order given."""

    @abstractmethod
    def objects_after(self, after_id: str, limit: int) -> list[ObjectNode]:
        """Up to ``limit`` objects with ids greater than ``after_id``, ordered by id (one page of
        a walk over the graph that can stop and resume: ``after_id`` "" starts it)."""

    def iter_objects(self) -> Iterator[ObjectNode]:
        """Every object, ordered by id."""
        after = ""
        while True:
            page = self.objects_after(after, OBJECTS_PAGE)
            yield from page
            if len(page) < OBJECTS_PAGE:
                return
            after = page[-1].id

    @abstractmethod
    def count_objects(self) -> int: ...

    @abstractmethod
    def objects_near(self, x: float, y: float, radius: float, limit: int = 50) -> list[ObjectNode]:
        """Objects whose estimated position lies within ``radius`` m of (x, y), nearest first.
        Must use an index (cost must not grow linearly with the graph)."""

    @abstractmethod
    def objects_by_label(self, labels: Iterable[str], limit: int = 50) -> list[ObjectNode]:
        """Objects whose label (or any label it was seen with) is one of ``labels``
        (case-insensitive exact match), most recently seen first."""

    @abstractmethod
    def objects_in_frames(self, frames: Iterable[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        """For each (tour_id, stamp_ns), the ids of objects observed in that keyframe."""

    @abstractmethod
    def recent_objects(self, tour_id: str, since_ns: int, limit: int = 50) -> list[ObjectNode]:
        """Objects of ``tour_id`` last seen at or after ``since_ns``, most recent first."""

    # --- relations ---------------------------------------------------------------------------
    @abstractmethod
    def relations_of(self, ids: Iterable[str], limit: int = 200) -> list[Relation]:
        """Relations whose subject or object is one of ``ids``."""

    @abstractmethod
    def iter_relations(self) -> Iterator[Relation]: ...

    @abstractmethod
    def count_relations(self) -> int: ...

    # --- misc --------------------------------------------------------------------------------
    @abstractmethod
    def tours(self) -> list[str]:
        """Tour ids that have keyframes, sorted."""

    @abstractmethod
    def get_meta(self, key: str) -> str | None: ...

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class VectorHit:
    point_id: str
    score: float  # cosine similarity
    payload: dict[str, Any] = field(default_factory=dict)  # object_id, tour_id, stamp_ns, label, ...


class VectorStore(ABC):
    """Named collections of unit vectors with payloads. Implementation: qdrant (local or URL)."""

    name: str = "abstract"

    @abstractmethod
    def ensure_collection(self, collection: str, dim: int) -> None:
        """Create the collection (cosine distance) if missing; raise StoreError on a dim clash."""

    @abstractmethod
    def upsert(self, collection: str, ids: Sequence[str], vectors: np.ndarray,
               payloads: Sequence[dict[str, Any]]) -> None:
        """Insert or replace points. ``ids`` are any strings; the backend maps them to valid
        point ids deterministically, so re-upserting the same id replaces the point."""

    @abstractmethod
    def search(self, collection: str, vector: np.ndarray, limit: int,
               where: dict[str, Any] | None = None) -> list[VectorHit]:
        """Nearest points by cosine similarity, best first. ``where`` is an exact-match filter
        on payload keys (e.g. {"tour_id": "home"})."""

    @abstractmethod
    def count(self, collection: str) -> int: ...

    @abstractmethod
    def close(self) -> None: ...


class FrameStore(ABC):
    """Keyframe images, stored once as JPEG."""

    @abstractmethod
    def put(self, tour_id: str, stamp_ns: int, jpeg: bytes) -> str:
        """Store the JPEG; return its reference (idempotent)."""

    @abstractmethod
    def get(self, ref: str) -> bytes: ...

    @abstractmethod
    def exists(self, ref: str) -> bool: ...

    # A keyframe's depth (16-bit PNG of millimetres), where the robot has depth. A store that
    # cannot keep depth says so: positions are then solved without it.
    def put_depth(self, tour_id: str, stamp_ns: int, png: bytes) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not store depth")

    def get_depth(self, tour_id: str, stamp_ns: int) -> bytes | None:
        return None

    def has_depth(self, tour_id: str, stamp_ns: int) -> bool:
        return False
