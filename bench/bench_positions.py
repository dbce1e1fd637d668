#!/usr/bin/env python3
"""Position benchmark: how far is each object's memory node from the object's true centre?

For generated tours, observations of the built memory are matched to annotated objects
(metrics.match_observations); each ground-truth object is represented by the node that holds most
of its matched observations (what /ask would most likely send the robot to). Printed per seed and
pooled, split into big objects (largest footprint side >= 1 m) and small ones:

  median / p90 position error (m), share within 1.0 m and 1.5 m (the goal-success radius),
  calibration of position_var: share of errors within 2 sigma (sigma = sqrt(position_var), read
  as a per-axis variance: ~0.86 for a calibrated 2-D Gaussian) and median of error / sigma
  (~1.18 if calibrated), plus nodes per big object (fragmentation) and the main node's share of
  the object's observations.

    python bench/bench_positions.py [--seeds 1 2 3 6] [--minutes 3] [--workdir /tmp/pos] [--rebuild]

Tours are generated once under --workdir; memories are built once and reused (--rebuild deletes
them first: needed after any change to the pipeline). --resolve re-solves each node's position
from its own observations with the current geometry code without rebuilding (a quick check of a
bearing-geometry change with the association held fixed; it is not what a rebuilt memory gives,
and it leaves floor-contact ranging out: that needs each chunk's other boxes and relations).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vlkng_ros.core.config import VlkngConfig  # noqa: E402
from vlkng_ros.core.memory import Memory  # noqa: E402

BIG_M = 1.0


def build_memory(workdir: Path, seed: int, minutes: float, rebuild: bool) -> tuple[Path, Path, float]:
    from vlkng_ros.core.pipeline import build_tour
    from vlkng_ros.eval.sim import generate_tour

    tour = workdir / f"tour-{seed}-{minutes:g}min"
    mem_dir = workdir / f"tour-{seed}-{minutes:g}min.memory"
    if not (tour / "world.json").is_file():
        shutil.rmtree(tour, ignore_errors=True)
        generate_tour(tour, minutes=minutes, seed=seed, log_progress=False)
    if rebuild:
        shutil.rmtree(mem_dir, ignore_errors=True)
    t0 = time.perf_counter()
    cfg = VlkngConfig()
    with Memory.open(mem_dir, cfg) as mem:
        build_tour(tour, mem, cfg, progress=False)  # skips what is already built
    return tour, mem_dir, time.perf_counter() - t0


def resolve_position(mem: Memory, node) -> tuple[tuple[float, float], float] | None:
    """The node's position re-solved from all its observations' bearings with the current geometry."""
    from vlkng_ros.core import geometry
    from vlkng_ros.core.model import CameraModel

    cfg = VlkngConfig()
    rays = []
    for ob in node.observations:
        kf = mem.graph.get_keyframe(ob.tour_id, ob.stamp_ns)
        if kf is None or kf.pose is None:
            continue
        raw = mem.graph.get_meta(f"camera:{ob.tour_id}")
        cam = CameraModel(**json.loads(raw)) if raw else CameraModel.from_hfov(
            kf.width, kf.height, cfg.capture.camera_hfov_deg)
        rays.append(geometry.ray_for(kf.pose, ob.bbox, cam))
    return geometry.triangulate(rays)


def node_errors(tour: Path, mem_dir: Path, resolve: bool) -> list[dict]:
    from vlkng_ros.eval.metrics import position_errors

    with Memory.open(mem_dir, VlkngConfig()) as mem:
        return position_errors(mem, tour, (lambda node: resolve_position(mem, node)) if resolve else None)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary(rows: list[dict]) -> dict:
    if not rows:
        return {"n": 0}
    errs = [r["err"] for r in rows]
    z = [r["err"] / math.sqrt(max(r["var"], 1e-9)) for r in rows]
    return {"n": len(rows), "median": statistics.median(errs), "p90": pct(errs, 0.9),
            "le1": sum(e <= 1.0 for e in errs) / len(errs), "le15": sum(e <= 1.5 for e in errs) / len(errs),
            "in2sigma": sum(v <= 2.0 for v in z) / len(z), "z_median": statistics.median(z),
            "nodes": statistics.mean(r["nodes"] for r in rows),
            "main_share": statistics.mean(r["main_share"] for r in rows)}


HEADER = ("set         |   n | median |   p90 | <=1.0m | <=1.5m | in 2sig | err/sig | nodes/obj | main share")


def line(name: str, s: dict) -> str:
    if not s.get("n"):
        return f"{name:11s} |   0 |"
    return (f"{name:11s} | {s['n']:3d} | {s['median']:6.2f} | {s['p90']:5.2f} | {s['le1']:6.2f} | "
            f"{s['le15']:6.2f} | {s['in2sigma']:7.2f} | {s['z_median']:7.2f} | {s['nodes']:9.2f} | "
            f"{s['main_share']:10.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 6])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--workdir", default="bench-out/positions")
    ap.add_argument("--rebuild", action="store_true", help="delete and rebuild the memories")
    ap.add_argument("--resolve", action="store_true",
                    help="re-solve node positions from their observations (no rebuild)")
    ap.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                    help="override geometry module constants (for --resolve experiments)")
    ap.add_argument("--worst", type=int, default=0, help="also list the N worst big objects")
    ap.add_argument("--json", help="write the per-object rows here")
    args = ap.parse_args()
    from vlkng_ros.core import geometry

    for item in args.set:
        name, value = item.split("=", 1)
        if not hasattr(geometry, name):
            ap.error(f"geometry has no {name}")
        setattr(geometry, name, float(value))
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    pooled: list[dict] = []
    print(HEADER)
    for seed in args.seeds:
        tour, mem_dir, secs = build_memory(workdir, seed, args.minutes, args.rebuild)
        rows = node_errors(tour, mem_dir, args.resolve)
        for r in rows:
            r["seed"] = seed
        pooled += rows
        print(line(f"s{seed} big", summary([r for r in rows if r["big"]])))
        print(line(f"s{seed} small", summary([r for r in rows if not r["big"]])), f"  (built/loaded in {secs:.0f} s)",
              flush=True)
    print("-" * len(HEADER))
    print(line("all big", summary([r for r in pooled if r["big"]])))
    print(line("all small", summary([r for r in pooled if not r["big"]])))
    print(line("all", summary(pooled)))
    if args.worst:
        print(f"\nworst {args.worst} big objects:")
        for r in sorted((r for r in pooled if r["big"]), key=lambda r: -r["err"])[: args.worst]:
            print(f"  seed {r['seed']} {r['track']:>14s} {r['label']:>14s} size {r['size']:.1f} m  err "
                  f"{r['err']:.2f} m  sigma {math.sqrt(r['var']):.2f} m  nodes {r['nodes']}  obs {r['n_obs']}")
    if args.json:
        Path(args.json).write_text(json.dumps(pooled, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
