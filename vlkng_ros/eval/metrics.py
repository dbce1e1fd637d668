"""Association quality of a memory against a tour's annotations (gt_track identities).

Each observation an object node was merged from (stamp, bbox) is matched to the annotated object
of that frame with the highest IoU (one-to-one per frame, IoU >= ``min_iou``). Then, over all
pairs of matched observations: precision = pairs the memory put in one node that truly are one
object / pairs it put in one node; recall = true same-object pairs the memory put in one node /
all true same-object pairs; F1 of the two. Fragmentation = mean number of nodes a physical object
was split into (1.0 is perfect). Only exported data is used, so anyone can recompute it from
`vlkng export` output.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Mapping

from ..core.model import BBox, ObjectNode


def iou(a: BBox | list[float], b: BBox | list[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match_observations(objects: Iterable[ObjectNode], annotations: Mapping[str, Mapping[int, dict]],
                       min_iou: float = 0.3) -> list[tuple[str, str]]:
    """(node id, gt_track) per observation that matches an annotated object of its frame.
    ``annotations``: tour_id -> stamp_ns -> annotation line (docs/tour-format.md)."""
    by_frame: dict[tuple[str, int], list[tuple[str, BBox]]] = defaultdict(list)
    for node in objects:
        for ob in node.observations:
            if ob.tour_id in annotations:
                by_frame[(ob.tour_id, ob.stamp_ns)].append((node.id, ob.bbox))
    pairs: list[tuple[str, str]] = []
    for (tour, stamp), dets in by_frame.items():
        gts = [(g["gt_track"], g["bbox"]) for g in annotations[tour].get(stamp, {}).get("objects", [])]
        cand = sorted(((iou(db, gb), di, gi) for di, (_, db) in enumerate(dets)
                       for gi, (_, gb) in enumerate(gts)), reverse=True)
        used_d: set[int] = set()
        used_g: set[int] = set()
        for score, di, gi in cand:
            if score < min_iou:
                break
            if di in used_d or gi in used_g:
                continue
            used_d.add(di)
            used_g.add(gi)
            pairs.append((dets[di][0], gts[gi][0]))
    return pairs


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def association_scores(matches: list[tuple[str, str]]) -> dict[str, float | int | None]:
    cells = Counter(matches)
    per_node = Counter(node for node, _ in matches)
    per_gt = Counter(gt for _, gt in matches)
    tp = sum(_pairs(n) for n in cells.values())
    pred = sum(_pairs(n) for n in per_node.values())
    true = sum(_pairs(n) for n in per_gt.values())
    precision = tp / pred if pred else 1.0
    recall = tp / true if true else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    nodes_per_gt: dict[str, set[str]] = defaultdict(set)
    for node, gt in cells:
        nodes_per_gt[gt].add(node)
    frag = sum(len(v) for v in nodes_per_gt.values()) / len(nodes_per_gt) if nodes_per_gt else None
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "fragmentation": round(frag, 4) if frag is not None else None,
            "matched_observations": len(matches), "physical_objects": len(per_gt), "nodes": len(per_node)}


def memory_association(memory, tour_dirs: list[str]) -> dict:
    """Association scores of a memory against the annotations of ``tour_dirs`` (default: the
    tours the memory remembers being built from that have annotations.jsonl)."""
    from pathlib import Path

    from ..core.tour import Tour

    graph = memory.graph
    annotations: dict[str, dict[int, dict]] = {}
    from ..core.tour_identity import TOUR_OF_FINGERPRINT_META, tour_fingerprint

    if tour_dirs:  # the memory's id of each given tour comes from the tour's content
        pairs = []
        for d in tour_dirs:
            tour = Tour.open(d)
            tid = graph.get_meta(TOUR_OF_FINGERPRINT_META + tour_fingerprint(tour)) or tour.tour_id
            pairs.append((tid, d))
    else:
        pairs = [(t, p) for t in graph.tours() if (p := graph.get_meta(f"tour_path:{t}"))]
    for tid, d in pairs:
        if Path(d, "annotations.jsonl").exists():
            annotations[tid] = Tour.open(d).annotations
    association = {"precision": None, "recall": None, "f1": None, "fragmentation": None}
    if annotations:
        association = association_scores(match_observations(list(graph.iter_objects()), annotations))
    return {"association": association, "scored_tours": sorted(annotations)}


def node_track_counts(memory, tour_dir) -> dict[str, Counter]:
    """Per object node of a memory built from a generated tour: how many of its observations
    matched each ground-truth track (box overlap, never labels), the tour taken under the id the
    memory knows it by (tour identity is its content)."""
    from ..core.tour import Tour
    from ..core.tour_identity import TOUR_OF_FINGERPRINT_META, tour_fingerprint

    tour = Tour.open(tour_dir)
    tid = memory.graph.get_meta(TOUR_OF_FINGERPRINT_META + tour_fingerprint(tour)) or tour.tour_id
    per_node: dict[str, Counter] = defaultdict(Counter)
    for node_id, track in match_observations(list(memory.graph.iter_objects()), {tid: tour.annotations}):
        per_node[node_id][track] += 1
    return per_node


def position_errors(memory, tour_dir, position_of=None) -> list[dict]:
    """Per ground-truth object of a generated tour (world.json): the distance from its true centre
    to the memory node holding most of its matched observations (what /ask would most likely send
    the robot to). ``position_of(node)`` -> ((x, y), var) | None overrides the stored position."""
    import json
    import math
    from pathlib import Path

    from ..core.tour import Tour

    world = json.loads((Path(tour_dir) / "world.json").read_text())
    gt = {o["gt_track"]: o for o in world["objects"]}
    t = Tour.open(tour_dir)
    nodes = {n.id: n for n in memory.graph.iter_objects()}
    per_gt: dict[str, Counter] = defaultdict(Counter)
    for node_id, track in match_observations(nodes.values(), {t.tour_id: t.annotations}):
        per_gt[track][node_id] += 1
    rows = []
    for track, counts in per_gt.items():
        if track not in gt:
            continue
        o = gt[track]
        node_id, n_main = counts.most_common(1)[0]
        node = nodes[node_id]
        pos, var = node.position, node.position_var
        if position_of is not None:
            est = position_of(node)
            pos, var = est if est else (None, None)
        if pos is None:
            continue
        size = max(o.get("size_m", [0.0, 0.0])[:2])
        rows.append({"track": track, "node": node_id, "label": o["label"], "size": size, "big": size >= 1.0,
                     "err": math.dist(pos, o["xy"]), "var": var or 0.0, "nodes": len(counts),
                     "main_share": n_main / sum(counts.values()), "n_obs": sum(counts.values())})
    return rows
