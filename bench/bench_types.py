"""Per question type, GER against the baselines (F, CwGR, lexical, GR) on generated tours.

For each seed a tour is generated (eval/sim; ``--varied``: the generalisation worlds), built and
scored by the eval runner (``vlkng eval``), its result JSON kept next to the tour; then one table
pools every tour's questions by type (eval/runner.py ``type_table``). Existing tours, memories and
results in ``--work`` are reused, so a second call only prints the table.

    python bench/bench_types.py --seeds 81 82 --minutes 1 --work /tmp/types
    python bench/bench_types.py --seeds 81 82 --minutes 1 --varied --work /tmp/types
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--varied", action="store_true", help="generalisation worlds (vlkng sim --varied)")
    ap.add_argument("--work", default="/tmp/vlkng-types")
    ap.add_argument("--rescore", action="store_true", help="score again even where a result JSON exists")
    args = ap.parse_args()
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.eval.runner import evaluate_tour, type_table
    from vlkng_ros.eval.sim import generate_tour

    results = []
    for seed in args.seeds:
        name = f"{'v' if args.varied else 'd'}{seed}"
        tour, mem, out = (Path(args.work) / name, Path(args.work) / f"{name}.mem", Path(args.work) / f"{name}.json")
        if not (tour / "world.json").exists():
            generate_tour(tour, minutes=args.minutes, seed=seed, log_progress=False, overwrite=True, varied=args.varied)
        if args.rescore or not out.exists():
            result = evaluate_tour(tour, VlkngConfig(), mem, progress=False)
            out.write_text(json.dumps(result, indent=1) + "\n")
        results.append(json.loads(out.read_text()))
        print(f"{name}: {len(results[-1]['questions'])} questions", file=sys.stderr)
    print(type_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
