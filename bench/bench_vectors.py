"""Vector search benchmark: local-mode QdrantVectorStore (in-process ANN index) at several sizes.

Prints, per dim and size: search p50/p95 through the store (no filter, and with a tour_id filter),
Qdrant's own brute-force search for comparison, the time to open a collection (read Qdrant's
points into the index) with no saved ANN state (k-means runs) and with the state saved at the
previous close (reused), the index's array memory, and recall@10 against exact search.

    python bench/bench_vectors.py                       # 1k, 10k, 100k at dim 384 and 256
    python bench/bench_vectors.py --sizes 1000 10000 --dims 384 --queries 200
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

import numpy as np

from vlkng_ros.core.stores.ann import unit_rows
from vlkng_ros.core.stores.qdrant_store import QdrantVectorStore


def embeddings_like(rng: np.random.Generator, n: int, dim: int,
                    random_share: float = 0.0) -> np.ndarray:
    """Points around 2·sqrt(n) topic centres, as sentence embeddings cluster (``random_share``
    of pure noise points makes the calibrated nprobe grow: they have no real neighbours)."""
    n_clustered = int((1.0 - random_share) * n)
    centres = unit_rows(rng.normal(size=(max(8, int(2 * np.sqrt(n))), dim)))
    clustered = centres[rng.integers(0, len(centres), n_clustered)] + \
        0.6 * unit_rows(rng.normal(size=(n_clustered, dim)))
    data = np.concatenate([clustered, rng.normal(size=(n - n_clustered, dim))])
    return unit_rows(data[rng.permutation(n)])


def percentiles(samples: list[float]) -> tuple[float, float]:
    arr = np.asarray(samples) * 1e3
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def prepare(n: int, dim: int, n_queries: int) -> dict:
    """Ingest n points, time opening the collection without and with saved ANN state."""
    rng = np.random.default_rng(n + dim)
    vecs = embeddings_like(rng, n, dim)
    state_dir = tempfile.TemporaryDirectory()
    store = QdrantVectorStore(path=":memory:", ann_state_dir=state_dir.name)
    t0 = time.perf_counter()
    store.upsert("bench", [f"p{i}" for i in range(n)], vecs,
                 [{"object_id": f"p{i}", "tour_id": f"t{i % 10}"} for i in range(n)])
    ingest_s = time.perf_counter() - t0
    # opening a memory: the index is loaded from Qdrant's points on first use, first with no
    # saved state (k-means runs), then with the state that load saved (reused)
    store.unload_indexes()
    Path(state_dir.name, "bench.npz").unlink(missing_ok=True)
    gc.collect()
    t0 = time.perf_counter()
    store.ann_stats("bench")
    open_s = time.perf_counter() - t0
    store.unload_indexes()
    gc.collect()
    t0 = time.perf_counter()
    stats = store.ann_stats("bench")
    reopen_s = time.perf_counter() - t0
    queries = unit_rows(vecs[rng.choice(n, n_queries)] +
                        0.5 * unit_rows(rng.normal(size=(n_queries, dim))))
    return {"n": n, "dim": dim, "store": store, "vecs": vecs, "queries": queries,
            "state_dir": state_dir, "ingest_s": ingest_s, "open_s": open_s,
            "reopen_s": reopen_s, "reopen_how": store.ann_loads["bench"], "stats": stats,
            "plain": [], "filtered": [], "recalls": []}


def time_interleaved(runs: list[dict]) -> None:
    """Query i of every size, then query i+1 of every size, ...: drifting load on a shared
    machine then hits all sizes alike, so their ratio is meaningful."""
    gc.collect()
    for i in range(len(runs[0]["queries"])):
        for r in runs:
            q, store = r["queries"][i], r["store"]
            t = time.perf_counter()
            hits = store.search("bench", q, 10)
            r["plain"].append(time.perf_counter() - t)
            t = time.perf_counter()
            store.search("bench", q, 10, {"tour_id": "t3"})
            r["filtered"].append(time.perf_counter() - t)
            exact = set(np.argpartition(-(r["vecs"] @ q), 10)[:10].tolist())
            r["recalls"].append(len(exact & {int(h.point_id[1:]) for h in hits}) / 10)


def finish(r: dict, qdrant_queries: int) -> dict:
    """Qdrant's own brute force for comparison, then close."""
    brute = []
    for q in r["queries"][:qdrant_queries]:
        t = time.perf_counter()
        r["store"]._qdrant_search("bench", q, 10, None)
        brute.append(time.perf_counter() - t)
    r["store"].close()
    r["state_dir"].cleanup()
    r.update(plain=percentiles(r["plain"]), filtered=percentiles(r["filtered"]),
             qdrant=percentiles(brute), recall=float(np.mean(r["recalls"])))
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--dims", type=int, nargs="+", default=[384, 256])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--qdrant-queries", type=int, default=20,
                    help="queries timed through Qdrant's own brute force (slow at 100k)")
    args = ap.parse_args()
    print(f"{'dim':>4} {'points':>7} | {'p50 ms':>7} {'p95 ms':>7} | {'filt p50':>8} {'filt p95':>8} | "
          f"{'qdrant p95':>10} | {'recall@10':>9} | {'lists':>5} {'nprobe':>6} | {'open s':>6} "
          f"{'reopen s':>8} "
          f"{'ingest s':>8} | {'index MiB':>9}")
    for dim in args.dims:
        runs = [prepare(n, dim, args.queries) for n in args.sizes]
        time_interleaved(runs)
        for r in runs:
            r = finish(r, args.qdrant_queries)
            s = r["stats"]
            print(f"{dim:>4} {r['n']:>7} | {r['plain'][0]:7.3f} {r['plain'][1]:7.3f} | "
                  f"{r['filtered'][0]:8.3f} {r['filtered'][1]:8.3f} | {r['qdrant'][1]:10.2f} | "
                  f"{r['recall']:9.3f} | {s['lists']:>5} {s['nprobe']:>6} | {r['open_s']:6.2f} "
                  f"{r['reopen_s']:8.2f} {r['ingest_s']:8.1f} | "
                  f"{s['array_bytes'] / 2**20:9.1f}", flush=True)
        if len(runs) > 1:
            print(f"     p95 ratio {runs[-1]['n']} / {runs[0]['n']}: "
                  f"{runs[-1]['plain'][1] / runs[0]['plain'][1]:.2f}; p50 ratio "
                  f"{runs[-1]['plain'][0] / runs[0]['plain'][0]:.2f}")

if __name__ == "__main__":
    main()
