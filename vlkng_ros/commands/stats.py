"""`vlkng stats`: what a memory holds, and association quality where annotations exist."""

from __future__ import annotations

import argparse

from ._common import add_config_args, config_from_args, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "stats", help="print objects, relations, keyframes, tours and association scores",
        description="Counts of a memory, and association scores (pairwise precision/recall/F1 of "
                    "merged identities against gt_track, fragmentation) for every tour whose "
                    "folder (remembered at build time, or given with --tour) has annotations.jsonl.")
    p.add_argument("memory", metavar="MEMORY", help="memory directory")
    p.add_argument("--tour", action="append", default=[], metavar="DIR",
                   help="tour folder to score against (default: the tours the memory was built from)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_config_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..core.memory import Memory
    from ..core.stats import memory_stats
    from ..eval.metrics import memory_association

    with Memory.open(args.memory, config_from_args(args), read_only=True) as memory:
        stats = {**memory_stats(memory), **memory_association(memory, args.tour)}
    if args.json:
        print_json(stats)
        return 0
    print(f"objects:   {stats['objects']} ({stats['objects_in_several_tours']} seen in several tours)")
    print(f"relations: {stats['relations']}")
    print(f"keyframes: {stats['keyframes']} ({stats['keyframes_with_pose']} with a pose)")
    if stats["keyframes"] and not stats["keyframes_with_pose"]:
        print("geometry:  NONE - no keyframe has a pose, so objects have no positions and answers no "
              "goal poses (objects were told apart by place and time only); fix the pose source and "
              "build again to re-tag the keyframes")
    elif stats["objects"]:
        print(f"geometry:  {stats['objects_with_position']}/{stats['objects']} objects have a position")
    print(f"tours:     {stats['tours']} ({', '.join(stats['tour_ids'])})")
    if stats["camera_height_m"] is not None:
        how = ("from capture.camera_height_m" if stats["camera_height_source"] == "config"
               else f"estimated from {stats['camera_height_samples']} objects")
        print(f"camera:    {stats['camera_height_m']:.2f} m above the floor ({how}); "
              f"{stats['floor_ranged_objects']} objects ranged by floor contact")
    else:
        print(f"camera:    height unknown: floor ranging off or not estimated yet "
              f"({stats['camera_height_samples']} objects placed by bearings so far)")
    if stats["keyframes_with_depth"] or stats["depth_placed_objects"]:
        placed = stats["depth_placed"]
        shown = ", ".join(f"{o['id']} ({o['label']})" for o in placed[:12]) + (", ..." if len(placed) > 12 else "")
        print(f"depth:     {stats['depth_placed_objects']} of {stats['objects']} objects placed with depth "
              f"({stats['keyframes_with_depth']} keyframes carry depth){': ' + shown if placed else ''}")
    else:
        print("depth:     none (no keyframe carries depth: objects placed by bearings and floor contact)")
    a = stats["association"]
    if a.get("f1") is not None and a.get("matched_observations"):
        frag = "n/a" if a.get("fragmentation") is None else f"{a['fragmentation']:.2f}"
        print(f"association vs annotations of {', '.join(stats['scored_tours'])}: "
              f"precision {a['precision']:.3f}  recall {a['recall']:.3f}  F1 {a['f1']:.3f}  "
              f"fragmentation {frag} nodes/object "
              f"({a['physical_objects']} physical objects, {a['nodes']} nodes)")
    elif a.get("f1") is not None:
        print(f"association: no observation of this memory matches the annotations of "
              f"{', '.join(stats['scored_tours'])}")
    else:
        print("association: no annotations available to score against")
    return 0
