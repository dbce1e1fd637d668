"""Capture coverage: of the things the camera saw, how many reached a keyframe, perception, the memory.

For each seed a tour is generated (eval/sim) and built (as bench/bench_absent.py does, same folder
layout, so ``--work`` can share memories with it). Per object class the tour saw (an annotated
box in some frame, the "present" questions of eval/absent.py), the first stage it is lost at:

  visible   a box in some tour frame (every present class)
  keyframe  a box in some keyframe            (lost here: the keyframe selector, core/capture.py)
  detected  an observation matched to it      (lost here: simulated perception, its miss rate)
  held      the memory holds a node mostly of it (lost here: association merged it away)

"Seen well": some box of at least ``--min-area`` pixels (a thing a VLM could name); a class lost
at "keyframe" is marked "small" when it never was. It is explained by where the camera saw it: in the tour's last
``--tail`` seconds after the last keyframe ("tail"), while turning faster than 0.5 rad/s (the
renderer's motion blur: "turn"), or elsewhere ("between": between keyframes while driving).
Keyframes per minute is the VLM's cost. ``--capture-only``: no memory is built; the keyframes are
what the selector (core/capture.py) keeps of the tour's frames, the stages end at "keyframe" (a
quick check of capture alone, also of an older tree's selector: PYTHONPATH=that tree).

    python bench/bench_coverage.py --seeds 461 462 --minutes 0.6 --work /tmp/coverage
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

STAGES = ("visible", "keyframe", "detected", "held")


def _turn_rates(tour_dir: Path, stamps: list[int]) -> dict[int, float]:
    """The simulator's true yaw rate (rad/s) at each stamp of a generated tour."""
    from vlkng_ros.eval.sim.generate import EPOCH_NS, move_objects_in
    from vlkng_ros.eval.sim.trajectory import walk
    from vlkng_ros.eval.sim.world import build_world

    meta = json.loads((tour_dir / "world.json").read_text())
    seed = int(meta["tour_seed"])
    world = build_world(int(meta["world_seed"]), bool(meta.get("varied", False)))
    move_objects_in(world, len(meta.get("moved", [])), seed)
    traj = walk(world, float(meta["duration_s"]), seed)
    epoch = EPOCH_NS + (seed % 1000) * 86_400 * 1_000_000_000
    omega = traj.at(np.array([(s - epoch) / 1e9 for s in stamps]))[3]
    return dict(zip(stamps, np.abs(omega).tolist()))


def selected_keyframes(tour) -> set[int]:
    """Stamps the keyframe selector keeps of a tour's frames, as a build offers them."""
    from vlkng_ros.core.capture import KeyframeSelector
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.pipeline import tour_pose_lookup

    cfg = VlkngConfig()
    _, lookup = tour_pose_lookup(tour, cfg)
    sel = KeyframeSelector(cfg.capture)
    kept: set[int] = set()
    for fm in tour.frames():
        if fm.rgb is None:
            continue
        d = sel.consider(fm.stamp_ns, fm.rgb, lookup(fm.stamp_ns, fm.frame_id))
        kept.update(h.stamp_ns for h in getattr(d, "released", ()))
        if d.keep:
            kept.add(fm.stamp_ns)
    kept.update(h.stamp_ns for h in (sel.flush() if hasattr(sel, "flush") else ()))  # older trees: no flush
    return kept


def coverage(tour_dir: Path, mem: Path | None, min_area: int, tail_s: float) -> dict:
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.tour import Tour
    from vlkng_ros.core.tour_identity import TOUR_OF_FINGERPRINT_META, tour_fingerprint
    from vlkng_ros.eval.absent import _world_classes, held_classes
    from vlkng_ros.eval.metrics import match_observations

    tour = Tour.open(tour_dir)
    ann = tour.annotations
    stamps = sorted(ann)
    world = json.loads((tour_dir / "world.json").read_text())
    label_of = {o["gt_track"]: o["label"] for o in world["objects"]}
    _, seen = _world_classes(tour_dir)
    if mem is None:
        kf_stamps = selected_keyframes(tour)
        detected = held = set(seen)  # not measured: every class in a keyframe counts as reaching the end
    else:
        with Memory.open(mem, VlkngConfig(), read_only=True) as memory:
            tid = memory.graph.get_meta(TOUR_OF_FINGERPRINT_META + tour_fingerprint(tour)) or tour.tour_id
            kf_stamps = {kf.stamp_ns for kf in memory.graph.keyframes(tid)}
            detected = {label_of.get(t, "") for _, t in match_observations(list(memory.graph.iter_objects()),
                                                                             {tid: ann})}
            held = {lab for lab, h in held_classes(memory, tour_dir).items() if h["held"]}
    sightings: dict[str, list[tuple[int, float]]] = defaultdict(list)  # class -> (stamp, box area px)
    for s in stamps:
        for o in ann[s].get("objects", []):
            x1, y1, x2, y2 = o["bbox"]
            sightings[o["label"]].append((s, (x2 - x1) * (y2 - y1)))
    omega = _turn_rates(tour_dir, stamps)
    end, last_kf = stamps[-1], max(kf_stamps, default=stamps[0])
    stage_of: dict[str, str] = {}
    why: dict[str, str] = {}
    for lab in sorted(seen):
        rows = sightings[lab]
        if not any(s in kf_stamps for s, _ in rows):
            stage_of[lab] = "visible"
            good = [s for s, px in rows if px >= min_area]
            size = "" if good else f"small: {max(px for _, px in rows)} px, "
            good = good or [s for s, _ in rows]
            if all(s > last_kf and (end - s) / 1e9 <= tail_s for s in good):
                why[lab] = size + "tail"
            elif all(omega[s] > 0.5 for s in good):
                why[lab] = size + "turn"
            else:
                why[lab] = size + f"between, {len(rows)} frames"
        elif lab not in detected:
            stage_of[lab] = "keyframe"
        elif lab not in held:
            stage_of[lab] = "detected"
        else:
            stage_of[lab] = "held"
    minutes = (end - stamps[0]) / 60e9
    well = {lab for lab in seen if any(px >= min_area for _, px in sightings[lab])}
    return {"classes": stage_of, "why": why, "well": well, "keyframes": len(kf_stamps), "minutes": minutes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--work", default="/tmp/vlkng-coverage")
    ap.add_argument("--varied", action="store_true", help="generalisation worlds (vlkng sim --varied)")
    ap.add_argument("--min-area", type=int, default=400, help="a box of this many pixels is 'seen well' (400: 20 x 20)")
    ap.add_argument("--capture-only", action="store_true", help="no memory: the selector's keyframes (see above)")
    ap.add_argument("--tail", type=float, default=2.0, help="seconds at the tour's end counted as its tail")
    args = ap.parse_args()
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.pipeline import build_tour
    from vlkng_ros.eval.sim import generate_tour

    stages = STAGES[:2] if args.capture_only else STAGES
    reached = {s: 0 for s in stages}
    well = {"seen": 0, "keyframe": 0}
    lost: dict[str, list[str]] = defaultdict(list)
    keyframes = minutes = 0.0
    total = 0
    for seed in args.seeds:
        name = f"s{seed}{'v' if args.varied else ''}"
        tour, mem = Path(args.work) / name, Path(args.work) / f"{name}.mem"
        if not (tour / "world.json").exists():
            generate_tour(tour, minutes=args.minutes, seed=seed, log_progress=False, overwrite=True, varied=args.varied)
        if not args.capture_only and not (mem / "graph.sqlite").exists():
            cfg = VlkngConfig()
            with Memory.open(mem, cfg) as m:
                build_tour(tour, m, cfg, progress=False)
        res = coverage(tour, None if args.capture_only else mem, args.min_area, args.tail)
        keyframes += res["keyframes"]
        minutes += res["minutes"]
        for lab, stage in res["classes"].items():
            total += 1
            k = STAGES.index(stage)
            for s in stages[: k + 1]:
                reached[s] += 1
            if lab in res["well"]:
                well["seen"] += 1
                well["keyframe"] += k >= 1
            if k + 1 < len(stages):
                lost[stages[k + 1]].append(f"{name}:{lab}" + (f" ({res['why'][lab]})" if lab in res["why"] else ""))
        print(f"{name}: {res['keyframes']} keyframes in {res['minutes']:.2f} min", file=sys.stderr)
    print(f"seeds {args.seeds}{' varied' if args.varied else ''}, {args.minutes} min: {total} classes seen, "
          f"{keyframes / max(minutes, 1e-9):.1f} keyframes/min ({int(keyframes)} keyframes)")
    for s in stages:
        print(f"  {s:9s} {reached[s]:4d}  {reached[s] / max(total, 1):.3f}")
    print(f"  seen well (a box >= {args.min_area} px): {well['seen']}, in a keyframe {well['keyframe']} "
          f"({well['keyframe'] / max(well['seen'], 1):.3f})")
    for s in stages[1:]:
        if lost[s]:
            print(f"lost before '{s}' ({len(lost[s])}): {', '.join(lost[s])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
