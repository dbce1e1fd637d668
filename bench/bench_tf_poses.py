#!/usr/bin/env python3
"""Poses from TF vs /pose vs /odom: object position errors of memories built from one tour each way.

Generated tours (tour-format v2) carry /pose (SLAM's estimate of base_link, ~4 Hz), /odom
(drifting odometry) and /tf + /tf_static (map -> odom -> base_link -> camera_link ->
camera_optical_frame, the camera mounted ``--offset`` forward/left of the robot's centre). Each
tour is built three times (capture.pose_source tf | pose | odom) and, per source, printed:

  keyframes with a pose, the keyframe camera positions' error against the simulator's true camera
  (median / p90, m), and the object position error of the built memory (median / p90 / share
  within 1.0 m, m; metrics.position_errors).

    python bench/bench_tf_poses.py [--seeds 5 6] [--minutes 1.5] [--offset 0.3 0.1] [--workdir /tmp/tfb]
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vlkng_ros.core.config import VlkngConfig  # noqa: E402
from vlkng_ros.core.memory import Memory  # noqa: E402
from vlkng_ros.core.pipeline import build_tour  # noqa: E402
from vlkng_ros.eval.metrics import position_errors  # noqa: E402
from vlkng_ros.eval.sim import generate_tour  # noqa: E402
from vlkng_ros.eval.sim.generate import true_camera_xy  # noqa: E402


def p90(xs: list[float]) -> float:
    return float(np.percentile(xs, 90)) if xs else float("nan")


def run(seed: int, minutes: float, offset: tuple[float, float], workdir: Path) -> list[dict]:
    tour = workdir / f"tour-{seed}-{minutes:g}-{offset[0]:g}-{offset[1]:g}"
    if not (tour / "world.json").is_file():
        shutil.rmtree(tour, ignore_errors=True)
        generate_tour(tour, minutes=minutes, seed=seed, camera_offset=offset, log_progress=False)
    rows = []
    for source in ("tf", "pose", "odom"):
        mem_dir = workdir / f"{tour.name}.{source}.memory"
        shutil.rmtree(mem_dir, ignore_errors=True)
        cfg = VlkngConfig()
        cfg.capture.pose_source = source
        with Memory.open(mem_dir, cfg) as mem:
            build_tour(tour, mem, cfg, progress=False)
            kfs = mem.graph.keyframes()
            posed = [k for k in kfs if k.pose is not None]
            truth = true_camera_xy(tour, [k.stamp_ns for k in posed])
            cam_err = [math.dist((k.pose.x, k.pose.y), xy) for k, xy in zip(posed, truth)]
            obj = [r["err"] for r in position_errors(mem, tour)]
        rows.append({"seed": seed, "source": source, "keyframes": len(kfs), "posed": len(posed),
                     "cam_median": statistics.median(cam_err), "cam_p90": p90(cam_err),
                     "obj_n": len(obj), "obj_median": statistics.median(obj), "obj_p90": p90(obj),
                     "obj_le1": sum(e <= 1.0 for e in obj) / len(obj)})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[5, 6])
    ap.add_argument("--minutes", type=float, default=1.5)
    ap.add_argument("--offset", type=float, nargs=2, default=(0.3, 0.1), metavar=("X", "Y"))
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/vlkng-bench-tf"))
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(f"camera mounted {args.offset[0]:g} m forward, {args.offset[1]:g} m left of base_link; "
          f"{args.minutes:g}-min tours")
    print("seed | source | keyframes (posed) | camera err median / p90 (m) | objects | object err median / p90 (m) | <=1.0 m")
    for seed in args.seeds:
        for r in run(seed, args.minutes, tuple(args.offset), args.workdir):
            print(f"{r['seed']:4d} | {r['source']:6s} | {r['keyframes']:4d} ({r['posed']:4d})       | "
                  f"{r['cam_median']:.3f} / {r['cam_p90']:.3f}               | {r['obj_n']:7d} | "
                  f"{r['obj_median']:.3f} / {r['obj_p90']:.3f}                | {r['obj_le1']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
