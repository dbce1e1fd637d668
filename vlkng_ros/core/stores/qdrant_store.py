"""Vector store on ``qdrant-client``: embedded local mode (a folder, or ``:memory:``) or a server.

Point ids: Qdrant accepts only unsigned ints or UUIDs, so each string id is mapped to
``uuid5(VLKNG_POINT_NS, id)`` (deterministic: re-upserting an id replaces its point) and the
original string is kept in the payload under ``_vlkng_id`` (hidden from returned payloads).
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any, Sequence

import numpy as np

from .base import StoreError, VectorHit, VectorStore

log = logging.getLogger("vlkng.stores.qdrant")

VLKNG_POINT_NS = uuid.UUID("6f1c2a4e-8d1b-5b7e-9a51-7c3f0e2d4b18")
_ID_KEY = "_vlkng_id"
_COLLECTION_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")
_BATCH = 512
INDEXED_PAYLOAD_KEYS = ("object_id", "tour_id")


def point_uuid(point_id: str) -> str:
    return str(uuid.uuid5(VLKNG_POINT_NS, point_id))


class QdrantVectorStore(VectorStore):
    name = "qdrant"

    def __init__(self, path: str | None = None, url: str | None = None,
                 api_key: str | None = None, timeout_s: float = 30.0) -> None:
        """``path``: local-mode folder (or ':memory:'); ``url``: a server (wins over path)."""
        from qdrant_client import QdrantClient

        self.remote = bool(url)
        self.target = url or path or ":memory:"
        try:
            if url:
                self._client = QdrantClient(url=url, api_key=api_key or None, timeout=int(timeout_s))
                self._client.get_collections()  # fail now, with the URL, if it is not there
            elif path in (None, ":memory:"):
                self._client = QdrantClient(location=":memory:")
            else:
                self._client = QdrantClient(path=str(path))
        except Exception as e:  # connection, lock and permission errors come in many types
            raise StoreError(f"cannot open Qdrant at {self.target}: {type(e).__name__}: {e}") from e
        self._dims: dict[str, int] = {}

    # ----------------------------------------------------------------------------------------
    def ensure_collection(self, collection: str, dim: int) -> None:
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
            if self.remote:  # local mode ignores payload indexes (and warns about them)
                for key in INDEXED_PAYLOAD_KEYS:
                    self._client.create_payload_index(collection, key,
                                                      field_schema=models.PayloadSchemaType.KEYWORD)
        self._dims[collection] = int(dim)

    def _collection_dim(self, collection: str) -> int:
        vectors = self._client.get_collection(collection).config.params.vectors
        if isinstance(vectors, dict):  # named vectors: not ours
            raise StoreError(f"collection {collection!r} at {self.target} uses named vectors")
        return int(vectors.size)

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
        self.ensure_collection(collection, vecs.shape[1])
        points = [models.PointStruct(id=point_uuid(str(pid)), vector=vec.tolist(),
                                     payload={**payload, _ID_KEY: str(pid)})
                  for pid, vec, payload in zip(ids, vecs, payloads)]
        for start in range(0, len(points), _BATCH):
            self._client.upsert(collection, points=points[start:start + _BATCH], wait=True)

    def search(self, collection: str, vector: np.ndarray, limit: int,
               where: dict[str, Any] | None = None) -> list[VectorHit]:
        from qdrant_client import models

        _check_collection(collection)
        if limit <= 0 or not self._client.collection_exists(collection):
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        dim = self._dims.get(collection) or self._collection_dim(collection)
        if query.shape[0] != dim:
            raise ValueError(f"search: {query.shape[0]}-d query on {dim}-d collection {collection!r}")
        flt = None
        if where:
            flt = models.Filter(must=[models.FieldCondition(key=k, match=models.MatchValue(value=v))
                                      for k, v in sorted(where.items())])
        res = self._client.query_points(collection, query=query.tolist(), limit=int(limit),
                                        query_filter=flt, with_payload=True)
        hits = []
        for p in res.points:
            payload = dict(p.payload or {})
            hits.append(VectorHit(str(payload.pop(_ID_KEY, p.id)), float(p.score), payload))
        return hits

    def count(self, collection: str) -> int:
        _check_collection(collection)
        if not self._client.collection_exists(collection):
            return 0
        return int(self._client.count(collection, exact=True).count)

    def close(self) -> None:
        self._client.close()


def _check_collection(name: str) -> None:
    if not _COLLECTION_RE.match(name or ""):
        raise ValueError(f"invalid collection name {name!r}")
