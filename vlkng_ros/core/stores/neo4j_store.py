"""The Neo4j graph store: the graph model and every statement are in ``cypher.py``.

Statements run through a ``CypherRunner`` (the neo4j driver in production; FalkorDB's Cypher
engine in tests), so the logic here is the same code the contract suite exercises.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, Iterator, Sequence

from ..model import Keyframe, ObjectNode, Relation
from . import cypher
from ._common import (check_relation_endpoints, decode_json, keyframe_json, last_per_id,
                      merge_relation_batch,
                      object_frames, object_json, object_labels, object_position, tour_of_chunk,
                      union_stamps, validate_namespace)
from .base import GraphStore, StoreError
from .cypher_runner import CypherRunner, CypherTx, Neo4jDriverRunner

log = logging.getLogger("vlkng.stores.neo4j")

_PAGE = 500


class Neo4jGraphStore(GraphStore):
    name = "neo4j"

    def __init__(self, uri: str = "", user: str = "neo4j", password: str = "",
                 database: str = "neo4j", namespace: str = "default",
                 runner: CypherRunner | None = None) -> None:
        """Connect with the driver (``uri``/``user``/``password``/``database``), or use ``runner``."""
        self.ns = validate_namespace(namespace)
        self._runner = runner or Neo4jDriverRunner(uri, user, password, database)
        self._closed = False
        try:
            self._runner.schema(cypher.SCHEMA[self._runner.dialect])
        except Exception:
            self._runner.close()
            raise

    @property
    def target(self) -> str:
        return self._runner.target

    def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        if self._closed:
            raise StoreError(f"graph store {self.target} is closed")
        return self._runner.read(query, {"ns": self.ns, **params})

    def _write(self, query: str, **params: Any) -> None:
        if self._closed:
            raise StoreError(f"graph store {self.target} is closed")
        self._runner.write(lambda tx: tx.run(query, {"ns": self.ns, **params}))

    # --- keyframes -----------------------------------------------------------------------------
    def upsert_keyframes(self, keyframes: Iterable[Keyframe]) -> None:
        rows = [{"tour_id": kf.tour_id, "stamp_ns": int(kf.stamp_ns), "data": keyframe_json(kf)}
                for kf in keyframes]
        if rows:
            self._write(cypher.UPSERT_KEYFRAMES, rows=rows)

    def get_keyframe(self, tour_id: str, stamp_ns: int) -> Keyframe | None:
        rows = self._read(cypher.GET_KEYFRAME, tour_id=tour_id, stamp_ns=int(stamp_ns))
        return Keyframe.from_dict(decode_json(rows[0]["data"], "keyframe")) if rows else None

    def keyframes(self, tour_id: str | None = None) -> list[Keyframe]:
        rows = (self._read(cypher.KEYFRAMES_ALL) if tour_id is None
                else self._read(cypher.KEYFRAMES_OF_TOUR, tour_id=tour_id))
        return [Keyframe.from_dict(decode_json(r["data"], "keyframe")) for r in rows]

    def count_keyframes(self, tour_id: str | None = None) -> int:
        rows = (self._read(cypher.COUNT_KEYFRAMES_ALL) if tour_id is None
                else self._read(cypher.COUNT_KEYFRAMES_OF_TOUR, tour_id=tour_id))
        return int(rows[0]["n"])

    def tours(self) -> list[str]:
        return [r["tour_id"] for r in self._read(cypher.TOURS)]

    # --- merge bookkeeping ---------------------------------------------------------------------
    def chunk_merged(self, chunk_id: str) -> bool:
        return bool(self._read(cypher.CHUNK_MERGED, chunk_id=chunk_id))

    def merged_chunks(self, tour_id: str | None = None) -> set[str]:
        rows = (self._read(cypher.MERGED_CHUNKS_ALL) if tour_id is None
                else self._read(cypher.MERGED_CHUNKS_OF_TOUR, tour_id=tour_id))
        return {r["id"] for r in rows}

    def apply_merge(self, chunk_id: str, objects: Sequence[ObjectNode],
                    relations: Sequence[Relation], removed_ids: Sequence[str] = ()) -> bool:
        if self._closed:
            raise StoreError(f"graph store {self.target} is closed")
        object_rows = [_object_row(obj) for obj in last_per_id(objects)]  # raises before anything is written
        batch = merge_relation_batch(relations)
        ns = self.ns

        def work(tx: CypherTx) -> bool:
            if tx.run(cypher.CHUNK_MERGED, {"ns": ns, "chunk_id": chunk_id}):
                return False
            rel_rows: list[dict[str, Any]] = []
            if batch:
                ids = sorted({i for key in batch for i in (key[0], key[2])})
                known = {r["id"] for r in tx.run(cypher.EXISTING_OBJECT_IDS, {"ns": ns, "ids": ids})}
                check_relation_endpoints(batch.values(),
                                         (known - set(removed_ids)) | {o["id"] for o in object_rows})
                keys = [{"subject": s, "predicate": p, "object": o} for s, p, o in batch]
                stored = {(r["subject"], r["predicate"], r["object"]): r
                          for r in tx.run(cypher.RELATION_STAMPS, {"ns": ns, "keys": keys})}
                for key, rel in batch.items():
                    old = stored.get(key)
                    rel_rows.append({
                        "subject": rel.subject, "predicate": rel.predicate, "object": rel.object,
                        "stamps": union_stamps(old["stamps"] or [] if old else [], rel.stamps),
                        "tour_id": (old["tour_id"] if old and old["tour_id"] else rel.tour_id) or ""})
            tx.run(cypher.APPLY_MERGE, {
                "ns": ns, "chunk_id": chunk_id, "tour_id": tour_of_chunk(chunk_id),
                "removed_ids": list(removed_ids),
                "object_ids": [o["id"] for o in object_rows], "objects": object_rows,
                "relations": rel_rows})
            return True

        return self._runner.write(work)

    # --- objects -------------------------------------------------------------------------------
    def get_objects(self, ids: Iterable[str]) -> list[ObjectNode]:
        wanted = list(ids)
        if not wanted:
            return []
        found = {r["id"]: r["data"] for r in self._read(cypher.GET_OBJECTS, ids=sorted(set(wanted)))}
        return [_obj(found[i]) for i in wanted if i in found]

    def objects_after(self, after_id: str, limit: int) -> list[ObjectNode]:
        if limit <= 0:
            return []
        return [_obj(r["data"]) for r in self._read(cypher.OBJECTS_PAGE, after=after_id, limit=int(limit))]

    def count_objects(self) -> int:
        return int(self._read(cypher.COUNT_OBJECTS)[0]["n"])

    def objects_near(self, x: float, y: float, radius: float, limit: int = 50) -> list[ObjectNode]:
        if radius < 0 or limit <= 0:
            return []
        x, y, radius = float(x), float(y), float(radius)
        rows = self._read(cypher.OBJECTS_NEAR, x=x, y=y, r2=radius * radius, limit=int(limit),
                          x_min=x - radius, x_max=x + radius, y_min=y - radius, y_max=y + radius)
        return [_obj(r["data"]) for r in rows]

    def objects_by_label(self, labels: Iterable[str], limit: int = 50) -> list[ObjectNode]:
        wanted = sorted({s.strip().lower() for s in labels if s and s.strip()})
        if not wanted or limit <= 0:
            return []
        return [_obj(r["data"]) for r in self._read(cypher.OBJECTS_BY_LABEL, labels=wanted,
                                                    limit=int(limit))]

    def objects_in_frames(self, frames: Iterable[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        out: dict[tuple[str, int], list[str]] = {(t, int(s)): [] for t, s in frames}
        if out:
            rows = self._read(cypher.OBJECTS_IN_FRAMES,
                              frames=[{"tour_id": t, "stamp_ns": s} for t, s in out])
            for r in rows:
                out[(r["tour_id"], int(r["stamp_ns"]))].append(r["id"])
        return {k: sorted(v) for k, v in out.items()}

    def recent_objects(self, tour_id: str, since_ns: int, limit: int = 50) -> list[ObjectNode]:
        if limit <= 0:
            return []
        rows = self._read(cypher.RECENT_OBJECTS, tour_id=tour_id, since_ns=int(since_ns),
                          limit=int(limit))
        return [_obj(r["data"]) for r in rows]

    # --- relations -----------------------------------------------------------------------------
    def relations_of(self, ids: Iterable[str], limit: int = 200) -> list[Relation]:
        wanted = sorted(set(ids))
        if not wanted or limit <= 0:
            return []
        rows = self._read(cypher.RELATIONS_OF, ids=wanted, limit=int(limit))
        unique = {(r["subject"], r["predicate"], r["object"]): r for r in rows}
        return [_rel(unique[key]) for key in sorted(unique)[:limit]]

    def iter_relations(self) -> Iterator[Relation]:
        skip = 0
        while True:
            rows = self._read(cypher.RELATIONS_PAGE, skip=skip, limit=_PAGE)
            for r in rows:
                yield _rel(r)
            if len(rows) < _PAGE:
                return
            skip += len(rows)

    def count_relations(self) -> int:
        return int(self._read(cypher.COUNT_RELATIONS)[0]["n"])

    # --- misc ----------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._read(cypher.GET_META, key=key)
        return rows[0]["value"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._write(cypher.SET_META, key=key, value=str(value))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._runner.close()


def _object_row(obj: ObjectNode) -> dict[str, Any]:
    pos = object_position(obj)
    return {"id": obj.id, "label": obj.label, "x": pos[0] if pos else None,
            "y": pos[1] if pos else None, "last_seen_ns": int(obj.last_seen_ns),
            "data": object_json(obj), "labels": object_labels(obj),
            "frames": [{"tour_id": t, "stamp_ns": s} for t, s in object_frames(obj)]}


def _obj(data: str) -> ObjectNode:
    return ObjectNode.from_dict(decode_json(data, "object"))


def _rel(row: dict[str, Any]) -> Relation:
    return Relation(row["subject"], row["predicate"], row["object"],
                    [int(s) for s in (row["stamps"] or [])], row["tour_id"] or "")

