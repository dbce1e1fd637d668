"""In-process approximate nearest-neighbour index (numpy only) for the local-mode vector store.

Qdrant's embedded mode searches by brute force in Python; this index keeps search time almost flat
in the collection size:

* below ``exact_below`` points it is exact brute force (one matrix-vector product over one
  contiguous block);
* above, an IVF index: a spherical k-means coarse quantiser (about 2·sqrt(N) lists) trained on a
  sample. Each inverted list keeps its members' vectors in its own contiguous float32 block (with
  spare capacity), so a query scores the centroids and then runs one contiguous matrix-vector
  product per probed list: no gather from a large array at scattered rows (at 100k points that
  gather, not the arithmetic, was the cost). Scores are float32 cosine, i.e. exact;
* ``nprobe`` is calibrated at each training, not guessed: held-out data points are used as queries
  and the smallest ``nprobe`` that recovers ``target_recall`` of their exact top-10 is kept
  (data with no cluster structure therefore gets a large ``nprobe``: slower, never silently worse);
* adds go to the nearest list; re-upserting an id overwrites its row in place or swap-removes it
  from its old list (the last row fills the hole) and appends it to the new one;
* the quantiser is re-trained when the collection has grown by ``retrain_growth`` since the last
  training. Training runs in the upserting thread *outside* the lock, on a snapshot; the new lists
  are swapped in under the lock after re-placing every point written meanwhile, so searches (and
  other upserts) never wait for k-means;
* ``export_state`` / ``bulk_load`` let the store persist the quantiser and the list of every point
  (checked per point by id and a vector fingerprint) so reopening a large collection re-uses them.

Exact-match payload filters (the store's ``where``) are answered from per-key posting sets, built
the first time a key is filtered on and then kept up to date. A selective filter is answered
exactly over its matching points; a broad one filters the probed candidates (probing more lists
until enough survive).
"""

from __future__ import annotations

import copy
import math
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

EPSILON = 1e-12  # vectors with a smaller norm are kept as they are (as Qdrant does)
CALIBRATION_K = 10  # nprobe is calibrated on the recall of the exact top-10 (the usual k of a search)
_ASSIGN_BATCH = 8192
_MIN_BLOCK = 16
FINGERPRINT_TOL = 1e-5  # a saved vector fingerprint this close is the same vector (float32 round trip)
STATE_VERSION = 1


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


def fingerprints(unit_vecs: np.ndarray) -> np.ndarray:
    """One float per vector (projection on two fixed random directions, combined): persisted list
    assignments are trusted only for points whose id and fingerprint both match."""
    dim = unit_vecs.shape[1]
    directions = np.random.default_rng(20240613).normal(size=(dim, 2)).astype(np.float32)
    proj = unit_vecs @ directions
    return (proj[:, 0] + math.pi * proj[:, 1]).astype(np.float32)


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


class _Lists:
    """Inverted lists with contiguous per-list vector blocks. ``centroids`` None: one list (the
    brute-force layout). Slots are the index's stable point numbers."""

    def __init__(self, dim: int, centroids: np.ndarray | None, slot_capacity: int) -> None:
        self.dim = dim
        self.centroids = centroids
        nlist = 1 if centroids is None else len(centroids)
        self.blocks = [np.zeros((0, dim), dtype=np.float32) for _ in range(nlist)]
        self.members = [np.zeros(0, dtype=np.int64) for _ in range(nlist)]  # row -> slot
        self.sizes = [0] * nlist
        self.list_of = np.full(slot_capacity, -1, dtype=np.int64)
        self.pos_of = np.zeros(slot_capacity, dtype=np.int64)
        self.touched: set[int] | None = None  # while a training runs: slots whose rows changed

    @property
    def nlist(self) -> int:
        return len(self.blocks)

    def ensure_slots(self, capacity: int) -> None:
        if capacity > self.list_of.size:
            cap = max(capacity, 2 * self.list_of.size, 1024)
            old = self.list_of.size
            self.list_of = np.resize(self.list_of, cap)
            self.list_of[old:] = -1
            self.pos_of = np.resize(self.pos_of, cap)

    def nearest(self, vecs: np.ndarray) -> np.ndarray:
        if self.centroids is None:
            return np.zeros(len(vecs), dtype=np.int64)
        out = np.empty(len(vecs), dtype=np.int64)
        for start in range(0, len(vecs), _ASSIGN_BATCH):
            out[start:start + _ASSIGN_BATCH] = np.argmax(
                vecs[start:start + _ASSIGN_BATCH] @ self.centroids.T, axis=1)
        return out

    def vector(self, slot: int) -> np.ndarray:
        return self.blocks[int(self.list_of[slot])][int(self.pos_of[slot])]

    def gather(self, slots: np.ndarray) -> np.ndarray:
        """Vectors of these slots (grouped by list, one fancy index per list)."""
        out = np.empty((slots.size, self.dim), dtype=np.float32)
        lists = self.list_of[slots]
        order = np.argsort(lists, kind="stable")
        bounds = np.flatnonzero(np.diff(lists[order])) + 1
        for group in np.split(order, bounds):
            if group.size:
                out[group] = self.blocks[int(lists[group[0]])][self.pos_of[slots[group]]]
        return out

    def place(self, slots: np.ndarray, vecs: np.ndarray, lists: np.ndarray) -> None:
        """Put these (distinct) slots with these vectors into these lists: overwrite in place,
        swap-remove + append when the list changes, and append new slots grouped by list."""
        old = self.list_of[slots]
        fresh = old < 0
        for i in np.flatnonzero(~fresh).tolist():
            slot, lst, prev = int(slots[i]), int(lists[i]), int(old[i])
            if prev == lst:
                self.blocks[lst][int(self.pos_of[slot])] = vecs[i]
                self._touch(slot)
            else:
                self.remove(prev, slot)
                self._append(lst, slots[i:i + 1], vecs[i:i + 1])
        idx = np.flatnonzero(fresh)
        if idx.size:
            by_list = idx[np.argsort(lists[idx], kind="stable")]
            bounds = np.flatnonzero(np.diff(lists[by_list])) + 1
            for group in np.split(by_list, bounds):
                self._append(int(lists[group[0]]), slots[group], vecs[group])

    def remove(self, lst: int, slot: int) -> None:
        pos, last = int(self.pos_of[slot]), self.sizes[lst] - 1
        if pos != last:
            moved = int(self.members[lst][last])
            self.blocks[lst][pos] = self.blocks[lst][last]
            self.members[lst][pos] = moved
            self.pos_of[moved] = pos
            self._touch(moved)
        self.sizes[lst] = last
        self.list_of[slot] = -1
        self._touch(slot)

    def _append(self, lst: int, slots: np.ndarray, vecs: np.ndarray) -> None:
        size, count = self.sizes[lst], len(slots)
        if size + count > len(self.members[lst]):
            cap = max(_MIN_BLOCK, 2 * (size + count))
            block = np.empty((cap, self.dim), dtype=np.float32)
            block[:size] = self.blocks[lst][:size]
            members = np.empty(cap, dtype=np.int64)
            members[:size] = self.members[lst][:size]
            self.blocks[lst], self.members[lst] = block, members
        self.blocks[lst][size:size + count] = vecs
        self.members[lst][size:size + count] = slots
        self.list_of[slots] = lst
        self.pos_of[slots] = np.arange(size, size + count)
        self.sizes[lst] = size + count
        if self.touched is not None:
            self.touched.update(np.asarray(slots).tolist())

    def _touch(self, slot: int) -> None:
        if self.touched is not None:
            self.touched.add(slot)

    def nbytes(self) -> int:
        total = sum(b.nbytes + m.nbytes for b, m in zip(self.blocks, self.members))
        total += self.list_of.nbytes + self.pos_of.nbytes
        return total + (0 if self.centroids is None else self.centroids.nbytes)


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
        self._n = 0
        self._ids: list[str] = []
        self._payloads: list[dict[str, Any]] = []
        self._slot_of: dict[str, int] = {}
        self._lists = _Lists(self.dim, None, 0)
        self._training = False
        self.nprobe = 0
        self.trained_at = 0  # collection size at the last training
        self.trainings = 0
        self.version = 0  # bumped by every change (the store persists state when it moved)
        # payload postings: key -> tagged value -> slots (only for keys ever filtered on)
        self._postings: dict[str, dict[tuple[str, Any], set[int]]] = {}
        self._posting_arrays: dict[tuple[str, tuple[str, Any]], np.ndarray] = {}

    # ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    @property
    def trained(self) -> bool:
        return self._lists.centroids is not None

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"points": self._n, "lists": self._lists.nlist if self.trained else 0,
                    "nprobe": self.nprobe, "trained_at": self.trained_at,
                    "trainings": self.trainings, "array_bytes": int(self._lists.nbytes())}

    # ------------------------------------------------------------------------------------------
    def upsert(self, ids: Sequence[str], vectors: np.ndarray,
               payloads: Sequence[dict[str, Any]]) -> None:
        """Insert or replace points (by id). Payloads are stored as given (pass JSON-like dicts).
        May re-train the quantiser before returning; the lock is not held while it trains."""
        vecs = unit_rows(vectors)
        if vecs.shape != (len(ids), self.dim) or len(payloads) != len(ids):
            raise ValueError(f"upsert: {len(ids)} ids, {len(payloads)} payloads and vectors of "
                             f"shape {np.shape(vectors)} do not line up (dim {self.dim})")
        if len(ids) == 0:
            return
        with self._lock:
            # a repeated id inside one batch: the last vector wins (as in the backend)
            last_row = {str(pid): i for i, pid in enumerate(ids)}
            rows = np.fromiter(last_row.values(), dtype=np.int64, count=len(last_row))
            slots = np.empty(rows.size, dtype=np.int64)
            for j, (pid, i) in enumerate(last_row.items()):
                slot = self._slot_of.get(pid)
                if slot is None:
                    slot = self._new_slot(pid)
                else:
                    self._unpost(slot)
                self._payloads[slot] = payloads[i]
                self._post(slot)
                slots[j] = slot
            self._lists.ensure_slots(self._n)
            self._lists.place(slots, vecs[rows], self._lists.nearest(vecs[rows]))
            self.version += 1
            due = self._training_due()
        if due:
            self._train()

    def _new_slot(self, pid: str) -> int:
        slot = self._n
        self._n += 1
        self._ids.append(pid)
        self._payloads.append({})
        self._slot_of[pid] = slot
        return slot

    def _training_due(self) -> bool:
        return (not self._training and self._n >= self.exact_below and
                (not self.trained or self._n >= self.retrain_growth * self.trained_at))

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
                if allowed.size <= 2 * self._expected_candidates():
                    return self._top(allowed, self._lists.gather(allowed) @ q, limit)
            if not self.trained or 2 * self._expected_candidates() >= self._n:
                return self._probe(q, limit, allowed, probe_all=True)
            return self._probe(q, limit, allowed)

    def _expected_candidates(self) -> int:
        if not self.trained:
            return self._n
        return int(self.nprobe * self._n / max(1, self._lists.nlist))

    def _probe(self, q: np.ndarray, limit: int, allowed: np.ndarray | None,
               probe_all: bool = False) -> list[AnnHit]:
        lists = self._lists
        nlist = lists.nlist
        if probe_all:
            order, nprobe = np.arange(nlist), nlist
        elif allowed is None:  # the common case: the nprobe best lists, in any order
            nprobe = min(self.nprobe, nlist)
            order = np.argpartition(-(lists.centroids @ q), nprobe - 1)[:nprobe]
        else:
            order, nprobe = np.argsort(-(lists.centroids @ q), kind="stable"), self.nprobe
        mask = None
        if allowed is not None:
            mask = np.zeros(self._n, dtype=bool)
            mask[allowed] = True
        done, found = 0, 0
        cand_slots: list[np.ndarray] = []
        cand_scores: list[np.ndarray] = []
        while True:
            for lst in order[done:nprobe].tolist():
                size = lists.sizes[lst]
                if size == 0:
                    continue
                members, block = lists.members[lst][:size], lists.blocks[lst][:size]
                if mask is not None:
                    keep = mask[members]
                    members, block = members[keep], block[keep]
                cand_slots.append(members)
                cand_scores.append(block @ q)
                found += members.size
            done = min(nprobe, nlist)
            if found >= limit or done >= nlist:
                break
            nprobe *= 2  # a filter left too few candidates: widen the probe
        if not cand_slots:
            return []
        return self._top(np.concatenate(cand_slots), np.concatenate(cand_scores), limit)

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

    # --- training -----------------------------------------------------------------------------
    def _snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """(slots, vectors) of every point. Under the lock only the list references are taken;
        rows written after that are re-placed at the swap (``_Lists.touched``)."""
        with self._lock:
            lists = self._lists
            lists.touched = set()
            parts = [(lists.blocks[i], lists.members[i][:lists.sizes[i]].copy())
                     for i in range(lists.nlist)]
        slots = np.concatenate([m for _, m in parts])
        vecs = np.concatenate([b[:m.size] for b, m in parts])
        return slots, vecs

    def _train(self) -> None:
        """Train on a snapshot outside the lock, then swap the new lists in under it."""
        with self._lock:
            if not self._training_due():
                return
            self._training = True
        try:
            slots, vecs = self._snapshot()
            rng = np.random.default_rng(self._seed + self.trainings)
            centroids = self._fit(vecs, rng)
            fresh = _Lists(self.dim, centroids, int(slots.max()) + 1 if slots.size else 0)
            fresh.place(slots, vecs, fresh.nearest(vecs))
            nprobe = self._calibrate(vecs, fresh, fresh.list_of[slots], rng)
            with self._lock:
                self._swap_in(fresh, nprobe, trained_at=len(slots))
                self.trainings += 1
        finally:
            with self._lock:
                self._training = False
                self._lists.touched = None

    def _swap_in(self, fresh: _Lists, nprobe: int, trained_at: int) -> None:
        """Re-place in ``fresh`` every point written since the snapshot, then make it current
        (caller holds the lock)."""
        old = self._lists
        fresh.ensure_slots(self._n)
        changed = np.fromiter(sorted(old.touched or ()), dtype=np.int64)
        if changed.size:
            live = changed[old.list_of[changed] >= 0]
            for slot in changed[old.list_of[changed] < 0].tolist():
                if fresh.list_of[slot] >= 0:  # cannot stay: no current vector (not expected)
                    fresh.remove(int(fresh.list_of[slot]), slot)
            vecs = np.stack([old.vector(s) for s in live.tolist()]) if live.size else \
                np.zeros((0, self.dim), dtype=np.float32)
            fresh.place(live, vecs, fresh.nearest(vecs))
        self._lists = fresh
        self.nprobe = nprobe
        self.trained_at = trained_at
        self.version += 1

    def _fit(self, vecs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Spherical k-means centroids on a sample of ``vecs`` (about 2·sqrt(N) of them)."""
        n = len(vecs)
        nlist = max(8, min(n // 16, int(round(2 * math.sqrt(n)))))
        sample_n = min(n, 40 * nlist)
        sample = vecs[np.sort(rng.choice(n, size=sample_n, replace=False))]
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
        return centroids

    def _calibrate(self, vecs: np.ndarray, lists: _Lists, list_of_row: np.ndarray,
                   rng: np.random.Generator, queries: int = 64) -> int:
        """Smallest nprobe whose probed lists hold ``target_recall`` of the exact top-10 of
        held-out data points used as queries (the point itself excluded). ``list_of_row``: the
        list of each row of ``vecs``."""
        assert lists.centroids is not None
        n, nlist = len(vecs), lists.nlist
        picked = rng.choice(n, size=min(queries, n), replace=False)
        q = vecs[picked]
        k = min(CALIBRATION_K, n - 1)
        if k <= 0:
            return nlist
        neighbours = np.empty((len(picked), k), dtype=np.int64)
        for start in range(0, len(picked), 16):
            scores = q[start:start + 16] @ vecs.T
            scores[np.arange(scores.shape[0]), picked[start:start + 16]] = -np.inf
            neighbours[start:start + 16] = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        # rank of every list for every query, then the rank each true neighbour's list has
        list_rank = np.empty((len(picked), nlist), dtype=np.int64)
        order = np.argsort(-(q @ lists.centroids.T), axis=1)
        list_rank[np.arange(len(picked))[:, None], order] = np.arange(nlist)[None, :]
        needed = np.take_along_axis(list_rank, list_of_row[neighbours], axis=1).ravel()
        probe = int(np.quantile(needed, min(1.0, self.target_recall), method="higher")) + 1
        return int(min(nlist, max(self.min_probe, probe)))

    # --- persistence --------------------------------------------------------------------------
    def export_state(self) -> dict[str, np.ndarray] | None:
        """The trained quantiser and every point's list (with id and vector fingerprint), as
        arrays for ``np.savez``; None while untrained."""
        with self._lock:
            lists = self._lists
            if lists.centroids is None:
                return None
            slots = np.arange(self._n)
            present = lists.list_of[slots] >= 0
            slots = slots[present]
            return {"version": np.array(STATE_VERSION), "dim": np.array(self.dim),
                    "centroids": lists.centroids.copy(), "nprobe": np.array(self.nprobe),
                    "trained_at": np.array(self.trained_at),
                    "ids": np.array([self._ids[s] for s in slots.tolist()], dtype=str),
                    "lists": lists.list_of[slots].copy(),
                    "fingerprints": fingerprints(lists.gather(slots))}

    def bulk_load(self, ids: Sequence[str], vectors: np.ndarray,
                  payloads: Sequence[dict[str, Any]],
                  state: dict[str, np.ndarray] | None = None) -> str:
        """Fill an empty index. With a ``state`` from ``export_state`` whose dim matches, its
        centroids are reused: points whose id and fingerprint match keep their list, the rest
        go to their nearest centroid (nprobe is re-calibrated if any did); if fewer than half
        match, the state is ignored. Returns "reused", "rebuilt" (state ignored) or "fresh"."""
        if self._n:
            raise RuntimeError("bulk_load needs an empty index")
        vecs = unit_rows(vectors) if len(ids) else np.zeros((0, self.dim), dtype=np.float32)
        if vecs.shape != (len(ids), self.dim) or len(payloads) != len(ids):
            raise ValueError(f"bulk_load: {len(ids)} ids, {len(payloads)} payloads and vectors "
                             f"of shape {np.shape(vectors)} do not line up (dim {self.dim})")
        lists = self._lists_from_state(ids, vecs, state) if state is not None else None
        if lists is None:
            self.upsert(ids, vecs, payloads)
            return "fresh" if state is None else "rebuilt"
        layout, list_of_row, matched = lists
        with self._lock:
            for pid, payload in zip(ids, payloads):
                slot = self._slot_of.get(str(pid))
                if slot is None:
                    slot = self._new_slot(str(pid))
                self._payloads[slot] = payload
            rows = np.fromiter(({str(p): i for i, p in enumerate(ids)}).values(), dtype=np.int64)
            slots = np.fromiter((self._slot_of[str(ids[i])] for i in rows), dtype=np.int64)
            layout.ensure_slots(self._n)
            layout.place(slots, vecs[rows], list_of_row[rows])
            self._lists = layout
            self.nprobe = int(state["nprobe"])
            self.trained_at = int(state["trained_at"])
            if not matched.all():
                rng = np.random.default_rng(self._seed)
                self.nprobe = self._calibrate(vecs[rows], layout, list_of_row[rows], rng)
            self.version += 1
            due = self._training_due()
        if due:
            self._train()
        return "reused"

    def _lists_from_state(self, ids: Sequence[str], vecs: np.ndarray,
                          state: dict[str, np.ndarray]):
        """(empty layout with the saved centroids, list of every row, rows that matched) or None
        when the state does not fit these points."""
        try:
            if int(state["version"]) != STATE_VERSION or int(state["dim"]) != self.dim:
                return None
            centroids = np.asarray(state["centroids"], dtype=np.float32)
            saved = {str(i): k for k, i in enumerate(np.asarray(state["ids"]).tolist())}
            saved_lists = np.asarray(state["lists"], dtype=np.int64)
            saved_fp = np.asarray(state["fingerprints"], dtype=np.float32)
        except (KeyError, ValueError, TypeError):
            return None
        if centroids.ndim != 2 or centroids.shape[1] != self.dim or not len(ids) or \
                not len(saved) == saved_lists.size == saved_fp.size:
            return None
        layout = _Lists(self.dim, centroids, 0)
        at = np.fromiter((saved.get(str(p), -1) for p in ids), dtype=np.int64, count=len(ids))
        known = at >= 0
        matched = known.copy()
        if known.any():
            close = np.abs(saved_fp[at[known]] - fingerprints(vecs[known])) <= FINGERPRINT_TOL
            matched[np.flatnonzero(known)[~close]] = False
        if matched.sum() * 2 < len(ids):
            return None
        list_of_row = np.empty(len(ids), dtype=np.int64)
        list_of_row[matched] = saved_lists[at[matched]]
        if (list_of_row[matched] >= len(centroids)).any() or (list_of_row[matched] < 0).any():
            return None
        if (~matched).any():
            list_of_row[~matched] = layout.nearest(vecs[~matched])
        return layout, list_of_row, matched
