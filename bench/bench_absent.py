"""Found vs not-seen: false-found rate on absent-object questions and found rate on present-object
questions, over the decision's margin (core/ask/found.py, ask.found_margin).

For each seed a tour is generated (eval/sim) and built, then every presence question
(eval/absent.py) is asked once; each answer's score (core/ask/found.py FoundRule.score) decides "found" at every margin of the curve, so one pass gives the whole curve.

    python bench/bench_absent.py --seeds 41 42 --minutes 1 --work /tmp/absent
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def scores_for(tour: Path, mem: Path) -> list[tuple[bool, float, str]]:
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.query import decompose
    from vlkng_ros.core.llm.base import LLMUsage
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.eval.absent import presence_questions

    cfg = VlkngConfig()
    out = []
    with Memory.open(mem, cfg, read_only=True) as memory:
        engine = AskEngine(memory, cfg)
        rule = engine.found_rule
        for q in presence_questions(tour):
            pq, _ = decompose(q.question, None, LLMUsage())
            sub, _ = engine._retrieve(pq, cfg.ask.mode)
            score = rule.score(sub, pq)  # found at margin m  <=>  score >= m
            out.append((q.present, score, q.question))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--work", default="/tmp/vlkng-absent")
    ap.add_argument("--varied", action="store_true", help="generalisation worlds (vlkng sim --varied)")
    ap.add_argument("--build-only", action="store_true", help="generate and build the memories, ask nothing "
                    "(prepare fresh seeds without reading them)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.pipeline import build_tour
    from vlkng_ros.eval.sim import generate_tour

    rows: list[tuple[bool, float, str]] = []
    for seed in args.seeds:
        name = f"s{seed}{'v' if args.varied else ''}"
        tour = Path(args.work) / name
        mem = Path(args.work) / f"{name}.mem"
        if not (tour / "world.json").exists():
            generate_tour(tour, minutes=args.minutes, seed=seed, log_progress=False, overwrite=True, varied=args.varied)
        if not (mem / "graph.sqlite").exists():
            cfg = VlkngConfig()
            with Memory.open(mem, cfg) as m:
                build_tour(tour, m, cfg, progress=False)
        if not args.build_only:
            rows += scores_for(tour, mem)
    if args.build_only:
        return 0
    present = np.array([s for p, s, _ in rows if p])
    absent = np.array([s for p, s, _ in rows if not p])
    current = VlkngConfig().ask.found_margin
    curve = []
    for m in [round(x, 2) for x in np.arange(0.0, 0.42, 0.02)]:
        curve.append({"margin": m, "found_present": float(np.mean(present >= m)),
                      "false_found_absent": float(np.mean(absent >= m))})
    if args.json:
        json.dump({"seeds": args.seeds, "present": len(present), "absent": len(absent),
                   "margin": current, "curve": curve}, sys.stdout, indent=1)
        return 0
    print(f"seeds {args.seeds}: {len(present)} present-object questions, {len(absent)} absent-object questions")
    print("margin  found(present)  false-found(absent)")
    for c in curve:
        mark = "  <- ask.found_margin" if abs(c["margin"] - current) < 1e-9 else ""
        print(f"{c['margin']:6.2f}  {c['found_present']:14.3f}  {c['false_found_absent']:19.3f}{mark}")
    false = sorted(((s, q) for p, s, q in rows if not p and s >= current), reverse=True)
    print(f"absent questions found at {current}:", [(round(s, 3), q) for s, q in false])
    missed = sorted((s, q) for p, s, q in rows if p and s < current)
    print(f"present questions not found at {current}:", [(round(s, 3), q) for s, q in missed])
    return 0


if __name__ == "__main__":
    sys.exit(main())
