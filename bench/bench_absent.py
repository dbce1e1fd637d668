"""Found vs not-seen: false-found rate on absent-object questions and found rate on present-object
questions, over the decision's margin (core/ask/found.py, ask.found_margin).

For each seed a tour is generated (eval/sim) and built, then every presence question
(eval/absent.py) is asked once; each answer's score (core/ask/found.py FoundRule.score) decides "found" at every margin of the curve, so one pass gives the whole curve.

    python bench/bench_absent.py --seeds 41 42 --minutes 1 --work /tmp/absent

``--activities``: the same two sides for questions naming a use ("where can I have a meal?",
eval/absent.py activity_questions), each asked once through the engine: found with a goal at a
thing of a class that affords it (present), found at all (absent: a false find).

``--rooms``: present questions naming the room a seen thing is in ("where is the plant in the
living room?", eval/absent.py room_questions), right when the target is a thing of that class in
that kind of room; split out, those whose things were seen mostly through a door from another
room; and the share of objects whose shown room (present.shown_place) is the room they are in.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def scores_for(tour: Path, mem: Path) -> list[tuple[bool, float, str, str]]:
    """(present, score, question, what the memory holds of a present question's class: "held",
    "merged" (only inside other objects' nodes), "not built"; "" for absent questions). A held
    miss also names the held node's labels and that node's own ``match`` (the rule's verdict on
    the right object) and whether retrieval brought it to the rule at all."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.found import _labels
    from vlkng_ros.core.ask.query import decompose
    from vlkng_ros.core.llm.base import LLMUsage
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.eval.absent import held_classes, presence_questions

    cfg = VlkngConfig()
    out = []
    with Memory.open(mem, cfg, read_only=True) as memory:
        engine = AskEngine(memory, cfg)
        rule = engine.found_rule
        held = held_classes(memory, tour)
        nodes = {n.id: n for n in memory.graph.iter_objects()}
        for q in presence_questions(tour):
            pq, _ = decompose(q.question, None, LLMUsage())
            sub, _ = engine._retrieve(pq, cfg.ask.mode)
            score = rule.score(sub, pq)  # found at margin m  <=>  score >= m
            status, note = "shared" if q.shares_word else "", ""
            if q.present:
                h = held.get(q.label, {"held": set(), "merged": set()})
                status = "held" if h["held"] else "merged" if h["merged"] else "not built"
                if h["held"] and score < cfg.ask.found_margin:
                    checked = set(rule._candidates(sub, pq)[0])
                    own = max(h["held"], key=lambda i: rule.match_node(pq.target, nodes[i]))
                    node = nodes[own]
                    note = (f" [{q.label}: seen as {'/'.join(dict.fromkeys(_labels(node)))}, own match "
                            f"{rule.match_node(pq.target, node):.3f}"
                            f"{'' if own in checked else ', not retrieved'}]")
                elif score < cfg.ask.found_margin:
                    note = f" [{q.label}: {status}]"
            out.append((q.present, score, q.question + note, status))
    return out


def activity_answers(tour: Path, mem: Path) -> list[tuple[bool, str, str, bool]]:
    """(present, verdict, question, held) per activity question: verdict "right" (found, the target
    node holds a class affording it), "wrong" (found, another class), "not found"; ``held``: the
    memory holds an object of a class affording it (a present use whose every such thing the tour
    saw was never built cannot be found right: perception's miss, not the answer's)."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.types import AskRequest
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.eval.absent import activity_questions, held_classes

    cfg = VlkngConfig()
    out = []
    with Memory.open(mem, cfg, read_only=True) as memory:
        engine = AskEngine(memory, cfg)
        main_class = {n: lab for lab, h in held_classes(memory, tour).items() for n in h["held"]}
        held = set(main_class.values())
        for q in activity_questions(tour):
            res = engine.ask(AskRequest(q.question, [], 3))
            got = main_class.get(res.target_object_id, "?") if res.found else ""
            verdict = "not found" if not res.found else "right" if got in q.label.split("|") else "wrong"
            built = bool(held & set(q.label.split("|"))) if q.present else False
            out.append((q.present, verdict, f"{q.question} -> {got or '-'}"
                        + (f" (wants {q.label}{'' if built else ', never built'})"
                           if q.present and verdict != "right" else ""), built))
    return out


def room_answers(tour: Path, mem: Path) -> tuple[list[tuple[bool, str, str]], list[tuple[bool, bool, bool]]]:
    """Room questions (eval/absent.py room_questions), each asked once through the engine:
    (seen through a door, verdict, question) with verdict "right" (found, the target holds a thing
    of that class in that kind of room), "wrong" (found, another), "not found"; and per object node
    whose true room the robot entered: (seen through a door, the room shown is the true one,
    the object has a position)."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.types import AskRequest
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.present import place_index
    from vlkng_ros.eval.absent import _sightings, room_questions, true_rooms

    cfg = VlkngConfig()
    asked, shown = [], []
    with Memory.open(mem, cfg, read_only=True) as memory:
        engine = AskEngine(memory, cfg)
        truth = true_rooms(memory, tour)
        for q in room_questions(tour):
            res = engine.ask(AskRequest(q.question, [], 3))
            got = truth.get(res.target_object_id, ("?", "?", False))[:2] if res.found else ("-", "-")
            verdict = "not found" if not res.found else "right" if got == (q.label, q.room) else "wrong"
            asked.append((q.through_door, verdict, f"{q.question} -> {' in the '.join(got)}"))
        visited = _sightings(Path(tour))[2]
        places = place_index(memory)
        nodes = {n.id: n for n in memory.graph.iter_objects()}
        for node_id, (_, room, through) in truth.items():
            if room in visited and node_id in nodes:
                node = nodes[node_id]
                shown.append((through, places.main_place(node).lower() == room, node.position is not None))
    return asked, shown


def report_rooms(asked: list[tuple[bool, str, str]], shown: list[tuple[bool, bool, bool]]) -> None:
    share = lambda rs, v: sum(r[1] in v for r in rs) / max(1, len(rs))  # noqa: E731
    for name, rows in (("all", asked), ("seen mostly through a door", [r for r in asked if r[0]])):
        print(f"room questions, {name}: {len(rows)}; found right {share(rows, ('right',)):.3f}, "
              f"found {share(rows, ('right', 'wrong')):.3f}")
    for name, rows in (("all", shown), ("seen mostly through a door", [r for r in shown if r[0]])):
        print(f"objects in a room entered, {name}: {len(rows)}; room shown right "
              f"{sum(r[1] for r in rows) / max(1, len(rows)):.3f}")
    print("room questions not right:", [q for _, v, q in asked if v != "right"])


def report_activities(rows: list[tuple[bool, str, str, bool]]) -> None:
    present = [r for r in rows if r[0]]
    held = [r for r in present if r[3]]
    absent = [r for r in rows if not r[0]]
    share = lambda rs, v: sum(r[1] in v for r in rs) / max(1, len(rs))  # noqa: E731
    print(f"activity questions: {len(present)} present ({len(held)} where the memory holds a thing that serves "
          f"it, {len(present) - len(held)} whose serving things were seen but never built), {len(absent)} absent")
    print(f"present: found right {share(present, ('right',)):.3f}, found {share(present, ('right', 'wrong')):.3f}; "
          f"absent: false-found {share(absent, ('right', 'wrong')):.3f}")
    print(f"held: found right {share(held, ('right',)):.3f}, found {share(held, ('right', 'wrong')):.3f}; "
          f"never built: found {share([r for r in present if not r[3]], ('right', 'wrong')):.3f}")
    print("present, not right:", [q for _, v, q, _ in present if v != "right"])
    print("absent, found:", [q for _, v, q, _ in absent if v != "not found"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--work", default="/tmp/vlkng-absent")
    ap.add_argument("--varied", action="store_true", help="generalisation worlds (vlkng sim --varied)")
    ap.add_argument("--build-only", action="store_true", help="generate and build the memories, ask nothing "
                    "(prepare fresh seeds without reading them)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--activities", action="store_true", help="ask the activity questions instead (see above)")
    ap.add_argument("--rooms", action="store_true", help="ask for seen things by their room instead (\"where is the "
                    "plant in the living room?\"), and score the room shown for each object")
    args = ap.parse_args()
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.pipeline import build_tour
    from vlkng_ros.eval.sim import generate_tour

    rows: list[tuple[bool, float, str, str]] = []
    acts: list[tuple[bool, str, str, bool]] = []
    rooms: tuple[list, list] = ([], [])
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
        if args.rooms:
            asked, shown = room_answers(tour, mem)
            rooms[0].extend(asked)
            rooms[1].extend(shown)
        elif args.activities:
            acts += activity_answers(tour, mem)
        elif not args.build_only:
            rows += scores_for(tour, mem)
    if args.build_only:
        return 0
    if args.rooms:
        report_rooms(*rooms)
        return 0
    if args.activities:
        report_activities(acts)
        return 0
    present = np.array([s for p, s, _, _ in rows if p])
    absent = np.array([s for p, s, _, h in rows if not p and h != "shared"])
    shared = np.array([s for p, s, _, h in rows if not p and h == "shared"])
    held = np.array([s for p, s, _, h in rows if p and h == "held"])
    current = VlkngConfig().ask.found_margin
    curve = []
    for m in [round(x, 2) for x in np.arange(0.0, 0.42, 0.02)]:
        curve.append({"margin": m, "found_present": float(np.mean(present >= m)),
                      "found_held": float(np.mean(held >= m)) if len(held) else None,
                      "false_found_absent": float(np.mean(absent >= m)),
                      "false_found_shared": float(np.mean(shared >= m)) if len(shared) else None,
                      "false_found_all": float(np.mean(np.concatenate([absent, shared]) >= m))})
    if args.json:
        json.dump({"seeds": args.seeds, "present": len(present), "held": len(held), "absent": len(absent),
                   "shared": len(shared), "margin": current, "curve": curve}, sys.stdout, indent=1)
        return 0
    kinds = {k: sum(1 for p, _, _, h in rows if p and h == k) for k in ("held", "merged", "not built")}
    print(f"seeds {args.seeds}: {len(present)} present-object questions ({kinds['held']} whose class the memory "
          f"holds, {kinds['merged']} only merged into other objects, {kinds['not built']} never built), "
          f"{len(absent)} absent-object questions, {len(shared)} absent compounds sharing a word with a thing seen")
    print("found(held) = the rule's own recall: present questions whose class the memory holds")
    print("false-found(shared) = absent compounds sharing a word with a thing seen (\"coffee machine\": a coffee "
          "table seen); (all) = both absent sets")
    print("margin  found(present)  found(held)  false-found(absent)  false-found(shared)  false-found(all)")
    for c in curve:
        mark = "  <- ask.found_margin" if abs(c["margin"] - current) < 1e-9 else ""
        fh = f"{c['found_held']:11.3f}" if c["found_held"] is not None else f"{'-':>11}"
        fs = f"{c['false_found_shared']:19.3f}" if c["false_found_shared"] is not None else f"{'-':>19}"
        print(f"{c['margin']:6.2f}  {c['found_present']:14.3f}  {fh}  {c['false_found_absent']:19.3f}  {fs}  "
              f"{c['false_found_all']:16.3f}{mark}")
    for kind, name in (("", "absent"), ("shared", "shared-word absent")):
        false = sorted(((s, q) for p, s, q, h in rows if not p and h == kind and s >= current), reverse=True)
        print(f"{name} questions found at {current}:", [(round(s, 3), q) for s, q in false])
    for kind in ("held", "merged", "not built"):
        missed = sorted((s, q) for p, s, q, h in rows if p and h == kind and s < current)
        print(f"present questions not found at {current}, {kind} ({len(missed)}):", [(round(s, 3), q) for s, q in missed])
    return 0


if __name__ == "__main__":
    sys.exit(main())
