"""Vector store on ``qdrant-client``: embedded local mode (a folder, or ``:memory:``) or a server.

Point ids: Qdrant accepts only unsigned ints or UUIDs, so each string id is mapped to
``uuid5(VLKNG_POINT_NS, id)`` (deterministic: re-upserting an id replaces its point) and the
original string is kept in the payload under ``_vlkng_id`` (hidden from returned payloads).

Local mode (a folder or ``:memory:``) answers searches from an in-process ANN index per collection
(``ann.AnnIndex``) instead of qdrant-client's Python brute force, whose cost grows linearly with the
collection. Qdrant stays the source of truth: the index is loaded from Qdrant's points (a scroll
with vectors) the first time a collection is used after opening. In folder mode the trained
quantiser and every point's list are saved beside Qdrant's data (``<folder>/vlkng_ann/<collection>
.npz``, at close and after a training) and reused on the next open when they fit the points (id and
vector fingerprint per point; see ``AnnIndex.bulk_load``), so opening a 100k collection does not
re-run k-means; a missing, stale or unreadable file only costs a re-training. Upserts write Qdrant
first, then the index, batch by batch, serialised by a writer lock; searches take only a short
lock to find the index, so they never wait for an upsert's re-training. Filters the index cannot
evaluate (nested keys, non-scalar values) go to Qdrant's own filtered search. A server has its own
HNSW index and is queried directly. The two modes differ in one seam: ``_ServerMode`` /
``_LocalMode``, chosen when the store opens.

Opening a folder does not import qdrant-client (seconds of pydantic model building): a writer takes
``<folder>/.vlkng-writer.lock`` (one writer at a time, checked at opening) and a reader takes
nothing; searches and counts are answered from each collection's points mirror (``_Mirror``:
written at a writer's close, used only while Qdrant's files are unchanged), and Qdrant itself is
opened at the first write or the first use a fresh mirror cannot serve.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import uuid
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .ann import AnnIndex, filter_supported
from .base import StoreError, VectorHit, VectorStore

log = logging.getLogger("vlkng.stores.qdrant")

VLKNG_POINT_NS = uuid.UUID("6f1c2a4e-8d1b-5b7e-9a51-7c3f0e2d4b18")
_ID_KEY = "_vlkng_id"
_COLLECTION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")
_BATCH = 512
_SCROLL_PAGE = 4096
INDEXED_PAYLOAD_KEYS = ("object_id", "tour_id")


def point_uuid(point_id: str) -> str:
    return str(uuid.uuid5(VLKNG_POINT_NS, point_id))


class QdrantVectorStore(VectorStore):
    name = "qdrant"

    def __init__(self, path: str | None = None, url: str | None = None,
                 api_key: str | None = None, timeout_s: float = 30.0,
                 ann_exact_below: int = 4096, ann_state_dir: str | None = None) -> None:
        """``path``: local-mode folder (or ':memory:'); ``url``: a server (wins over path).
        ``ann_exact_below``: local-mode collections smaller than this are searched exactly.
        ``ann_state_dir``: where trained ANN state is kept (default ``<path>/vlkng_ann`` for a
        folder, none for ':memory:')."""
        self.target = url or path or ":memory:"
        self._url, self._api_key, self._timeout_s = url, api_key, timeout_s
        self._client_obj: Any = None
        self._dims: dict[str, int] = {}
        self._lock = threading.RLock()  # client calls and the mode's index table; held briefly
        self._write_lock = threading.RLock()  # one upsert at a time (Qdrant, then the index)
        folder = None if url or path in (None, ":memory:") else Path(str(path))
        # The one place local and server mode differ (see _ServerMode / _LocalMode).
        if url:
            self._mode: _ServerMode | _LocalMode = _ServerMode(self._connected)
        else:
            state_dir = ann_state_dir or (None if folder is None else str(folder / "vlkng_ann"))
            self._mode = _LocalMode(self._connected, self.target, int(ann_exact_below),
                                    Path(state_dir) if state_dir else None,
                                    mirror=None if folder is None else _Mirror(folder, Path(state_dir)),
                                    writes=not self._reader)
        self._writer_lock: Any = None
        if folder is not None and not self._reader:
            # one writer per folder, checked now; Qdrant itself opens at the first use the
            # mirror cannot serve (a restarted node answers without importing qdrant-client)
            self._writer_lock = _writer_lock(folder)
        elif not self._reader:
            self._connected()  # fail now (URL, credentials), not at the first write

    _reader = False  # a reader's snapshot never writes into the memory (see _SnapshotQdrant)

    def _connect(self) -> Any:
        from qdrant_client import QdrantClient

        if self._url:
            client = QdrantClient(url=self._url, api_key=self._api_key or None, timeout=int(self._timeout_s))
            client.get_collections()  # fail now, with the URL, if it is not there
            return client
        if self.target == ":memory:":
            return QdrantClient(location=":memory:")
        return QdrantClient(path=str(self.target))

    def _connected(self) -> Any:
        """The qdrant-client instance, opened on first use (importing qdrant-client takes seconds)."""
        with self._lock:
            if self._client_obj is None:
                try:
                    self._client_obj = self._connect()
                except StoreError:
                    raise
                except Exception as e:  # connection, lock and permission errors come in many types
                    raise StoreError(f"cannot open Qdrant at {self.target}: {type(e).__name__}: {e}") from e
            return self._client_obj

    @property
    def _client(self) -> Any:
        return self._connected()

    @property
    def ann_loads(self) -> dict[str, str]:
        """Collection -> how its local ANN index was loaded (``AnnIndex.bulk_load``); {} on a server."""
        return self._mode.loads

    def unload_indexes(self) -> None:
        """Forget the in-process ANN indexes (saved state stays); the next use reloads them from
        Qdrant as opening the memory would (benchmarks time that)."""
        with self._write_lock, self._lock:
            self._mode.unload()

    # ----------------------------------------------------------------------------------------
    def ensure_collection(self, collection: str, dim: int) -> None:
        with self._lock:
            self._ensure_collection(collection, dim)

    def _ensure_collection(self, collection: str, dim: int) -> None:
        from qdrant_client import models

        _check_collection(collection)
        if self._dims.get(collection) == dim:
            return
        if self._client.collection_exists(collection):
            have = self._collection_dim(collection)
            if have != dim:
                raise StoreError(f"collection {collection!r} at {self.target} holds {have}-d vectors, "
                                 f"not {dim}-d (use another collection or embedder)")
        else:
            self._client.create_collection(
                collection, vectors_config=models.VectorParams(size=int(dim),
                                                               distance=models.Distance.COSINE))
            self._mode.created(collection)
        self._dims[collection] = int(dim)

    def _collection_dim(self, collection: str) -> int:
        return _collection_dim(self._client, collection, self.target)

    def upsert(self, collection: str, ids: Sequence[str], vectors: np.ndarray,
               payloads: Sequence[dict[str, Any]]) -> None:
        from qdrant_client import models

        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or len(ids) != vecs.shape[0] or len(payloads) != len(ids):
            raise ValueError(f"upsert: {len(ids)} ids, {len(payloads)} payloads and vectors of "
                             f"shape {vecs.shape} do not line up")
        if not np.isfinite(vecs).all():
            raise ValueError("upsert: vectors contain NaN or inf")
        if len(ids) == 0:
            return
        points = [models.PointStruct(id=point_uuid(str(pid)), vector=vec.tolist(),
                                     payload={**payload, _ID_KEY: str(pid)})
                  for pid, vec, payload in zip(ids, vecs, payloads)]
        with self._write_lock:
            with self._lock:
                self._ensure_collection(collection, vecs.shape[1])
                index = self._mode.index(collection)
            trainings = index.trainings if index is not None else 0
            for start in range(0, len(points), _BATCH):
                with self._lock:
                    self._client.upsert(collection, points=points[start:start + _BATCH], wait=True)
                if index is not None:  # what Qdrant stored, so the index returns the same payloads
                    stop = start + _BATCH  # (it may re-train here, holding neither lock)
                    index.upsert([str(pid) for pid in ids[start:stop]], vecs[start:stop],
                                 [_stored_payload(p) for p in payloads[start:stop]])
            if index is not None and index.trainings != trainings:
                self._mode.save_state(collection, index)

    def search(self, collection: str, vector: np.ndarray, limit: int,
               where: dict[str, Any] | None = None) -> list[VectorHit]:
        _check_collection(collection)
        with self._lock:  # held only to find the index; the index has its own lock
            index = self._mode.loaded(collection)
            if index is None:
                index = self._mode.mirrored(collection)
            if index is None:
                if limit <= 0 or not self._client.collection_exists(collection):
                    return []
                index = self._mode.index(collection)
            dim = index.dim if index is not None else (
                self._dims.get(collection) or self._collection_dim(collection))
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != dim:
            raise ValueError(f"search: {query.shape[0]}-d query on {dim}-d collection "
                             f"{collection!r}")
        if limit <= 0:
            return []
        if not np.isfinite(query).all():
            raise ValueError("search: query contains NaN or inf")
        if index is not None and filter_supported(where):
            return [VectorHit(h.point_id, h.score, h.payload)
                    for h in index.search(query, int(limit), where)]
        with self._lock:
            return self._qdrant_search(collection, query, int(limit), where)

    def _qdrant_search(self, collection: str, query: np.ndarray, limit: int,
                       where: dict[str, Any] | None) -> list[VectorHit]:
        from qdrant_client import models

        flt = None
        if where:
            flt = models.Filter(must=[models.FieldCondition(key=k, match=models.MatchValue(value=v))
                                      for k, v in sorted(where.items())])
        res = self._client.query_points(collection, query=query.tolist(), limit=limit,
                                        query_filter=flt, with_payload=True)
        hits = []
        for p in res.points:
            payload = dict(p.payload or {})
            hits.append(VectorHit(str(payload.pop(_ID_KEY, p.id)), float(p.score), payload))
        return hits

    def count(self, collection: str) -> int:
        _check_collection(collection)
        with self._lock:
            index = self._mode.loaded(collection)
            if index is None:
                index = self._mode.mirrored(collection)
            if index is not None:
                return len(index)
            if not self._client.collection_exists(collection):
                return 0
            return int(self._client.count(collection, exact=True).count)

    def ann_stats(self, collection: str) -> dict[str, Any] | None:
        """The local ANN index's size, list count, nprobe and array memory (None on a server)."""
        with self._lock:
            index = self._mode.index(collection)
            return None if index is None else index.stats()

    def close(self) -> None:
        """Save each changed local index's trained state, then close the client; then refresh
        the points mirror (``_Mirror``) of each collection used, where it is stale."""
        with self._write_lock, self._lock:
            try:
                used = self._mode.unload()
                if self._client_obj is None:
                    return
                pending = self._mode.mirrors_due(used + self._mode.collections())
                self._client_obj.close()
                self._mode.write_mirrors(pending)
            finally:
                if self._writer_lock is not None:
                    self._writer_lock.close()  # releases the flock
                    self._writer_lock = None


def _collection_dim(client: Any, collection: str, where: str) -> int:
    vectors = client.get_collection(collection).config.params.vectors
    if isinstance(vectors, dict):  # named vectors: not ours
        raise StoreError(f"collection {collection!r} at {where} uses named vectors")
    return int(vectors.size)


class _ServerMode:
    """A Qdrant server: it indexes the payload keys searches filter on and answers every search
    with its own HNSW index (no in-process index)."""

    def __init__(self, client: Callable[[], Any]) -> None:
        self._client_fn = client
        self.loads: dict[str, str] = {}

    @property
    def client(self) -> Any:
        return self._client_fn()

    def created(self, collection: str) -> None:
        from qdrant_client import models

        for key in INDEXED_PAYLOAD_KEYS:
            self.client.create_payload_index(collection, key, field_schema=models.PayloadSchemaType.KEYWORD)

    def index(self, collection: str) -> None:
        return None

    def loaded(self, collection: str) -> None:
        return None

    def mirrored(self, collection: str) -> None:
        return None

    def save_state(self, collection: str, index: AnnIndex) -> None:  # pragma: no cover - never has one
        pass

    def unload(self) -> list[str]:
        return []

    def mirrors_due(self, collections: list[str]) -> list[Any]:
        return []

    def collections(self) -> list[str]:
        return []

    def write_mirrors(self, pending: list[Any]) -> None:
        pass


class _LocalMode:
    """Embedded Qdrant (a folder or ':memory:'): searches are answered by an in-process ANN index
    per collection, loaded from Qdrant's points on first use, its trained state kept in
    ``state_dir`` (none for ':memory:'). Local mode ignores payload indexes (and warns about them),
    so none are created. Called with the store's lock held."""

    def __init__(self, client: Callable[[], Any], target: str, exact_below: int, state_dir: Path | None,
                 mirror: _Mirror | None = None, writes: bool = True) -> None:
        self._client_fn = client
        self._mirror = mirror
        self._writes = writes  # False for a reader: never writes ANN state or mirrors
        self.target = target
        self.exact_below = exact_below
        self._state_dir = state_dir
        self._indexes: dict[str, AnnIndex] = {}
        self._saved_version: dict[str, int] = {}  # index version last written to the state dir
        self.loads: dict[str, str] = {}  # collection -> how its index was loaded (bulk_load)

    @property
    def client(self) -> Any:
        return self._client_fn()

    def created(self, collection: str) -> None:
        pass

    def loaded(self, collection: str) -> AnnIndex | None:
        """The collection's index if it is loaded already (never loads)."""
        return self._indexes.get(collection)

    def unload(self) -> list[str]:
        """Save each changed index's trained state and forget the indexes (returns their names)."""
        for collection, index in self._indexes.items():
            self.save_state(collection, index)
        names = list(self._indexes)
        self._indexes.clear()
        return names

    def mirrored(self, collection: str) -> AnnIndex | None:
        """The collection's index loaded from its points mirror, without Qdrant; None when there
        is no fresh mirror (the caller then asks Qdrant)."""
        points = None if self._mirror is None else self._mirror.read(collection)
        if points is None:
            return None
        return self._install(collection, points, "mirror")

    def index(self, collection: str) -> AnnIndex | None:
        """The collection's ANN index, built on first use from its fresh mirror, else from
        Qdrant's points."""
        index = self._indexes.get(collection)
        if index is None:
            index = self.mirrored(collection)
        if index is None and self.client.collection_exists(collection):
            dim = _collection_dim(self.client, collection, self.target)
            points = self.local_points(collection, dim)
            if points is None:
                points = self.scrolled_points(collection, dim)
            index = self._install(collection, (*points, dim), "qdrant")
        return index

    def _install(self, collection: str, points: tuple[list[str], np.ndarray, list[dict[str, Any]], int],
                 source: str) -> AnnIndex:
        ids, vecs, payloads, dim = points
        index = AnnIndex(dim, exact_below=self.exact_below)
        how = index.bulk_load(ids, vecs, payloads, self._load_state(collection))
        self._indexes[collection] = index
        self.loads[collection] = how
        if how == "reused":
            self._saved_version[collection] = index.version
        elif index.trained:
            self.save_state(collection, index)
        log.debug("ANN index for %r loaded from %d points of its %s (%s): %s", collection, len(index),
                  source, how, index.stats())
        return index

    def collections(self) -> list[str]:
        """Every collection in Qdrant ([] for a reader: it writes no mirrors)."""
        if self._mirror is None or not self._writes:
            return []
        try:
            return [c.name for c in self.client.get_collections().collections]
        except Exception as e:  # noqa: BLE001 - only for the mirrors
            log.debug("cannot list collections: %s", e)
            return []

    def mirrors_due(self, collections: list[str]) -> list[tuple[str, Any, str]]:
        """(collection, points, Qdrant's file stamp) of each collection whose mirror is stale,
        read while the client is still open (see ``write_mirrors``)."""
        if self._mirror is None or not self._writes:
            return []
        due = []
        for collection in dict.fromkeys(collections):
            if self._mirror.read(collection, check_only=True) is not None:
                continue
            try:
                if not self.client.collection_exists(collection):
                    continue
                dim = _collection_dim(self.client, collection, self.target)
                points = self.local_points(collection, dim) or self.scrolled_points(collection, dim)
            except Exception as e:  # noqa: BLE001 - the mirror is only a cache
                log.warning("cannot mirror the points of %r: %s", collection, e)
                continue
            due.append((collection, points, self._mirror.stamp(collection)))
        return due

    def write_mirrors(self, pending: list[tuple[str, Any, str]]) -> None:
        """Write each mirror with the stamp read before the client closed, only if Qdrant's files
        still carry it after closing (nobody wrote in between)."""
        for collection, points, stamp in pending:
            if self._mirror is not None and self._mirror.stamp(collection) == stamp:
                self._mirror.write(collection, points, stamp)

    def scrolled_points(self, collection: str,
                        dim: int) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
        """Every point (id, vector, payload) through the public scroll API."""
        ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        vectors: list[np.ndarray] = []
        offset = None
        while True:
            records, offset = self.client.scroll(collection, limit=_SCROLL_PAGE, offset=offset,
                                                  with_payload=True, with_vectors=True)
            for r in records:
                payload = dict(r.payload or {})
                ids.append(str(payload.pop(_ID_KEY, r.id)))
                payloads.append(payload)
            if records:
                vectors.append(np.asarray([r.vector for r in records], dtype=np.float32))
            if offset is None:
                break
        vecs = np.concatenate(vectors) if vectors else np.zeros((0, dim), dtype=np.float32)
        return ids, vecs, payloads

    def local_points(self, collection: str,
                     dim: int) -> tuple[list[str], np.ndarray, list[dict[str, Any]]] | None:
        """Every point read straight from local mode's in-process arrays (qdrant-client 1.x
        ``LocalCollection``: ``vectors[""]``, ``payload``, ``ids_inv``, ``deleted``): at 100k
        points this takes a fraction of a second where the scroll, which builds a record object
        per point, takes many. None when those structures are not what this expects (another
        qdrant-client version) or disagree with Qdrant's count; the caller then scrolls."""
        try:
            local = self.client._client.collections[collection]
            vectors = local.vectors[""]
            payload_list, ids_inv = local.payload, local.ids_inv
            n = len(payload_list)
            gone = np.asarray(local.deleted[:n], dtype=bool) | \
                np.asarray(local.deleted_per_vector[""][:n], dtype=bool)
            if not (isinstance(vectors, np.ndarray) and vectors.ndim == 2 and
                    vectors.shape[0] >= n and vectors.shape[1] == dim and len(ids_inv) >= n and
                    gone.shape == (n,)):
                return None
            live = np.flatnonzero(~gone)
            ids: list[str] = []
            payloads: list[dict[str, Any]] = []
            # copies (as a scroll returns) in one JSON round trip; local payloads are JSON-able
            copies = json.loads(json.dumps([payload_list[i] for i in live.tolist()]))
            for i, payload in zip(live.tolist(), copies):
                ids.append(str(payload.pop(_ID_KEY, ids_inv[i])))
                payloads.append(payload)
            vecs = np.array(vectors[live], dtype=np.float32)
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as e:
            log.debug("local points of %r not readable directly (%s); scrolling", collection, e)
            return None
        if len(ids) != int(self.client.count(collection, exact=True).count):
            return None
        return ids, vecs, payloads

    def _state_path(self, collection: str) -> Path | None:
        return None if self._state_dir is None else self._state_dir / f"{collection}.npz"

    def _load_state(self, collection: str) -> dict[str, np.ndarray] | None:
        path = self._state_path(collection)
        if path is None or not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        except Exception as e:  # truncated or foreign file: Qdrant is the truth, re-train
            log.warning("ignoring unreadable ANN state %s (%s: %s); the index will be re-trained",
                        path, type(e).__name__, e)
            return None

    def save_state(self, collection: str, index: AnnIndex) -> None:
        """Write the index's trained state atomically (temp file, then rename); errors are
        logged, never raised: the state is only a cache of what Qdrant holds."""
        path = self._state_path(collection)
        if path is None or not self._writes or self._saved_version.get(collection) == index.version:
            return
        version = index.version
        state = index.export_state()
        if state is None:
            return
        tmp = path.with_name(path.name + ".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                np.savez(f, **state)
            os.replace(tmp, path)
            self._saved_version[collection] = version
        except OSError as e:
            log.warning("cannot save ANN state to %s: %s", path, e)


MIRROR_VERSION = 1
WRITER_LOCK = ".vlkng-writer.lock"


def _writer_lock(folder: Path) -> Any:
    """An exclusive lock on ``folder/.vlkng-writer.lock`` held by the open writer (released at
    close or process exit): a second writer of the memory fails at opening, as it would on
    Qdrant's own lock, but without importing qdrant-client first."""
    import fcntl

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fh = open(folder / WRITER_LOCK, "a+")
    except OSError as e:
        raise StoreError(f"cannot open Qdrant at {folder}: {e.strerror or e}") from e
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        fh.close()
        raise StoreError(f"cannot open Qdrant at {folder}: another process has this memory open for "
                         f"writing (one writer at a time; readers such as vlkng ask are fine)") from e
    return fh


class _Mirror:
    """A copy of one local collection's points (ids, vectors, payloads as Qdrant stored them) in
    ``<state_dir>/<collection>.points.npz``, written when a writer closes the store. It is used
    only while Qdrant's own files for the collection (``meta.json``, the collection's
    ``storage.sqlite`` and any ``-wal`` beside it: size, mtime, inode) are exactly as they were
    when it was written, so a
    write by anyone since makes it stale and the reader goes to Qdrant. A missing, stale or
    unreadable mirror costs only that."""

    def __init__(self, folder: Path, state_dir: Path) -> None:
        self.folder = folder
        self.state_dir = state_dir

    def path(self, collection: str) -> Path:
        return self.state_dir / f"{collection}.points.npz"

    def stamp(self, collection: str) -> str:
        marks = []
        storage = self.folder / "collection" / collection / "storage.sqlite"
        for f in (storage, self.folder / "meta.json", storage.with_name(storage.name + "-wal")):
            try:
                st = f.stat()
                marks.append([st.st_size, st.st_mtime_ns, st.st_ino])
            except OSError:
                marks.append(None)
        return json.dumps(marks)

    def read(self, collection: str, check_only: bool = False
             ) -> tuple[list[str], np.ndarray, list[dict[str, Any]], int] | None:
        """The mirrored points and dim, or None when missing, stale or unreadable. With
        ``check_only`` (the mirror is fresh) returns an empty tuple's stand-in without loading."""
        path = self.path(collection)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                stamp = bytes(data["stamp"]).decode()
                if int(data["version"]) != MIRROR_VERSION or stamp != self.stamp(collection) or \
                        stamp.startswith("[null"):  # no Qdrant storage for the collection
                    return None
                if check_only:
                    return [], np.zeros((0, 0), np.float32), [], 0
                ids = json.loads(bytes(data["ids"]))
                payloads = json.loads(bytes(data["payloads"]))
                vecs = np.asarray(data["vectors"], dtype=np.float32)
            if vecs.ndim != 2 or not (len(ids) == len(payloads) == vecs.shape[0]):
                raise ValueError(f"{len(ids)} ids, {len(payloads)} payloads, vectors {vecs.shape}")
            return [str(i) for i in ids], vecs, payloads, int(vecs.shape[1])
        except Exception as e:  # truncated or foreign file: Qdrant is the truth
            log.warning("ignoring unreadable points mirror %s (%s: %s); reading Qdrant", path, type(e).__name__, e)
            return None

    def write(self, collection: str, points: tuple[list[str], np.ndarray, list[dict[str, Any]]],
              stamp: str) -> None:
        ids, vecs, payloads = points
        path = self.path(collection)
        tmp = path.with_name(path.name + ".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                np.savez(f, version=np.int64(MIRROR_VERSION), stamp=_utf8(stamp),
                         ids=_utf8(json.dumps(ids)), payloads=_utf8(json.dumps(payloads)),
                         vectors=np.asarray(vecs, dtype=np.float32))
            os.replace(tmp, path)
        except (OSError, TypeError, ValueError) as e:
            log.warning("cannot write the points mirror %s: %s", path, e)


def _utf8(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8)


def _stored_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as local Qdrant stores it (a JSON round trip), so index hits and Qdrant hits
    (e.g. after reopening) carry identical payloads."""
    return json.loads(json.dumps(payload, allow_nan=True, default=_jsonable))


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    try:
        from pydantic_core import to_jsonable_python  # what qdrant-client itself falls back to
        return to_jsonable_python(value)
    except Exception:
        return str(value)


def _check_collection(name: str) -> None:
    if not _COLLECTION_RE.match(name or ""):
        raise ValueError(f"invalid collection name {name!r}")


class _SnapshotQdrant(QdrantVectorStore):
    """A reader of a memory's embedded Qdrant folder. Searches are answered from the collections'
    points mirrors while they are fresh (no qdrant-client import: a one-shot ``vlkng ask`` opens in
    milliseconds); anything else opens Qdrant on a private copy of the folder (removed at close),
    so a reader never takes the folder's lock. Never writes into the memory."""

    _reader = True

    def __init__(self, source: Path) -> None:
        self.source = source
        self._copy_dir: str | None = None
        super().__init__(path=str(source))

    def _connect(self) -> Any:
        from qdrant_client import QdrantClient

        self._copy_dir = _private_copy(self.source)
        return QdrantClient(path=self._copy_dir)

    def close(self) -> None:
        import shutil

        try:
            super().close()
        finally:
            if self._copy_dir:
                shutil.rmtree(self._copy_dir, ignore_errors=True)


def snapshot_local(folder: Path) -> QdrantVectorStore:
    """Open the embedded Qdrant ``folder`` for reading without taking its lock (see
    ``_SnapshotQdrant``). A missing folder gives an empty in-memory store (the memory then
    re-indexes from its graph)."""
    if not folder.is_dir():
        return QdrantVectorStore(path=":memory:")
    return _SnapshotQdrant(folder)


def _private_copy(folder: Path) -> str:
    """Copy the Qdrant ``folder`` to a temporary folder (SQLite files through SQLite's online
    backup, so a writer in another process never leaves a torn copy); returns its path."""
    import shutil
    import sqlite3
    import tempfile

    tmp = tempfile.mkdtemp(prefix="vlkng-qdrant-ro-")
    try:
        for src in folder.rglob("*"):
            rel = src.relative_to(folder)
            dst = Path(tmp) / rel
            if src.is_dir():
                dst.mkdir(parents=True, exist_ok=True)
                continue
            if src.name in (".lock", WRITER_LOCK) or rel.parts[0] == "vlkng_ann":  # a reader reads vlkng_ann in place
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.suffix == ".sqlite":
                con = sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=30.0)
                out = sqlite3.connect(str(dst))
                try:
                    con.backup(out)
                finally:
                    out.close()
                    con.close()
            else:
                shutil.copyfile(src, dst)
        return tmp
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreError(f"cannot read the vectors at {folder}: {e.strerror or e}") from e
    except (sqlite3.Error, StoreError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreError(f"cannot read the vectors at {folder}: {e}") from e
