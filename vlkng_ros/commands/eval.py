"""`vlkng eval`: build (or reuse) a tour's memory and score every benchmark question
(the runner is vlkng_ros.eval.runner)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._common import add_config_args, config_from_args, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="score a tour's benchmark questions",
                       description="Build (or reuse) the memory of a tour and score every question of its "
                                   "questions.json: Retrieval Acc@1/3/5, Precision@5, Recall@5, MRR@5, answer "
                                   "accuracy, goal error and success (<= 1.5 m), overall and per type, for the "
                                   "configured mode and the baselines F, CwGR, lexical and GR.")
    p.add_argument("tour", metavar="TOUR", help="tour folder with questions.json (built into --memory), or an "
                   "OpenEQA .json / NaVQA .csv answered from an existing --memory (never built or changed)")
    p.add_argument("--predictions", metavar="F", help="OpenEQA/NaVQA: write the predictions in the benchmark's own "
                   "format here (OpenEQA: [{question_id, answer}]; NaVQA: ReMEmbR answer objects)")
    p.add_argument("--episode", metavar="ID", help="OpenEQA: only questions whose episode_history contains ID; "
                   "NaVQA: only sequence ID")
    p.add_argument("--memory", metavar="DIR", help="memory directory (default: TOUR/../<tour>.memory-noise<X>)")
    p.add_argument("--noise", type=float, help="annotations perception noise (0 = exact annotations)")
    p.add_argument("--json", metavar="F", help="write the results JSON here")
    p.add_argument("--report", metavar="F.md", help="write a markdown report (plots next to it)")
    p.add_argument("--no-baselines", action="store_true", help="score only the configured mode")
    add_config_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..eval.runner import evaluate_tour, write_report

    from ..eval.benchmarks import detect, evaluate_benchmark

    tour_dir = Path(args.tour)
    if not tour_dir.exists():
        raise FileNotFoundError(f"{tour_dir} does not exist")
    if detect(tour_dir) != "tour":
        if not args.memory:
            raise ValueError(f"{tour_dir.name}: a benchmark file is answered from an existing memory: add --memory DIR")
        cfg = config_from_args(args)
        result = evaluate_benchmark(tour_dir, cfg, Path(args.memory), Path(args.predictions) if args.predictions else None,
                                    args.episode)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
        summary = {k: v for k, v in result["scores"].items() if k != "rows"}
        print_json({"benchmark": result["benchmark"], "accepted": result["accepted"],
                    "rejected": len(result["rejected"]), "answer_types": result["answer_types"],
                    "scores": summary, "predictions": result["predictions"]})
        return 0
    cfg = config_from_args(args, **{"perception.noise": args.noise, "perception.backend": "annotations"})
    mem_dir = Path(args.memory) if args.memory else tour_dir.parent / f"{tour_dir.name}.memory-noise{cfg.perception.noise:g}"
    result = evaluate_tour(tour_dir, cfg, mem_dir, baselines=not args.no_baselines, progress=not args.quiet)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    if args.report:
        write_report(result, Path(args.report))
    if not args.json:
        print_json({"overall": result["overall"], "baselines": {k: {m: v.get(m) for m in ("retrieval_acc@1", "mrr@5", "retrieval_acc@5", "goal_success")} for k, v in result["baselines"].items()}})
    return 0
