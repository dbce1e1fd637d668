"""Ask benchmark: retrieval-path latency and prompt size vs graph size; GER vs baselines on tours.

    python bench/bench_ask.py [--seeds 1 2 3] [--minutes 3] [--workdir DIR] [--sizes 1000 10000 100000]

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
from vlkng_ros.eval.synthetic import write_synthetic
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


TOUR_KEYS = ["retrieval_acc@1", "retrieval_acc@5", "mrr@5", "answer_accuracy", "goal_success"]


def tour_memory(workdir: Path, seed: int, minutes: float) -> tuple[Path, Path]:
    """A generated tour and its built memory under ``workdir`` (reused when already there)."""
    from vlkng_ros.core.pipeline import build_tour
    from vlkng_ros.eval.sim import generate_tour

    tour, mem_dir = workdir / f"tour-{seed}-{minutes:g}min", workdir / f"tour-{seed}-{minutes:g}min.memory"
    if not (tour / "questions.json").is_file():
        generate_tour(tour, minutes=minutes, seed=seed, log_progress=False)
    cfg = VlkngConfig()
    with Memory.open(mem_dir, cfg) as mem:
        build_tour(tour, mem, cfg, progress=False)  # resumes / skips what is already built
    return tour, mem_dir


def _row(name: str, m: dict) -> str:
    return f"{name:8s} | " + " | ".join("   -  " if m.get(k) is None else f"{m[k]:.3f}" for k in TOUR_KEYS)


def tours_bench(seeds: list[int], minutes: float, workdir: Path | None) -> None:
    """GER vs the baselines (F, CwGR, lexical, GR) on generated tours: per seed, the mean over
    seeds, and per question type (offline mode, default perception noise)."""
    from vlkng_ros.eval.runner import BASELINES, evaluate, load_questions

    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory()
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    systems = {"GER": "ger", **BASELINES}
    per_seed: dict[str, list[dict]] = {name: [] for name in systems}
    per_type: dict[str, dict[str, list[dict]]] = {name: {} for name in systems}
    header = "system   | " + " | ".join(k.replace("retrieval_", "") for k in TOUR_KEYS)
    for seed in seeds:
        t0 = time.perf_counter()
        tour, mem_dir = tour_memory(workdir, seed, minutes)
        cfg = VlkngConfig()
        with Memory.open(mem_dir, cfg) as mem:
            stamps = [k.stamp_ns for t in mem.graph.tours() for k in mem.graph.keyframes(t)]
            eng = AskEngine(mem, cfg)
            qs = load_questions(tour)
            print(f"\n== tour seed {seed} ({minutes:g} min, {len(qs)} questions, {len(stamps)} keyframes, "
                  f"{mem.graph.count_objects()} objects; built in {time.perf_counter() - t0:.0f} s)")
            print(header)
            for name, mode in systems.items():
                res = evaluate(eng, qs, stamps, mode)
                per_seed[name].append(res["overall"])
                for typ, m in res["by_type"].items():
                    per_type[name].setdefault(typ, []).append(m)
                print(_row(name, res["overall"]))

    def mean(rows: list[dict]) -> dict:
        return {k: (statistics.mean(r[k] for r in rows if r.get(k) is not None)
                    if any(r.get(k) is not None for r in rows) else None) for k in TOUR_KEYS}

    print(f"\n== mean over seeds {seeds}")
    print(header)
    for name, rows in per_seed.items():
        print(_row(name, mean(rows)))
    print("\n== by question type (mean over seeds): acc@1 / acc@5 / goal_success per system")
    print("type               | " + " | ".join(f"{n:^17s}" for n in systems))
    for typ in sorted(per_type["GER"]):
        cells = []
        for name in systems:
            m = mean(per_type[name].get(typ, []))
            cells.append("/".join(" -  " if m[k] is None else f"{m[k]:.2f}"
                                  for k in ("retrieval_acc@1", "retrieval_acc@5", "goal_success")))
        print(f"{typ:18s} | " + " | ".join(f"{c:^17s}" for c in cells))
    if tmp is not None:
        tmp.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000],
                    help="synthetic graph sizes for the latency/prompt section (none: skip it)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3], help="tour seeds (none: skip tours)")
    ap.add_argument("--minutes", type=float, default=3.0, help="length of each generated tour")
    ap.add_argument("--workdir", type=Path, help="keep (and reuse) tours and memories here")
    a = ap.parse_args()
    if a.seeds:
        tours_bench(a.seeds, a.minutes, a.workdir)
    if a.sizes:
        sizes_bench(a.sizes, a.repeats)


if __name__ == "__main__":
    main()
