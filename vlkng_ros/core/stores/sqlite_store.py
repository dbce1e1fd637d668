"""The embedded graph store: one SQLite file (stdlib ``sqlite3``), no server.

Objects are stored whole as JSON (``ObjectNode.to_dict``) next to the columns the queries need;
every lookup the GraphStore contract names has its own index:

* ``objects_near``    R*Tree over object positions (``objects_rtree``), or, where SQLite was
                      built without R*Tree, a B-tree on (x, y) used as a range scan on x.
* ``objects_by_label`` ``object_labels(label, object_id)``: label and labels_seen, lower-cased.
* ``objects_in_frames``/``recent_objects`` ``observations(tour_id, stamp_ns, object_id)``.
* relations keyed (subject, predicate, object) plus an index on object.

One connection (``check_same_thread=False``) guarded by a lock serves every thread; the file is
in WAL mode so readers in other processes never block on a writer. ``apply_merge`` runs in one
``BEGIN IMMEDIATE`` transaction: if anything fails (or the process dies) nothing is applied.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..model import Keyframe, ObjectNode, Relation
from ._common import (check_relation_endpoints, decode_json, keyframe_json, last_per_id,
                      merge_relation_batch,
                      object_frames, object_json, object_labels, object_position, tour_of_chunk,
                      union_stamps)
from .base import GraphStore, StoreError

log = logging.getLogger("vlkng.stores.sqlite")

SCHEMA_VERSION = 1
_PAGE = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS store_info(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS keyframes(
    tour_id TEXT NOT NULL, stamp_ns INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (tour_id, stamp_ns)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunks(
    chunk_id TEXT PRIMARY KEY, tour_id TEXT NOT NULL, merged_at_ns INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_tour ON chunks(tour_id);
CREATE TABLE IF NOT EXISTS objects(
    rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, label TEXT NOT NULL,
    x REAL, y REAL, last_seen_ns INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS objects_by_last_seen ON objects(last_seen_ns);
CREATE TABLE IF NOT EXISTS object_labels(
    label TEXT NOT NULL, object_id TEXT NOT NULL, last_seen_ns INTEGER NOT NULL,
    PRIMARY KEY (label, object_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS object_labels_by_object ON object_labels(object_id);
CREATE INDEX IF NOT EXISTS object_labels_by_recency ON object_labels(label, last_seen_ns DESC, object_id);
CREATE TABLE IF NOT EXISTS observations(
    tour_id TEXT NOT NULL, stamp_ns INTEGER NOT NULL, object_id TEXT NOT NULL,
    PRIMARY KEY (tour_id, stamp_ns, object_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS observations_by_object ON observations(object_id);
CREATE TABLE IF NOT EXISTS relations(
    subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL,
    stamps TEXT NOT NULL, tour_id TEXT NOT NULL,
    PRIMARY KEY (subject, predicate, object)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relations_by_object ON relations(object);
"""


def rtree_available() -> bool:
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING rtree(id, a, b, c, d)")
        finally:
            con.close()
        return True
    except sqlite3.OperationalError:
        return False


class SqliteGraphStore(GraphStore):
    name = "sqlite"

    def __init__(self, path: str | Path, *, use_rtree: bool | None = None, read_only: bool = False) -> None:
        """Open (creating if needed) the graph file. ``use_rtree`` only matters for a new file
        (None = R*Tree when this SQLite has it); an existing file keeps the index it was made with.
        ``read_only``: never write (a reader; works on a read-only copy, and beside a writer in
        another process)."""
        self.path = Path(path)
        self.read_only = read_only
        self._lock = threading.RLock()
        self._closed = False
        try:
            if read_only:
                if not self.path.is_file():
                    raise StoreError(f"no graph store at {self.path}")
                # a writable folder: a normal read-only connection (sees a writer's WAL); a
                # read-only folder (snapshot, mounted copy) cannot hold -shm: open it immutable
                flags = "mode=ro" if os.access(self.path.parent, os.W_OK) else "mode=ro&immutable=1"
                self._con = sqlite3.connect(f"{self.path.resolve().as_uri()}?{flags}", uri=True,
                                            check_same_thread=False, isolation_level=None, timeout=30.0)
                info = dict(self._con.execute("SELECT key, value FROM store_info").fetchall())
                self.spatial = info.get("spatial_index", "xy")
                if self.spatial == "rtree" and not self._con.execute(
                        "SELECT 1 FROM sqlite_master WHERE name = 'objects_rtree'").fetchone():
                    self.spatial = "none"  # an older file not yet backfilled: scan (a writer backfills)
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(str(self.path), check_same_thread=False,
                                        isolation_level=None, timeout=30.0)
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=NORMAL")
            self._con.execute("PRAGMA foreign_keys=OFF")
            self.spatial = self._init_schema(use_rtree)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"cannot open graph store {self.path}: {e}") from e

    # --- plumbing ------------------------------------------------------------------------------
    def _init_schema(self, use_rtree: bool | None) -> str:
        with self._tx():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._con.execute(statement)
            info = dict(self._con.execute("SELECT key, value FROM store_info").fetchall())
            version = int(info.get("schema_version", SCHEMA_VERSION))
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} has schema version {version}; this vlkng reads up "
                                 f"to {SCHEMA_VERSION} (upgrade vlkng)")
            spatial = info.get("spatial_index")
            if spatial is None:
                spatial = "rtree" if (rtree_available() if use_rtree is None else use_rtree) else "xy"
                self._con.executemany("INSERT OR REPLACE INTO store_info(key, value) VALUES (?, ?)",
                                      [("schema_version", str(SCHEMA_VERSION)),
                                       ("spatial_index", spatial)])
            if spatial == "rtree":
                self._con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS objects_rtree "
                                  "USING rtree(rid, min_x, max_x, min_y, max_y)")
                self._backfill_rtree()
            else:
                self._con.execute("CREATE INDEX IF NOT EXISTS objects_by_xy ON objects(x, y)")
        return spatial

    def _backfill_rtree(self) -> None:
        """An older file (or one whose index was lost) gets every placed object indexed."""
        placed = self._con.execute("SELECT count(*) FROM objects WHERE x IS NOT NULL AND y IS NOT NULL").fetchone()[0]
        indexed = self._con.execute("SELECT count(*) FROM objects_rtree").fetchone()[0]
        if placed != indexed:
            log.warning("%s: spatial index holds %d of %d placed objects: rebuilding it", self.path,
                        indexed, placed)
            self._con.execute("DELETE FROM objects_rtree")
            self._con.execute("INSERT INTO objects_rtree(rid, min_x, max_x, min_y, max_y) "
                              "SELECT rid, x, x, y, y FROM objects WHERE x IS NOT NULL AND y IS NOT NULL")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT), rolled back on any exception."""
        with self._lock:
            self._check_open()
            if self.read_only:
                raise StoreError(f"graph store {self.path} is opened read-only")
            self._con.execute("BEGIN IMMEDIATE")
            try:
                yield self._con
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            else:
                self._con.execute("COMMIT")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            self._check_open()
            try:
                return self._con.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as e:
                raise StoreError(f"graph store {self.path}: {e}") from e

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"graph store {self.path} is closed")

    def explain_objects_near(self) -> list[str]:
        """The query plan of objects_near (tests check that it uses the spatial index)."""
        sql, params = self._near_sql(0.0, 0.0, 1.0, 10)
        return [row[-1] for row in self._query("EXPLAIN QUERY PLAN " + sql, params)]

    # --- keyframes -----------------------------------------------------------------------------
    def upsert_keyframes(self, keyframes: Iterable[Keyframe]) -> None:
        rows = [(kf.tour_id, int(kf.stamp_ns), keyframe_json(kf)) for kf in keyframes]
        with self._tx() as con:
            con.executemany("INSERT INTO keyframes(tour_id, stamp_ns, data) VALUES (?, ?, ?) "
                            "ON CONFLICT(tour_id, stamp_ns) DO UPDATE SET data = excluded.data", rows)

    def get_keyframe(self, tour_id: str, stamp_ns: int) -> Keyframe | None:
        rows = self._query("SELECT data FROM keyframes WHERE tour_id = ? AND stamp_ns = ?",
                           (tour_id, int(stamp_ns)))
        return Keyframe.from_dict(decode_json(rows[0][0], "keyframe")) if rows else None

    def keyframes(self, tour_id: str | None = None) -> list[Keyframe]:
        if tour_id is None:
            rows = self._query("SELECT data FROM keyframes ORDER BY tour_id, stamp_ns")
        else:
            rows = self._query("SELECT data FROM keyframes WHERE tour_id = ? ORDER BY stamp_ns",
                               (tour_id,))
        return [Keyframe.from_dict(decode_json(r[0], "keyframe")) for r in rows]

    def count_keyframes(self, tour_id: str | None = None) -> int:
        if tour_id is None:
            return self._query("SELECT count(*) FROM keyframes")[0][0]
        return self._query("SELECT count(*) FROM keyframes WHERE tour_id = ?", (tour_id,))[0][0]

    def tours(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT tour_id FROM keyframes ORDER BY tour_id")]

    # --- merge bookkeeping ---------------------------------------------------------------------
    def chunk_merged(self, chunk_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM chunks WHERE chunk_id = ?", (chunk_id,)))

    def merged_chunks(self, tour_id: str | None = None) -> set[str]:
        if tour_id is None:
            return {r[0] for r in self._query("SELECT chunk_id FROM chunks")}
        return {r[0] for r in self._query("SELECT chunk_id FROM chunks WHERE tour_id = ?", (tour_id,))}

    def apply_merge(self, chunk_id: str, objects: Sequence[ObjectNode],
                    relations: Sequence[Relation], removed_ids: Sequence[str] = ()) -> bool:
        with self._tx() as con:
            if con.execute("SELECT 1 FROM chunks WHERE chunk_id = ?", (chunk_id,)).fetchone():
                return False
            if removed_ids:
                self._delete_objects(con, list(removed_ids))
            for obj in last_per_id(objects):  # serialised one by one inside the transaction: a bad one rolls back
                self._replace_object(con, obj)
            batch = merge_relation_batch(relations)
            if batch:
                ids = sorted({i for key in batch for i in (key[0], key[2])})
                known = {r[0] for r in con.execute(
                    "SELECT id FROM objects WHERE id IN (SELECT value FROM json_each(?))",
                    (_json_list(ids),))}
                check_relation_endpoints(batch.values(), known)
            for rel in batch.values():
                old = con.execute("SELECT stamps, tour_id FROM relations WHERE subject = ? AND "
                                  "predicate = ? AND object = ?", rel.key).fetchone()
                stamps = union_stamps(decode_json(old[0], "relation") if old else [], rel.stamps)
                tour = (old[1] if old and old[1] else rel.tour_id) or ""
                con.execute("INSERT INTO relations(subject, predicate, object, stamps, tour_id) "
                            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(subject, predicate, object) DO "
                            "UPDATE SET stamps = excluded.stamps, tour_id = excluded.tour_id",
                            (*rel.key, _json_list(stamps), tour))
            con.execute("INSERT INTO chunks(chunk_id, tour_id, merged_at_ns) VALUES (?, ?, ?)",
                        (chunk_id, tour_of_chunk(chunk_id), time.time_ns()))
            return True

    def _delete_objects(self, con: sqlite3.Connection, ids: list[str]) -> None:
        ids_json = _json_list(ids)
        if self.spatial == "rtree":
            con.execute("DELETE FROM objects_rtree WHERE rid IN (SELECT rid FROM objects WHERE id IN "
                        "(SELECT value FROM json_each(?)))", (ids_json,))
        con.execute("DELETE FROM object_labels WHERE object_id IN (SELECT value FROM json_each(?))", (ids_json,))
        con.execute("DELETE FROM observations WHERE object_id IN (SELECT value FROM json_each(?))", (ids_json,))
        con.execute("DELETE FROM relations WHERE subject IN (SELECT value FROM json_each(?)) "
                    "OR object IN (SELECT value FROM json_each(?))", (ids_json, ids_json))
        con.execute("DELETE FROM objects WHERE id IN (SELECT value FROM json_each(?))", (ids_json,))

    def _replace_object(self, con: sqlite3.Connection, obj: ObjectNode) -> None:
        data = object_json(obj)
        pos = object_position(obj)
        x, y = pos if pos else (None, None)
        rid = con.execute(
            "INSERT INTO objects(id, label, x, y, last_seen_ns, data) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET label = excluded.label, x = excluded.x, y = excluded.y, "
            "last_seen_ns = excluded.last_seen_ns, data = excluded.data RETURNING rid",
            (obj.id, obj.label, x, y, int(obj.last_seen_ns), data)).fetchone()[0]
        if self.spatial == "rtree":
            con.execute("DELETE FROM objects_rtree WHERE rid = ?", (rid,))
            if pos:
                con.execute("INSERT INTO objects_rtree(rid, min_x, max_x, min_y, max_y) "
                            "VALUES (?, ?, ?, ?, ?)", (rid, x, x, y, y))
        con.execute("DELETE FROM object_labels WHERE object_id = ?", (obj.id,))
        con.executemany("INSERT INTO object_labels(label, object_id, last_seen_ns) VALUES (?, ?, ?)",
                        [(label, obj.id, int(obj.last_seen_ns)) for label in object_labels(obj)])
        con.execute("DELETE FROM observations WHERE object_id = ?", (obj.id,))
        con.executemany("INSERT INTO observations(tour_id, stamp_ns, object_id) VALUES (?, ?, ?)",
                        [(t, s, obj.id) for t, s in object_frames(obj)])

    # --- objects -------------------------------------------------------------------------------
    def get_objects(self, ids: Iterable[str]) -> list[ObjectNode]:
        wanted = list(ids)
        if not wanted:
            return []
        rows = self._query("SELECT id, data FROM objects WHERE id IN "
                           "(SELECT value FROM json_each(?))", (_json_list(wanted),))
        found = {r[0]: r[1] for r in rows}
        return [_obj(found[i]) for i in wanted if i in found]

    def objects_after(self, after_id: str, limit: int) -> list[ObjectNode]:
        if limit <= 0:
            return []
        rows = self._query("SELECT data FROM objects WHERE id > ? ORDER BY id LIMIT ?", (after_id, int(limit)))
        return [_obj(data) for (data,) in rows]

    def count_objects(self) -> int:
        return self._query("SELECT count(*) FROM objects")[0][0]

    def _near_sql(self, x: float, y: float, radius: float, limit: int) -> tuple[str, tuple]:
        d2 = "((o.x - ?) * (o.x - ?) + (o.y - ?) * (o.y - ?))"
        box = (x - radius, x + radius, y - radius, y + radius)
        if self.spatial == "rtree":
            # The R*Tree keeps 32-bit bounds rounded outwards: use it to find candidates (box
            # overlap) and the exact REAL columns for the distance.
            sql = (f"SELECT o.data, {d2} AS d2 FROM objects_rtree r JOIN objects o ON o.rid = r.rid "
                   "WHERE r.max_x >= ? AND r.min_x <= ? AND r.max_y >= ? AND r.min_y <= ? "
                   "AND d2 <= ? ORDER BY d2, o.id LIMIT ?")
        else:
            sql = (f"SELECT o.data, {d2} AS d2 FROM objects o "
                   "WHERE o.x BETWEEN ? AND ? AND o.y BETWEEN ? AND ? "
                   "AND d2 <= ? ORDER BY d2, o.id LIMIT ?")
        return sql, (x, x, y, y, *box, radius * radius, int(limit))

    def objects_near(self, x: float, y: float, radius: float, limit: int = 50) -> list[ObjectNode]:
        if radius < 0 or limit <= 0:
            return []
        sql, params = self._near_sql(float(x), float(y), float(radius), limit)
        return [_obj(r[0]) for r in self._query(sql, params)]

    def objects_by_label(self, labels: Iterable[str], limit: int = 50) -> list[ObjectNode]:
        wanted = sorted({s.strip().lower() for s in labels if s and s.strip()})
        if not wanted or limit <= 0:
            return []
        # Per label, an index range scan that stops after ``limit`` rows; then merge the few.
        best: dict[str, int] = {}
        with self._lock:
            for label in wanted:
                for object_id, seen in self._query(
                        "SELECT object_id, last_seen_ns FROM object_labels WHERE label = ? "
                        "ORDER BY last_seen_ns DESC, object_id LIMIT ?", (label, int(limit))):
                    best[object_id] = seen
            top = sorted(best, key=lambda i: (-best[i], i))[:limit]
            return self.get_objects(top)

    def objects_in_frames(self, frames: Iterable[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        out: dict[tuple[str, int], list[str]] = {}
        with self._lock:
            for tour_id, stamp in frames:
                key = (tour_id, int(stamp))
                if key not in out:
                    out[key] = [r[0] for r in self._query(
                        "SELECT object_id FROM observations WHERE tour_id = ? AND stamp_ns = ? "
                        "ORDER BY object_id", key)]
        return out

    def recent_objects(self, tour_id: str, since_ns: int, limit: int = 50) -> list[ObjectNode]:
        if limit <= 0:
            return []
        rows = self._query(
            "SELECT o.data FROM (SELECT object_id, max(stamp_ns) AS seen FROM observations "
            "WHERE tour_id = ? AND stamp_ns >= ? GROUP BY object_id) s "
            "JOIN objects o ON o.id = s.object_id ORDER BY s.seen DESC, o.id LIMIT ?",
            (tour_id, int(since_ns), int(limit)))
        return [_obj(r[0]) for r in rows]

    # --- relations -----------------------------------------------------------------------------
    def relations_of(self, ids: Iterable[str], limit: int = 200) -> list[Relation]:
        wanted = _json_list(sorted(set(ids)))
        rows = self._query(
            "SELECT subject, predicate, object, stamps, tour_id FROM relations "
            "WHERE subject IN (SELECT value FROM json_each(?1)) UNION "
            "SELECT subject, predicate, object, stamps, tour_id FROM relations "
            "WHERE object IN (SELECT value FROM json_each(?1)) "
            "ORDER BY 1, 2, 3 LIMIT ?2", (wanted, int(limit)))
        return [_rel(r) for r in rows]

    def iter_relations(self) -> Iterator[Relation]:
        after = ("", "", "")
        while True:
            rows = self._query(
                "SELECT subject, predicate, object, stamps, tour_id FROM relations "
                "WHERE (subject, predicate, object) > (?, ?, ?) "
                "ORDER BY subject, predicate, object LIMIT ?", (*after, _PAGE))
            for r in rows:
                yield _rel(r)
            if len(rows) < _PAGE:
                return
            after = tuple(rows[-1][:3])

    def count_relations(self) -> int:
        return self._query("SELECT count(*) FROM relations")[0][0]

    # --- misc ----------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as con:
            con.execute("INSERT INTO meta(key, value) VALUES (?, ?) "
                        "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, str(value)))

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._con.close()


def _json_list(values: Sequence[Any]) -> str:
    import json

    return json.dumps(list(values))


def _obj(data: str) -> ObjectNode:
    return ObjectNode.from_dict(decode_json(data, "object"))


def _rel(row: tuple) -> Relation:
    subject, predicate, obj, stamps, tour_id = row
    return Relation(subject, predicate, obj, [int(s) for s in decode_json(stamps, "relation")], tour_id)
