"""`vlkng ask`: ask a memory a question; prints answer, ranked frames, goal and evidence."""

from __future__ import annotations

import argparse
import datetime as _dt

from ._common import add_config_args, config_from_args, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="ask a memory a question",
                       description="Answer a question from a memory: answer, ranked keyframes (stamp, "
                                   "score, pose), goal pose, evidence subgraph, per-stage time and tokens.")
    p.add_argument("memory", metavar="MEMORY", help="memory directory (from vlkng build)")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--options", nargs="+", default=[], metavar="OPT", help='multiple choice: "A. ..." "B. ..."')
    p.add_argument("-k", type=int, default=None, help="number of frames (default ask.top_k)")
    p.add_argument("--mode", choices=["ger", "gr", "full", "cwgr", "lexical"], help="retrieval mode (default ask.mode)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    add_config_args(p)
    p.set_defaults(func=run)


def _stamp(ns: int) -> str:
    return _dt.datetime.fromtimestamp(ns / 1e9, _dt.timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def run(args: argparse.Namespace) -> int:
    from ..core.ask.engine import AskEngine
    from ..core.ask.types import AskRequest
    from ..core.llm.registry import make_llm
    from ..core.memory import Memory

    cfg = config_from_args(args)
    import logging
    import time

    with Memory.open(args.memory, cfg, read_only=True) as memory:
        t0 = time.perf_counter()
        memory.check_vectors()  # missing or foreign vectors: re-indexed, never a silently worse answer
        engine = AskEngine(memory, cfg, make_llm(cfg.llm))
        engine.warm_up()  # model load and caches are start-up cost, not part of the question's timings
        logging.getLogger("vlkng.ask").info("memory opened and warmed up in %.1f s", time.perf_counter() - t0)
        res = engine.ask(AskRequest(args.question, list(args.options), args.k or 0, args.mode))
    if args.json:
        print_json(res.to_dict())
        return 0 if res.success else 1
    if not res.success:
        raise ValueError(res.message)
    print(f"answer: {res.answer}" + (f"  [choice {res.choice}]" if res.choice else ""))
    if res.message != "ok":
        print(f"note:   {res.message}")
    print(f"frames ({res.mode}):")
    for i, f in enumerate(res.frames, 1):
        pose = f"({f.pose.x:.2f}, {f.pose.y:.2f}, yaw {f.pose.yaw:.2f})" if f.pose else "(no pose)"
        print(f"  {i}. {f.tour_id} {f.stamp_ns} [{_stamp(f.stamp_ns)}] score {f.score:.3f} pose {pose} "
              f"objects {', '.join(f.object_ids)}")
    if res.goal:
        print(f"goal:   ({res.goal.x:.2f}, {res.goal.y:.2f}, yaw {res.goal.yaw:.2f}) from {res.goal_source}"
              f" (target {res.target_object_id})")
    else:
        print("goal:   none (nothing to go to)")
    print("evidence objects:")
    for o in res.evidence_objects:
        frames = ", ".join(str(s) for _, s in o.frames[:4])
        print(f"  {o.id} {o.label} {o.attributes} score {o.score:.3f} frames {frames}")
    print("evidence relations:")
    for r in res.evidence_relations:
        print(f"  {r.subject} {r.predicate} {r.object}")
    print("time (ms): " + ", ".join(f"{k} {v * 1000:.1f}" for k, v in res.timings_s.items()))
    print("prompt tokens: " + ", ".join(f"{k} {v}" for k, v in res.prompt_tokens.items()))
    return 0
