"""`vlkng ask`: ask a memory a question; prints answer, ranked frames, goal and evidence."""

from __future__ import annotations

import argparse
from ._common import add_config_args, config_from_args, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="ask a memory a question",
                       description="Answer a question from a memory: the answer, the ranked keyframes (their files, "
                                   "where and when each was taken, what it shows), the goal pose, the evidence "
                                   "(objects by name, relations), per-stage time and tokens.")
    p.add_argument("memory", metavar="MEMORY", help="memory directory (from vlkng build)")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--options", nargs="+", default=[], metavar="OPT", help='multiple choice: "A. ..." "B. ..."')
    p.add_argument("-k", type=int, default=None, help="number of frames (default ask.top_k)")
    p.add_argument("--mode", choices=["ger", "gr", "full", "cwgr", "lexical"], help="retrieval mode (default ask.mode)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON (with frame file paths, "
                                                       "readable names and where each frame was taken)")
    p.add_argument("--show", metavar="DIR", help="write the ranked frames with their boxes (and the rendered "
                                                 "evidence image, when there is one) into DIR")
    add_config_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..core.ask.engine import AskEngine
    from ..core.ask.types import AskRequest
    from ..core.llm.registry import make_llm
    from ..core.memory import Memory
    from ..core.present import result_payload

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
        d = result_payload(memory, res, with_paths=True)
        if args.show and res.success:  # the rendered evidence (keyframes with boxes beside a map)
            from ..core.ask.evidence_image import compose_for_result

            d["evidence_image"] = compose_for_result(memory, res) or ""
        shown = _show(memory, d, Path(args.show)) if args.show and res.success else []
    if args.json:
        d["shown"] = [str(p) for p in shown]
        print_json(d)
        return 0 if res.success else 1
    if not res.success:
        raise ValueError(res.message)
    _print(d, shown)
    return 0


def _show(memory, d: dict, folder) -> list:
    """Write each ranked frame with its boxes (the answer's objects drawn thicker), and the rendered
    evidence image when the answer has one, into ``folder``; the files written."""
    import base64

    from ..core.present import frame_jpeg

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, f in enumerate(d["frames"], 1):
        path = folder / f"frame{i}_{f['tour_id']}_{f['stamp']}.jpg"
        path.write_bytes(frame_jpeg(memory, f["tour_id"], int(f["stamp"]), True, f["object_ids"]))
        out.append(path)
    image = d.pop("evidence_image", None)
    if isinstance(image, str) and image:
        image = base64.b64decode(image)
    if isinstance(image, (bytes, bytearray)) and image:
        path = folder / ("evidence.png" if image[:4] == b"\x89PNG" else "evidence.jpg")
        path.write_bytes(image)
        out.append(path)
    return out


def _print(d: dict, shown: list) -> None:
    print(f"answer: {d['answer']}" + (f"  [choice {d['choice']}]" if d["choice"] else ""))
    if d.get("answer_type"):
        v = d.get("value") or {}
        extra = (f", {v['direction']}" if v.get("direction") else "")
        print(f"type:   {d['answer_type']}" + (f": {v.get('kind')} {v.get('text')!r}{extra}" if v.get("kind") else ""))
    if d["target_name"]:
        print(f"about:  {d['target_name']}")
    if d["message"] != "ok":
        print(f"note:   {d['message']}")
    print(f"frames ({d['mode']}):")
    for i, f in enumerate(d["frames"], 1):
        print(f"  {i}. {f['where']['text']} ({f['where']['time']}), score {f['score']:.3f}")
        print(f"     file:  {f['path'] or '(not in the frame store)'}")
        if f["objects"]:
            print(f"     shows: {', '.join(f['objects'])}")
    goal = d["goal"]
    if goal:
        import math

        yaw = math.degrees(math.atan2(2 * (goal["qw"] * goal["qz"] + goal["qx"] * goal["qy"]),
                                      1 - 2 * (goal["qy"] ** 2 + goal["qz"] ** 2)))
        source = {"object_position": "the object's estimated position",
                  "frame_pose": "where the best frame was taken"}.get(d["goal_source"], d["goal_source"])
        print(f"goal:   ({goal['x']:.2f}, {goal['y']:.2f}) m facing {yaw:.0f} deg, from {source}"
              + (f" ({d['target_name']})" if d["target_name"] else ""))
    else:
        print("goal:   none (nothing to go to)")
    if d["evidence_objects"]:
        print("evidence:")
        for o in d["evidence_objects"]:
            attrs = ", ".join(f"{k} {v}" for k, v in sorted(o["attributes"].items()) if v)
            print(f"  {o['name']}" + (f" ({attrs})" if attrs else "")
                  + f", seen in {len(o['frames'])} frame(s), score {o['score']:.2f}")
    for r in d["evidence_relations"]:
        print(f"  {r['text']}")
    if shown:
        print("written: " + ", ".join(str(p) for p in shown))
    print("time (ms): " + ", ".join(f"{k} {v * 1000:.1f}" for k, v in d["timings_s"].items()))
    print("prompt tokens: " + ", ".join(f"{k} {v}" for k, v in d["prompt_tokens"].items()))
