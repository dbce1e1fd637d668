"""Warm-up benchmark: how long a fresh process takes to open a memory and answer its first question
(what a one-shot `vlkng ask` or a restarted /ask node pays), on a 1,000-object memory.

    python bench/bench_warmup.py [--objects 1000] [--runs 5] [--workdir DIR] [--runtime auto|torch]
                                 [--mode ask|node] [--blas-threads N]

Each run is a new Python process: imports, Memory.open, AskEngine, the first question, a second
one. ``--mode ask`` (default) opens the memory read-only, as a one-shot ``vlkng ask`` does;
``--mode node`` opens it for writing, as the ROS nodes do. The first run finds no caches (cold:
no vocabulary vectors in the memory, an empty lexicon cache dir): it embeds the label vocabulary
and parses WordNet. Then, in ask mode, the memory's vocabulary is cached as ``vlkng build`` does
at its end (a reader never writes the memory), and the later runs are warm. Target: open + first
answer <= 1 s (warm). The machine's load (``uptime``) is printed with the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.ask.engine import AskEngine
from vlkng_ros.core.ask.types import AskRequest
t_import = time.perf_counter()
cfg = VlkngConfig()
cfg.embeddings.minilm_runtime = sys.argv[2]
cfg.embeddings.minilm_blas_threads = int(sys.argv[4])
with Memory.open(sys.argv[1], cfg, read_only=sys.argv[3] == "ask") as memory:
    t_open = time.perf_counter()
    engine = AskEngine(memory, cfg, None)
    res = engine.ask(AskRequest("Where did I see the red kettle?", [], 5))
    t_first = time.perf_counter()
    engine.ask(AskRequest("what was next to the blue chair?", [], 5))
    t_second = time.perf_counter()
print(json.dumps({"import_s": t_import - t0, "open_s": t_open - t_import, "first_answer_s": t_first - t_open,
                  "open_and_first_s": t_first - t_import, "process_total_s": t_first - t0,
                  "second_answer_s": t_second - t_first, "found": res.found,
                  "torch_loaded": "torch" in sys.modules, "qdrant_loaded": "qdrant_client" in sys.modules}))
"""


def build(mem_dir: Path, n: int) -> None:
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.eval.synthetic import write_synthetic

    with Memory.open(mem_dir, VlkngConfig()) as memory:
        if memory.graph.count_objects() < n:
            write_synthetic(memory, n)


def prime(mem_dir: Path) -> None:
    """What the end of `vlkng build` leaves for readers: the vocabulary's vectors in the memory."""
    from vlkng_ros.commands.build import _cache_vocabulary
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory

    cfg = VlkngConfig()
    with Memory.open(mem_dir, cfg) as memory:
        _cache_vocabulary(memory, cfg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objects", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--runtime", default="auto", choices=["auto", "numpy", "torch"])
    ap.add_argument("--mode", default="ask", choices=["ask", "node"],
                    help="ask: open read-only as `vlkng ask`; node: open for writing as the ROS nodes")
    ap.add_argument("--blas-threads", type=int, default=None,
                    help="embeddings.minilm_blas_threads for the runs (default: the config's)")
    args = ap.parse_args()
    from vlkng_ros.core.config import VlkngConfig

    blas = VlkngConfig().embeddings.minilm_blas_threads if args.blas_threads is None else args.blas_threads
    work = args.workdir or Path(tempfile.mkdtemp(prefix="vlkng-warmup-"))
    mem_dir = work / f"synth{args.objects}"
    build(mem_dir, args.objects)
    shutil.rmtree(mem_dir / "cache", ignore_errors=True)
    lexicon_cache = Path(tempfile.mkdtemp(prefix="vlkng-warmup-lexicon-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLKNG_CACHE_DIR": str(lexicon_cache)}
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    rows = []
    for i in range(args.runs):
        if i == 1 and args.mode == "ask":
            prime(mem_dir)
        out = subprocess.run([sys.executable, "-c", CHILD, str(mem_dir), args.runtime, args.mode, str(blas)],
                             capture_output=True, text=True, env=env, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"run {i + 1} ({'cold' if i == 0 else 'warm'} cache): " + ", ".join(
            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()), flush=True)
    warm = rows[1:] or rows
    med = {k: statistics.median(r[k] for r in warm) for k in ("import_s", "open_s", "first_answer_s",
                                                               "open_and_first_s", "process_total_s",
                                                               "second_answer_s")}
    shutil.rmtree(lexicon_cache, ignore_errors=True)
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"\n{args.objects} objects, runtime {args.runtime}, mode {args.mode}, BLAS threads {blas or 'default'}, median of {len(warm)} warm runs: "
          + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
    print(f"target: open + first answer <= 1 s -> {'met' if med['open_and_first_s'] <= 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
