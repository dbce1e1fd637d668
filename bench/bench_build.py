#!/usr/bin/env python3
"""Build benchmarks (issue 2): prints numbers, asserts nothing.

1. Association quality on generated tours at the default perception noise: pairwise precision /
   recall / F1 of merged identities against gt_track, and fragmentation (nodes per object).
2. STOA cost per chunk as the graph grows from 100 to 10,000 objects: shortlist sizes, the judge
   prompt (chars/4 tokens, measured with a recording LLM), and merge time per chunk.
3. Build throughput excluding model time (keyframes/s, frames/s) and peak memory on a long tour.

    python bench/bench_build.py [--seeds 1 2 3] [--minutes 3] [--long-minutes 30] [--out bench-out]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import resource
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vlkng_ros.core.config import VlkngConfig  # noqa: E402
from vlkng_ros.core.llm.base import LLM, LLMUsage  # noqa: E402
from vlkng_ros.core.memory import Memory  # noqa: E402
from vlkng_ros.core.stats import memory_stats  # noqa: E402
from vlkng_ros.eval.metrics import memory_association  # noqa: E402
from vlkng_ros.core.model import ChunkGraph, ChunkObject, Keyframe, ObjectNode, Observation, Pose  # noqa: E402
from vlkng_ros.core.pipeline import build_tour  # noqa: E402
from vlkng_ros.eval.sim import generate_tour  # noqa: E402
from vlkng_ros.core.stoa import StoaMerger  # noqa: E402


def association(seeds: list[int], minutes: float, out: Path) -> dict:
    rows = []
    for seed in seeds:
        tour = out / f"tour-{seed}"
        if not tour.exists():
            generate_tour(tour, minutes=minutes, seed=seed, log_progress=False)
        mem_dir = out / f"mem-{seed}"
        shutil.rmtree(mem_dir, ignore_errors=True)
        cfg = VlkngConfig()
        with Memory.open(mem_dir, cfg) as mem:
            rep = build_tour(tour, mem, cfg, progress=False)
            st = {**memory_stats(mem), **memory_association(mem, [str(tour)])}
        a = st["association"]
        rows.append({"seed": seed, **a, "keyframes": rep.keyframes, "objects": st["objects"]})
        print(f"  seed {seed}: {rep.keyframes} keyframes, {st['objects']} nodes for "
              f"{a['physical_objects']} objects  P {a['precision']:.3f} R {a['recall']:.3f} "
              f"F1 {a['f1']:.3f} frag {a['fragmentation']:.3f}", flush=True)
    mean = {k: float(np.mean([r[k] for r in rows])) for k in ("precision", "recall", "f1", "fragmentation")}
    print(f"  mean: P {mean['precision']:.3f} R {mean['recall']:.3f} F1 {mean['f1']:.3f} "
          f"frag {mean['fragmentation']:.3f}  (targets: F1 >= 0.90, frag <= 1.2)")
    return {"per_seed": rows, "mean": mean}


class RecordingLLM(LLM):
    """Counts the judge prompt; answers 'no match' so the graph keeps growing predictably."""

    name = "recording"

    def generate_json(self, prompt, schema, images=(), usage=None):
        if usage is not None:
            usage.prompt_chars += len(prompt)
            usage.calls += 1
        return {"scores": []}


LABELS = ["mug", "chair", "lamp", "book", "plant", "laptop", "kettle", "sofa", "table", "bottle",
          "backpack", "monitor", "shelf", "bin", "clock", "vase", "pillow", "phone", "remote", "box"]
COLORS = ["red", "blue", "green", "white", "black", "grey", "yellow", "brown"]


def stoa_cost(sizes: list[int], out: Path) -> list[dict]:
    """Grow a synthetic graph and merge the same 12-object chunk at each size."""
    rng = random.Random(0)
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    cfg.stoa.judge = "llm"
    mem_dir = out / "stoa-scale"
    shutil.rmtree(mem_dir, ignore_errors=True)
    rows = []
    with Memory.open(mem_dir, cfg) as mem:
        mem.graph.upsert_keyframes([Keyframe("probe", 10**18 + i * 10**9, i, 640, 480,
                                             Pose.from_xy_yaw(5.0 + 0.3 * i, 5.0, 0.0)) for i in range(8)])
        llm = RecordingLLM()
        count = 0
        for size in sizes:
            batch = []
            while count < size:
                label = rng.choice(LABELS)
                color = rng.choice(COLORS)
                oid = f"syn-{count:06d}"
                x, y = rng.uniform(0, 200), rng.uniform(0, 200)
                batch.append(ObjectNode(oid, label, f"a {color} {label}", {"color": color}, [],
                                        [label], ["room"], 0, 1, [Observation("old", 1, (0, 0, 5, 5), "old#0", "o1")],
                                        (x, y), 0.1, [], ["old"]))
                count += 1
            if batch:
                mem.graph.apply_merge(f"syn#{size}", batch, [])
                vecs = mem.text_embedder.embed_texts([b.text() for b in batch])
                mem.vectors.ensure_collection(mem.text_collection, mem.text_embedder.dim)
                mem.vectors.upsert(mem.text_collection, [f"{b.id}|syn" for b in batch], vecs,
                                   [{"object_id": b.id, "tour_id": "old", "label": b.label} for b in batch])
            objs = [ChunkObject(f"o{i}", LABELS[i], {10**18 + j * 10**9: (100 + 20 * i, 200, 150 + 20 * i, 260)
                                                     for j in range(0, 8, 2)},
                                {"color": COLORS[i % len(COLORS)]}, [], "") for i in range(12)]
            chunk = ChunkGraph("probe", size, [10**18 + i * 10**9 for i in range(8)], objs, [])
            merger = StoaMerger(mem, cfg, llm)
            merger.llm_usage = LLMUsage()
            # measure without committing (so every size merges the same chunk into the same state)
            t0 = time.perf_counter()
            rep = merger.associate(chunk).report
            dt = time.perf_counter() - t0
            row = {"objects": mem.graph.count_objects(), "shortlist_mean": float(np.mean(rep.shortlist_sizes)),
                   "shortlist_max": int(max(rep.shortlist_sizes)), "judge_prompt_tokens": rep.judge_prompt_chars // 4,
                   "merge_ms": dt * 1e3}
            rows.append(row)
            print(f"  {row['objects']:>6} objects: shortlist mean {row['shortlist_mean']:.1f} max "
                  f"{row['shortlist_max']}, judge prompt {row['judge_prompt_tokens']} tokens, "
                  f"{row['merge_ms']:.0f} ms/chunk", flush=True)
    return rows


def throughput(minutes: float, out: Path) -> dict:
    tour = out / f"long-{int(minutes)}min"
    if not tour.exists():
        t0 = time.perf_counter()
        generate_tour(tour, minutes=minutes, seed=11, log_progress=False)
        print(f"  generated a {minutes:.0f}-minute tour in {time.perf_counter() - t0:.0f} s")
    mem_dir = out / "mem-long"
    shutil.rmtree(mem_dir, ignore_errors=True)
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"  # exclude model time: no neural embedding
    with Memory.open(mem_dir, cfg) as mem:
        t0 = time.perf_counter()
        rep = build_tour(tour, mem, cfg, progress=False)
        total = time.perf_counter() - t0
        objects = mem.graph.count_objects()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row = {"minutes": minutes, "frames": rep.frames, "keyframes": rep.keyframes, "chunks": rep.chunks,
           "objects": objects, "seconds": total, "capture_s": rep.seconds["capture"],
           "merge_s": rep.seconds["merge"], "frames_per_s": rep.frames / rep.seconds["capture"],
           "keyframes_per_s": rep.keyframes / total, "peak_rss_mb": peak_mb}
    print(f"  {minutes:.0f}-min tour: {rep.frames} frames -> {rep.keyframes} keyframes, {rep.chunks} chunks, "
          f"{objects} objects in {total:.1f} s: capture {row['frames_per_s']:.0f} frames/s, "
          f"end-to-end {row['keyframes_per_s']:.1f} keyframes/s, peak RSS {peak_mb:.0f} MB")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--long-minutes", type=float, default=30.0)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000, 10000])
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--skip", nargs="*", default=[], choices=["association", "stoa", "throughput"])
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    if "association" not in args.skip:
        print(f"association on generated {args.minutes:.0f}-minute tours (default noise):")
        results["association"] = association(args.seeds, args.minutes, out)
    if "stoa" not in args.skip:
        print("STOA cost per chunk vs graph size:")
        results["stoa_cost"] = stoa_cost(args.sizes, out)
    if "throughput" not in args.skip:
        print("build throughput (no model time) and peak memory:")
        results["throughput"] = throughput(args.long_minutes, out)
    (out / "bench_build.json").write_text(json.dumps(results, indent=1))
    print(f"results: {out / 'bench_build.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
