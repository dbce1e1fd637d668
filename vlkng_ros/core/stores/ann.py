"""In-process approximate nearest-neighbour index (numpy only) for the local-mode vector store.

Qdrant's embedded mode searches by brute force in Python; this index keeps search time almost flat
in the collection size:

* below ``exact_below`` points it is exact brute force (one matrix-vector product);
* above, an IVF index: a spherical k-means coarse quantiser (about 2·sqrt(N) lists) trained on a
  sample; a query scores the centroids, probes the ``nprobe`` nearest lists and re-scores their
  members with exact cosine similarity, so every returned score is the exact one;
* ``nprobe`` is calibrated at each training, not guessed: held-out data points are used as queries
  and the smallest ``nprobe`` that recovers ``target_recall`` of their exact top-10 is kept
  (data with no cluster structure therefore gets a large ``nprobe``: slower, never silently worse);
* adds go to the nearest list; re-upserting an id replaces its vector and moves it between lists;
  the quantiser is re-trained when the collection has grown by ``retrain_growth`` since the last
  training.

Exact-match payload filters (the store's ``where``) are answered from per-key posting sets, built
the first time a key is filtered on and then kept up to date. A selective filter is answered
exactly over its matching points; a broad one filters the probed candidates (probing more lists
until enough survive). All public methods take one lock, so searches may run while another thread
upserts.
"""

from __future__ import annotations

import copy
import math
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

EPSILON = 1e-12  # vectors with a smaller norm are kept as they are (as Qdrant does)
CALIBRATION_K = 10
_ASSIGN_BATCH = 8192


@dataclass(frozen=True)
class AnnHit:
    point_id: str
    score: float  # cosine similarity, computed exactly
    payload: dict[str, Any]


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); near-zero rows are left unchanged."""
    vecs = np.array(vectors, dtype=np.float32, ndmin=2)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms > EPSILON, norms, 1.0)


def _tag(value: Any) -> tuple[str, Any] | None:
    """Posting key for a payload value, with Qdrant's exact-match typing: bool, int/str and float
    are distinct (Python alone would match True with 1 and 1 with 1.0)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, float):
        return ("f", value)
    if isinstance(value, (int, str)):
        return ("v", value)
    return None


def _flat_values(value: Any) -> list[Any]:
    """A payload value as the scalars an exact-match condition compares against (arrays match
    when any element matches)."""
    if isinstance(value, list):
        return [v for item in value for v in _flat_values(item)]
    return [value]


def filter_supported(where: dict[str, Any] | None) -> bool:
    """Whether the index can answer this filter itself: top-level keys and bool/int/str values
    (what an exact-match condition accepts). Anything else goes to the backend's own filter."""
    if not where:
        return True
    return all(isinstance(k, str) and k and not any(c in k for c in ".[]") and
               isinstance(v, (bool, int, str)) for k, v in where.items())


class AnnIndex:
    """Unit vectors with string ids and payloads; top-k by cosine similarity. See module doc."""

    def __init__(self, dim: int, *, exact_below: int = 4096, retrain_growth: float = 2.0,
                 target_recall: float = 0.99, min_probe: int = 8, seed: int = 0) -> None:
        if dim <= 0:
            raise ValueError(f"dim must be positive, not {dim}")
        self.dim = int(dim)
        self.exact_below = max(1, int(exact_below))
        self.retrain_growth = max(1.1, float(retrain_growth))
        self.target_recall = float(target_recall)
        self.min_probe = max(1, int(min_probe))
        self._seed = int(seed)
        self._lock = threading.RLock()
        self._vecs = np.zeros((0, self.dim), dtype=np.float32)  # capacity rows; first _n used
        self._n = 0
        self._ids: list[str] = []
        self._payloads: list[dict[str, Any]] = []
        self._slot_of: dict[str, int] = {}
        # IVF state (None while brute force)
        self._centroids: np.ndarray | None = None
        self._list_of = np.zeros(0, dtype=np.int64)   # slot -> list
        self._pos_of = np.zeros(0, dtype=np.int64)    # slot -> position inside its list
        self._lists: list[np.ndarray] = []            # list -> slots (capacity arrays)
        self._list_sizes: list[int] = []
        self.nprobe = 0
        self.trained_at = 0  # collection size at the last training
        self.trainings = 0
        # payload postings: key -> tagged value -> slots (only for keys ever filtered on)
        self._postings: dict[str, dict[tuple[str, Any], set[int]]] = {}
        self._posting_arrays: dict[tuple[str, tuple[str, Any]], np.ndarray] = {}

    # ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    @property
    def trained(self) -> bool:
        return self._centroids is not None

    def stats(self) -> dict[str, Any]:
        with self._lock:
            lists = len(self._lists) if self.trained else 0
            mem = self._vecs.nbytes + sum(a.nbytes for a in self._lists) + self._list_of.nbytes * 2
            if self._centroids is not None:
                mem += self._centroids.nbytes
            return {"points": self._n, "lists": lists, "nprobe": self.nprobe,
                    "trained_at": self.trained_at, "trainings": self.trainings,
                    "array_bytes": int(mem)}

    # ------------------------------------------------------------------------------------------
    def upsert(self, ids: Sequence[str], vectors: np.ndarray,
               payloads: Sequence[dict[str, Any]]) -> None:
        """Insert or replace points (by id). Payloads are stored as given (pass JSON-like dicts)."""
        vecs = unit_rows(vectors)
        if vecs.shape != (len(ids), self.dim) or len(payloads) != len(ids):
            raise ValueError(f"upsert: {len(ids)} ids, {len(payloads)} payloads and vectors of "
                             f"shape {np.shape(vectors)} do not line up (dim {self.dim})")
        if len(ids) == 0:
            return
        with self._lock:
            slots = np.empty(len(ids), dtype=np.int64)
            for i, (pid, payload) in enumerate(zip(ids, payloads)):
                pid = str(pid)
                slot = self._slot_of.get(pid)
                if slot is None:
                    slot = self._new_slot(pid)
                else:
                    self._unpost(slot)
                self._payloads[slot] = payload
                self._post(slot)
                slots[i] = slot
            # a repeated id inside one batch: the last vector wins (as in the backend)
            self._vecs[slots] = vecs
            if self.trained:
                self._assign(np.unique(slots))
            if self._n >= self.exact_below and (
                    not self.trained or self._n >= self.retrain_growth * self.trained_at):
                self._train()

    def _new_slot(self, pid: str) -> int:
        slot = self._n
        if slot >= self._vecs.shape[0]:
            cap = max(1024, 2 * self._vecs.shape[0])
            grown = np.zeros((cap, self.dim), dtype=np.float32)
            grown[:slot] = self._vecs[:slot]
            self._vecs = grown
            self._list_of = np.resize(self._list_of, cap)
            self._pos_of = np.resize(self._pos_of, cap)
            self._list_of[slot:] = -1
        self._list_of[slot] = -1
        self._n += 1
        self._ids.append(pid)
        self._payloads.append({})
        self._slot_of[pid] = slot
        return slot

    # ------------------------------------------------------------------------------------------
    def search(self, query: np.ndarray, limit: int,
               where: dict[str, Any] | None = None) -> list[AnnHit]:
        """Best ``limit`` points by cosine similarity (exact scores), best first; ties by
        point id. ``where``: exact-match payload filter (see ``filter_supported``)."""
        q = unit_rows(np.asarray(query, dtype=np.float32).reshape(1, -1))[0]
        if q.shape[0] != self.dim:
            raise ValueError(f"search: {q.shape[0]}-d query on a {self.dim}-d index")
        if not filter_supported(where):
            raise ValueError(f"filter {where!r} is not an exact match on top-level keys")
        with self._lock:
            if limit <= 0 or self._n == 0:
                return []
            allowed = self._matching_slots(where) if where else None
            if allowed is not None:
                if allowed.size == 0:
                    return []
                if not self.trained or allowed.size <= 2 * self._expected_candidates():
                    return self._exact(q, limit, allowed)
            if not self.trained or 2 * self._expected_candidates() >= self._n:
                return self._exact(q, limit, allowed)
            return self._probe(q, limit, allowed)

    def _exact(self, q: np.ndarray, limit: int, slots: np.ndarray | None) -> list[AnnHit]:
        if slots is None:
            slots = np.arange(self._n)
            scores = self._vecs[:self._n] @ q
        else:
            scores = self._vecs[slots] @ q
        return self._top(slots, scores, limit)

    def _expected_candidates(self) -> int:
        return int(self.nprobe * self._n / max(1, len(self._lists)))

    def _probe(self, q: np.ndarray, limit: int, allowed: np.ndarray | None) -> list[AnnHit]:
        assert self._centroids is not None
        order = np.argsort(-(self._centroids @ q), kind="stable")
        mask = None
        if allowed is not None:
            mask = np.zeros(self._n, dtype=bool)
            mask[allowed] = True
        nprobe, done = self.nprobe, 0
        cand_slots: list[np.ndarray] = []
        found = 0
        while True:
            for lst in order[done:nprobe]:
                members = self._lists[lst][:self._list_sizes[lst]]
                if mask is not None:
                    members = members[mask[members]]
                cand_slots.append(members)
                found += members.size
            done = min(nprobe, len(order))
            if found >= limit or done >= len(order):
                break
            nprobe *= 2  # a filter left too few candidates: widen the probe
        slots = np.concatenate(cand_slots) if cand_slots else np.zeros(0, dtype=np.int64)
        return self._top(slots, self._vecs[slots] @ q, limit)

    def _top(self, slots: np.ndarray, scores: np.ndarray, limit: int) -> list[AnnHit]:
        if scores.size > limit:
            keep = np.argpartition(-scores, limit - 1)[:limit]
            slots, scores = slots[keep], scores[keep]
        # ties by point id, so the order does not depend on insertion (or reload) order
        ranked = sorted(zip((-scores).tolist(), (self._ids[s] for s in slots.tolist()),
                            slots.tolist()))
        return [AnnHit(pid, -neg, copy.deepcopy(self._payloads[slot]))
                for neg, pid, slot in ranked]

    # --- payload postings ---------------------------------------------------------------------
    def _matching_slots(self, where: dict[str, Any]) -> np.ndarray:
        arrays = []
        for key, value in sorted(where.items()):
            tag = _tag(value)
            cached = self._posting_arrays.get((key, tag))
            if cached is None:
                postings = self._postings.get(key)
                if postings is None:
                    postings = self._build_postings(key)
                cached = np.fromiter(postings.get(tag, ()), dtype=np.int64)
                cached.sort()
                self._posting_arrays[(key, tag)] = cached
            arrays.append(cached)
        arrays.sort(key=len)
        out = arrays[0]
        for other in arrays[1:]:
            out = np.intersect1d(out, other, assume_unique=True)
        return out

    def _build_postings(self, key: str) -> dict[tuple[str, Any], set[int]]:
        postings: dict[tuple[str, Any], set[int]] = {}
        self._postings[key] = postings
        for slot in range(self._n):
            for tag in self._tags(slot, key):
                postings.setdefault(tag, set()).add(slot)
        return postings

    def _tags(self, slot: int, key: str) -> Iterable[tuple[str, Any]]:
        payload = self._payloads[slot]
        if key not in payload:
            return ()
        return {t for t in map(_tag, _flat_values(payload[key])) if t is not None}

    def _post(self, slot: int) -> None:
        for key, postings in self._postings.items():
            for tag in self._tags(slot, key):
                postings.setdefault(tag, set()).add(slot)
                self._posting_arrays.pop((key, tag), None)

    def _unpost(self, slot: int) -> None:
        for key, postings in self._postings.items():
            for tag in self._tags(slot, key):
                postings.get(tag, set()).discard(slot)
                self._posting_arrays.pop((key, tag), None)

    # --- IVF ----------------------------------------------------------------------------------
    def _assign(self, slots: np.ndarray) -> None:
        """(Re)place these slots in the list of their nearest centroid."""
        assert self._centroids is not None
        for start in range(0, slots.size, _ASSIGN_BATCH):
            part = slots[start:start + _ASSIGN_BATCH]
            nearest = np.argmax(self._vecs[part] @ self._centroids.T, axis=1)
            for slot, lst in zip(part.tolist(), nearest.tolist()):
                old = int(self._list_of[slot])
                if old == lst:
                    continue
                if old >= 0:
                    self._remove_from_list(old, slot)
                self._append_to_list(lst, slot)

    def _remove_from_list(self, lst: int, slot: int) -> None:
        pos, last = int(self._pos_of[slot]), self._list_sizes[lst] - 1
        members = self._lists[lst]
        moved = int(members[last])
        members[pos] = moved
        self._pos_of[moved] = pos
        self._list_sizes[lst] = last
        self._list_of[slot] = -1

    def _append_to_list(self, lst: int, slot: int) -> None:
        size = self._list_sizes[lst]
        if size >= self._lists[lst].size:
            self._lists[lst] = np.resize(self._lists[lst], max(16, 2 * size))
        self._lists[lst][size] = slot
        self._list_sizes[lst] = size + 1
        self._list_of[slot] = lst
        self._pos_of[slot] = size

    def _train(self) -> None:
        """Spherical k-means on a sample, every point assigned, then nprobe calibrated."""
        n = self._n
        rng = np.random.default_rng(self._seed + self.trainings)
        nlist = max(8, min(n // 16, int(round(2 * math.sqrt(n)))))
        sample_n = min(n, 40 * nlist)
        sample = self._vecs[np.sort(rng.choice(n, size=sample_n, replace=False))]
        centroids = sample[rng.choice(sample_n, size=nlist, replace=False)].copy()
        for _ in range(8):
            nearest = np.argmax(sample @ centroids.T, axis=1)
            sums = np.zeros_like(centroids)
            np.add.at(sums, nearest, sample)
            counts = np.bincount(nearest, minlength=nlist)
            empty = counts == 0
            if empty.any():  # re-seed empty lists with random sample points
                sums[empty] = sample[rng.choice(sample_n, size=int(empty.sum()), replace=False)]
            centroids = unit_rows(sums)
        self._centroids = centroids
        self._lists = [np.zeros(16, dtype=np.int64) for _ in range(nlist)]
        self._list_sizes = [0] * nlist
        self._list_of[:n] = -1
        self._assign(np.arange(n))
        self.nprobe = self._calibrate(rng)
        self.trained_at = n
        self.trainings += 1

    def _calibrate(self, rng: np.random.Generator, queries: int = 64) -> int:
        """Smallest nprobe whose probed lists hold ``target_recall`` of the exact top-10 of
        held-out data points used as queries (the point itself excluded)."""
        assert self._centroids is not None
        n, nlist = self._n, len(self._lists)
        picked = rng.choice(n, size=min(queries, n), replace=False)
        q = self._vecs[picked]
        k = min(CALIBRATION_K, n - 1)
        if k <= 0:
            return nlist
        neighbours = np.empty((len(picked), k), dtype=np.int64)
        for start in range(0, len(picked), 16):
            scores = q[start:start + 16] @ self._vecs[:n].T
            scores[np.arange(scores.shape[0]), picked[start:start + 16]] = -np.inf
            neighbours[start:start + 16] = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        # rank of every list for every query, then the rank each true neighbour's list has
        list_rank = np.empty((len(picked), nlist), dtype=np.int64)
        order = np.argsort(-(q @ self._centroids.T), axis=1)
        list_rank[np.arange(len(picked))[:, None], order] = np.arange(nlist)[None, :]
        needed = np.take_along_axis(list_rank, self._list_of[neighbours], axis=1).ravel()
        probe = int(np.quantile(needed, min(1.0, self.target_recall), method="higher")) + 1
        return int(min(nlist, max(self.min_probe, probe)))
