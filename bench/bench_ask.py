"""Ask benchmark: retrieval-path latency and prompt size vs graph size; GER vs baselines on tours.

    python bench/bench_ask.py [--sizes 1000 10000 100000] [--tours 3] [--minutes 1.5]

Latency is the retrieve stage plus frame ranking/answering (everything but model inference is
what /ask does; with the 'hashing' embedder the query embedding is negligible).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from vlkng_ros.core.ask.engine import AskEngine
from vlkng_ros.core.ask.synthetic import write_synthetic
from vlkng_ros.core.ask.types import AskRequest
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory

QUESTIONS = ["Where is the red mug?", "What was next to the blue chair?", "where did I see a lamp",
             "something to sit on", "Where was the green plant first?", "where is the kettle"]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def sizes_bench(sizes: list[int], repeats: int) -> None:
    print("objects | p50 ms | p95 ms | prompt tok | full-graph tok | ratio")
    for n in sizes:
        cfg = VlkngConfig()
        cfg.embeddings.text_backend = "hashing"
        with tempfile.TemporaryDirectory() as d, Memory.open(Path(d), cfg) as mem:
            write_synthetic(mem, n)
            eng = AskEngine(mem, cfg)
            lat, toks = [], []
            for _ in range(repeats):
                for q in QUESTIONS:
                    t0 = time.perf_counter()
                    r = eng.ask(AskRequest(q))
                    lat.append((time.perf_counter() - t0) * 1000)
                    toks.append(r.prompt_tokens["answer"])
            full = eng.ask(AskRequest(QUESTIONS[0], mode="full")).prompt_tokens["full_graph"] if n <= 10000 else None
            ratio = f"{max(toks) / full:.4f}" if full else "-"
            print(f"{n:7d} | {statistics.median(lat):6.1f} | {pct(lat, 0.95):6.1f} | {max(toks):10d} | "
                  f"{full if full else '-':>14} | {ratio}")


def tours_bench(n_tours: int, minutes: float) -> None:
    try:
        from vlkng_ros.core.sim import generate_tour  # type: ignore[attr-defined]
    except ImportError:
        print("tours: vlkng_ros.core.sim.generate_tour not available; skipped")
        return
    from vlkng_ros.commands.eval import BASELINES, evaluate, load_questions
    from vlkng_ros.core.pipeline import build_tour

    keys = ["retrieval_acc@1", "mrr@5", "retrieval_acc@5", "goal_success"]
    agg: dict[str, list[dict]] = {}
    for seed in range(n_tours):
        with tempfile.TemporaryDirectory() as d:
            tour = Path(d, "tour")
            generate_tour(tour, minutes=minutes, seed=seed)
            cfg = VlkngConfig()
            with Memory.open(Path(d, "mem"), cfg) as mem:
                rep = build_tour(tour, mem, cfg, progress=False)
                stamps = [k.stamp_ns for k in mem.graph.keyframes(rep.tour_id)]
                eng = AskEngine(mem, cfg)
                qs = load_questions(tour)
                for name, mode in {"GER": "ger", **BASELINES}.items():
                    agg.setdefault(name, []).append(evaluate(eng, qs, stamps, mode)["overall"])
    print("system | " + " | ".join(keys))
    for name, rows in agg.items():
        print(f"{name:7s} | " + " | ".join(f"{statistics.mean(r[k] or 0 for r in rows):.3f}" for k in keys))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tours", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=1.5)
    a = ap.parse_args()
    tours_bench(a.tours, a.minutes)
    sizes_bench(a.sizes, a.repeats)


if __name__ == "__main__":
    main()
