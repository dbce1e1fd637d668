#!/usr/bin/env python3
"""Goals Nav2 can reach: the stand-off goal pose (core/goals.py) against the object's estimated centre.

For every object_search question of generated tours (the memory built with the default config),
/ask's goal is scored two ways, and so is the target's estimated centre (the goal before the
stand-off, which was 0.15 m from it):

  within 1.5 m of goal_xy: tour-format's goal_success (distance to the object's CENTRE);
  goal_reach: within 1.5 m of the object's true FOOTPRINT and a place the robot can stand (inside a
              room, its 0.3 m disc clear of every floor-standing object) - eval/retrieval_metrics;
  inside the target's footprint / overlapping any furniture: where a planner must refuse the goal;
  stand-off: the goal's distance from the estimated centre (median, m).

    python bench/bench_goals.py [--seeds 21 22] [--minutes 1.5] [--workdir /tmp/vlkng-bench-goals]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vlkng_ros.core.ask.engine import AskEngine  # noqa: E402
from vlkng_ros.core.ask.types import AskRequest  # noqa: E402
from vlkng_ros.core.config import VlkngConfig  # noqa: E402
from vlkng_ros.core.memory import Memory  # noqa: E402
from vlkng_ros.core.pipeline import build_tour  # noqa: E402
from vlkng_ros.eval.retrieval_metrics import GOAL_SUCCESS_M, _to_box, goal_reach  # noqa: E402
from vlkng_ros.eval.sim import generate_tour  # noqa: E402


def score(goal, q: dict, world: dict) -> dict:
    objs = {o["gt_track"]: o for o in world["objects"]}
    target = next(objs[t] for t in q["targets"] if t in objs)
    floor = [o for o in objs.values() if not o.get("support")]
    if goal is None:
        return {"centre": 0.0, "reach": 0.0, "inside": 0.0, "overlap": 0.0}
    return {"centre": float(math.dist(goal, q["goal_xy"]) <= GOAL_SUCCESS_M),
            "reach": goal_reach(goal, q, world),
            "inside": float(_to_box(goal, target) == 0.0),
            "overlap": float(any(_to_box(goal, o) < 0.3 for o in floor))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[21, 22])
    ap.add_argument("--minutes", type=float, default=1.5)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/vlkng-bench-goals"))
    ap.add_argument("--clearance", type=float, default=None, help="ask.goal_clearance_m (default: the config's)")
    args = ap.parse_args()
    rows: dict[str, list[dict]] = {"stand-off goal": [], "estimated centre": []}
    standoffs = []
    for seed in args.seeds:
        tour = args.workdir / f"tour-{seed}-{args.minutes:g}"
        if not (tour / "world.json").is_file():
            generate_tour(tour, minutes=args.minutes, seed=seed, log_progress=False, overwrite=True)
        cfg = VlkngConfig()
        if args.clearance is not None:
            cfg.ask.goal_clearance_m = args.clearance
        world = json.loads((tour / "world.json").read_text())
        qs = [q for q in json.loads((tour / "questions.json").read_text())["questions"]
              if q["type"] == "object_search" and q.get("goal_xy") and q.get("targets")]
        with Memory.open(args.workdir / f"{tour.name}.memory", cfg) as mem:
            build_tour(tour, mem, cfg, progress=False)
            engine = AskEngine(mem, cfg)
            for q in qs:
                res = engine.ask(AskRequest(q["question"], top_k=5))
                goal = (res.goal.x, res.goal.y) if res.goal else None
                rows["stand-off goal"].append(score(goal, q, world))
                rows["estimated centre"].append(score(res.target_position or goal, q, world))
                if goal and res.target_position:
                    standoffs.append(math.dist(goal, res.target_position))
    n = len(rows["stand-off goal"])
    print(f"{n} object_search questions on seeds {args.seeds} ({args.minutes:g}-min tours); robot radius "
          f"{cfg.ask.robot_radius_m:g} m, clearance {cfg.ask.goal_clearance_m:g} m; median stand-off "
          f"{statistics.median(standoffs):.2f} m")
    print("goal             | <=1.5 m of centre | goal_reach | inside target | overlaps furniture")
    for name, rs in rows.items():
        m = {k: sum(r[k] for r in rs) / len(rs) for k in rs[0]}
        print(f"{name:16s} | {m['centre']:17.3f} | {m['reach']:10.3f} | {m['inside']:13.3f} | {m['overlap']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
