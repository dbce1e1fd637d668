#!/usr/bin/env python3
"""Depth benchmark: objects placed with depth vs without, on the same generated tours.

Each seed's tour is generated once WITH aligned depth (`vlkng sim --depth`: RealSense-like noise,
dropouts, stereo shadow, flying pixels) and built twice: with depth (the default) and with
``depth.enabled=false`` (bearings and floor contact only, what a robot without depth gets). Printed:

  position error of each ground-truth object's main node (as bench_positions.py), median / p90,
  big objects (largest footprint side >= 1 m) and small ones, with and without depth;
  goal success (goal within 1.5 m of goal_xy) and median goal error on the tour's questions, with
  and without depth (GER mode, annotation perception: the same retrieval both times), and the time
  an ask takes (median per question; its goal step's median and p90);
  the share of objects placed with depth;
  cost per keyframe of depth handling: on the capture thread (matching + hand-off: what is added
  to capture), in the depth writer thread (decode, shrink, 16-bit PNG, write), and per box at
  merge (the near-mode estimate; and with the fix and its surface points' extent added to an
  object's sums), each timed over the tour's keyframes;
  with --per-object, each big object's error broken down (``per_object``): along / across the
  mean view, the depth fixes' own centre, the fused centre before the surface bound, each view's
  fix re-measured, cut views, nodes, other objects' sightings in its node;
  with --union, each big object's position from the union of its views' surface points, several
  ways (``union_estimates``), against the stored one (depth8's evaluation).

    python bench/bench_depth.py [--seeds 21 22 23] [--minutes 1.5] [--workdir bench-out/depth] [--rebuild] [--varied]
                                [--no-cost] [--per-object] [--misses] [--union]
                                [--goal-max-from-object M]

--misses also lists every goal miss with depth and its class (``miss_row``).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_positions import HEADER, line, node_errors, summary  # noqa: E402

from vlkng_ros.core.config import VlkngConfig  # noqa: E402
from vlkng_ros.core.memory import Memory  # noqa: E402


GOAL_MAX_FROM_OBJECT_M: float | None = None  # --goal-max-from-object: ask.goal_max_from_object_m (None: the config's)


def config(depth: bool) -> VlkngConfig:
    cfg = VlkngConfig()
    cfg.depth.enabled = depth
    if GOAL_MAX_FROM_OBJECT_M is not None:
        cfg.ask.goal_max_from_object_m = GOAL_MAX_FROM_OBJECT_M
    return cfg


def build(tour: Path, mem_dir: Path, depth: bool, rebuild: bool) -> float:
    from vlkng_ros.core.pipeline import build_tour

    if rebuild:
        shutil.rmtree(mem_dir, ignore_errors=True)
    t0 = time.perf_counter()
    cfg = config(depth)
    with Memory.open(mem_dir, cfg) as mem:
        build_tour(tour, mem, cfg, progress=False)
    return time.perf_counter() - t0


class _Recorder:
    """An AskEngine whose answers are kept (the target node, its pooled position) for ``misses``,
    with each question's time (ms): the whole ask, and its goal step (``engine.goal_pose``)."""

    def __init__(self, engine):
        self.engine, self.results, self.ask_ms, self.goal_ms = engine, [], [], []

    def ask(self, req):
        import vlkng_ros.core.ask.engine as engine_module

        real, spent = engine_module.goal_pose, [0.0]

        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return real(*a, **k)
            finally:
                spent[0] += time.perf_counter() - t

        engine_module.goal_pose = timed
        t0 = time.perf_counter()
        try:
            res = self.engine.ask(req)
        finally:
            engine_module.goal_pose = real
        self.ask_ms.append(1000.0 * (time.perf_counter() - t0))
        self.goal_ms.append(1000.0 * spent[0])
        self.results.append(res)
        return res


def goals(tour: Path, mem_dir: Path, depth: bool, misses: list[dict] | None = None,
          times: dict[str, list[float]] | None = None) -> list[tuple[float, float]]:
    """(goal error (m; inf = no goal), goal_reach) of the tour's questions that have a goal_xy:
    tour-format's distance to the object's centre, and eval's goal_reach (within 1.5 m of its true
    footprint, the robot's disc clear of furniture). With ``misses``, one row per question that
    missed either is appended to it (``miss_row``); with ``times``, each question's ask and goal
    step times (ms) are added to its "ask" and "goal" lists."""
    import json

    from vlkng_ros.eval.retrieval_metrics import goal_reach

    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.eval.runner import evaluate, load_questions

    cfg = config(depth)
    questions = [q for q in load_questions(tour) if q.get("goal_xy")]
    world = json.loads((tour / "world.json").read_text())
    with Memory.open(mem_dir, cfg) as mem:
        stamps = [kf.stamp_ns for kf in mem.graph.keyframes()]
        engine = _Recorder(AskEngine(mem, cfg))
        result = evaluate(engine, questions, stamps, cfg.ask.mode)
        if times is not None:
            times.setdefault("ask", []).extend(engine.ask_ms)
            times.setdefault("goal", []).extend(engine.goal_ms)
        out = []
        tracks = node_tracks(mem, tour) if misses is not None else {}
        for q, a, res in zip(questions, result["questions"], engine.results):
            g = a["goal_xy"]
            err = float("inf") if g is None else ((g[0] - q["goal_xy"][0]) ** 2 + (g[1] - q["goal_xy"][1]) ** 2) ** 0.5
            reach = goal_reach(g, q, world) or 0.0
            out.append((err, reach))
            if misses is not None and (err > 1.5 or not reach):
                misses.append(miss_row(mem, cfg, q, res, world, tracks) | {"seed": tour.name.split("-")[1]})
    return out


def node_tracks(mem: Memory, tour: Path) -> dict[str, str]:
    """Object node id -> the ground-truth track most of its observations matched."""
    from vlkng_ros.eval.metrics import node_track_counts

    return {n: c.most_common(1)[0][0] for n, c in node_track_counts(mem, tour).items()}


def _edge_along(obj: dict, u: tuple[float, float]) -> float:
    """Distance (m) from a world object's centre to its (axis-aligned) footprint's edge along ``u``."""
    hx, hy = obj["size_m"][0] / 2.0, obj["size_m"][1] / 2.0
    return min(hx / abs(u[0]) if abs(u[0]) > 1e-9 else float("inf"), hy / abs(u[1]) if abs(u[1]) > 1e-9 else float("inf"))


def miss_row(mem: Memory, cfg: VlkngConfig, q: dict, res, world: dict, tracks: dict[str, str]) -> dict:
    """Why a question's goal missed tour-format's success (<= 1.5 m of the centre) or goal_reach.

    centre miss, first that applies: ``no goal``; ``frame pose`` (no object position); ``wrong
    object`` (the target node's observations match another ground-truth object, or none); for the
    right object: ``position`` (the goal stands <= 1.5 m off the ESTIMATED centre: the estimate
    is off), ``neighbours`` (the goal without the slide back over what depth saw would have been
    within 1.5 m), ``stand-off, true`` (the true footprint's edge along the approach + robot
    radius + clearance is > 1.5 m: no goal on this side can succeed), ``stand-off, measured`` (the
    estimated stand-off exceeded what the true footprint needs). reach miss: ``far`` (> 1.5 m off
    the footprint), ``blocked`` (the disc overlaps furniture: which), ``outside`` (no room).
    """
    import math

    from vlkng_ros.core import goals as gl
    from vlkng_ros.core.model import ObjectNode
    from vlkng_ros.eval.retrieval_metrics import GOAL_SUCCESS_M, ROBOT_RADIUS_M, _to_box

    objs = {o["gt_track"]: o for o in world["objects"] if "size_m" in o}
    target = next((objs[t] for t in q.get("targets") or [] if t in objs), None)
    row = {"q": q.get("id"), "question": q["question"], "label": target["label"] if target else "?",
           "size": target["size_m"][:2] if target else None, "centre": "", "reach": "", "err": float("inf"),
           "pos_err": None, "standoff": None, "node": "", "node_label": ""}
    if res.goal is None:
        row["centre"] = row["reach"] = "no goal"
        return row
    goal = (res.goal.x, res.goal.y)
    row["err"] = math.dist(goal, q["goal_xy"])
    node = next(iter(mem.graph.get_objects([res.target_object_id])), None) if res.target_object_id else None
    row["node"], row["node_label"] = res.target_object_id, node.label if node else ""
    track = tracks.get(res.target_object_id)
    right = track in (q.get("targets") or [])
    if target is not None:
        d = _to_box(goal, target)
        floor = [o for o in objs.values() if not o.get("support") and _to_box(goal, o) < ROBOT_RADIUS_M]
        rooms = world.get("rooms") or []
        inside = not rooms or any(r["bounds"][0] <= goal[0] <= r["bounds"][2] and r["bounds"][1] <= goal[1] <= r["bounds"][3]
                                  for r in rooms)
        if d > GOAL_SUCCESS_M:
            row["reach"] = f"far ({d:.2f} m off the footprint)"
        elif floor:
            row["reach"] = "blocked by " + ", ".join(o["label"] + (" (target)" if o is target else "") for o in floor)
        elif not inside:
            row["reach"] = "outside"
    if row["err"] <= GOAL_SUCCESS_M:
        return row
    if res.goal_source != "object_position" or res.target_position is None:
        row["centre"] = "frame pose"
    elif not right:
        row["centre"] = f"wrong object ({objs[track]['label'] if track in objs else 'no match'})"
    else:
        c = res.target_position
        row["pos_err"] = math.dist(c, q["goal_xy"])
        row["standoff"] = math.dist(goal, c)
        views = gl.object_views(mem, ObjectNode(node.id, node.label, observations=node.observations, position=c))
        free = [gl.View(v.pose, v.width_m, v.front_m) for v in views]
        radius = gl.object_radius(node.ray_stats, [v.width_m for v in views if v.width_m is not None])
        g0 = gl.standoff_goal(c, radius, free, cfg.ask.robot_radius_m, cfg.ask.goal_clearance_m)
        u = (goal[0] - c[0], goal[1] - c[1])
        n = math.hypot(*u) or 1.0
        need = _edge_along(target, (u[0] / n, u[1] / n)) + cfg.ask.robot_radius_m + cfg.ask.goal_clearance_m
        if row["standoff"] <= GOAL_SUCCESS_M:
            row["centre"] = "position"
        elif math.dist((g0.x, g0.y), q["goal_xy"]) <= GOAL_SUCCESS_M:
            row["centre"] = "neighbours"
        elif need > GOAL_SUCCESS_M:
            row["centre"] = f"stand-off, true ({need:.2f} m needed)"
        else:
            row["centre"] = f"stand-off, measured ({need:.2f} m needed)"
    return row


def print_misses(misses: list[dict]) -> None:
    from collections import Counter

    print("\ngoal misses with depth (seed, question id, target (true size), centre miss | goal_reach miss; "
          "goal error, estimated-centre error, stand-off, m):")
    for m in misses:
        size = "x".join(f"{s:.1f}" for s in m["size"]) if m["size"] else "?"
        extra = "" if m["pos_err"] is None else f" pos {m['pos_err']:.2f} standoff {m['standoff']:.2f}"
        print(f"  {m['seed']} {m['q']} {m['label']} ({size}) -> {m['node_label'] or '-'}: "
              f"{m['centre'] or 'ok'} | {m['reach'] or 'ok'}; err {m['err']:.2f}{extra}  [{m['question']}]")
    for key in ("centre", "reach"):
        c = Counter(m[key].split(" (")[0] for m in misses if m[key])
        print(f"{key} misses by class: " + ", ".join(f"{k} {v}" for k, v in c.most_common()))


def cross_kind(tour: Path, mem_dir: Path) -> dict[str, int]:
    """Wrong merges across kinds: nodes whose matched sightings come from ground-truth objects of
    more than one class (world.json labels), and the sightings in them that are not of the node's
    main class (the node's most-matched class); plus ground-truth objects and the nodes holding
    their sightings (fragmentation)."""
    import json
    from collections import Counter

    from vlkng_ros.eval.metrics import node_track_counts

    kind = {o["gt_track"]: o["label"] for o in json.loads((tour / "world.json").read_text())["objects"]}
    with Memory.open(mem_dir, config(True)) as mem:
        per_node = node_track_counts(mem, tour)
    out = {"nodes": 0, "mixed": 0, "sightings": 0, "cross": 0, "objects": 0, "object_nodes": 0}
    nodes_of: Counter = Counter()
    for tracks in per_node.values():
        kinds = Counter()
        for t, k in tracks.items():
            kinds[kind.get(t, t)] += k
            nodes_of[t] += 1
        out["nodes"] += 1
        out["sightings"] += sum(kinds.values())
        out["mixed"] += len(kinds) > 1
        out["cross"] += sum(kinds.values()) - kinds.most_common(1)[0][1]
    out["objects"], out["object_nodes"] = len(nodes_of), sum(nodes_of.values())
    return out


def depth_share(mem_dir: Path) -> tuple[int, int]:
    from vlkng_ros.core.geometry import RayAccumulator

    with Memory.open(mem_dir, config(True)) as mem:
        objs = list(mem.graph.iter_objects())
        return sum(1 for o in objs if o.ray_stats and RayAccumulator(o.ray_stats).has_depth), len(objs)


def node_views(mem: Memory, node, boxes_at: dict, depths, cams: dict, cfg: VlkngConfig):
    """(observation, keyframe, its depth, camera, the other boxes in that image) for each of
    ``node``'s sightings whose keyframe has a pose and stored depth; ``cams`` caches the tours'
    camera models."""
    import json

    from vlkng_ros.core.model import CameraModel

    for ob in node.observations:
        kf = mem.graph.get_keyframe(ob.tour_id, ob.stamp_ns)
        d = depths.get(ob.tour_id, ob.stamp_ns) if kf is not None and kf.pose is not None else None
        if d is None:
            continue
        if ob.tour_id not in cams:
            raw = mem.graph.get_meta(f"camera:{ob.tour_id}")
            cams[ob.tour_id] = CameraModel(**json.loads(raw)) if raw else CameraModel.from_hfov(
                kf.width, kf.height, cfg.capture.camera_hfov_deg)
        yield ob, kf, d, cams[ob.tour_id], [b for b in boxes_at[(ob.tour_id, ob.stamp_ns)] if b is not ob.bbox]


def per_object(tour: Path, mem_dir: Path, seed: int) -> list[dict]:
    """Per ground-truth object, what its main node's position error is made of: the error split
    along the mean view direction (+: placed beyond the true centre; depth bias) and across it
    (bearing), the depth fixes' own centre and the fused centre before the surface bound
    (``_hull_adjusted``), each view's fix re-measured from the stored depth (median error along
    its own ray and across it, share of views cut by the image border), and what the node holds
    (observations, nodes the object was split into, share of the node's observations that are
    other objects': a wrong merge)."""
    import json
    import math
    from collections import defaultdict

    import numpy as np

    from vlkng_ros.core import depth as dp
    from vlkng_ros.core.calibration import memory_camera_height
    from vlkng_ros.core.geometry import RayAccumulator, cut_by_border
    from vlkng_ros.core.model import CameraModel
    from vlkng_ros.eval.metrics import node_track_counts, position_errors

    cfg = config(True)
    world = json.loads((tour / "world.json").read_text())
    gt = {o["gt_track"]: o for o in world["objects"]}
    pitch = math.radians(cfg.capture.camera_pitch_deg)
    rows = []
    with Memory.open(mem_dir, cfg) as mem:
        nodes = {n.id: n for n in mem.graph.iter_objects()}
        per_node = node_track_counts(mem, tour)
        boxes_at: dict[tuple[str, int], list] = defaultdict(list)
        for n in nodes.values():
            for ob in n.observations:
                boxes_at[(ob.tour_id, ob.stamp_ns)].append(ob.bbox)
        height = memory_camera_height(mem, cfg)
        depths = dp.KeyframeDepths(mem.frames)
        noise = dp.DepthNoise()
        cams: dict[str, CameraModel] = {}
        for main in position_errors(mem, tour):  # each object's main node (most of its sightings)
            track, node_id, node = main["track"], main["node"], nodes[main["node"]]
            o, n_main = gt[track], round(main["main_share"] * main["n_obs"])
            if not node.ray_stats:
                continue
            true = np.array(o["xy"], dtype=float)
            acc = RayAccumulator(node.ray_stats)
            fwd = acc.forward_d / max(float(np.linalg.norm(acc.forward_d)), 1e-9)
            side = np.array([-fwd[1], fwd[0]])
            e = np.array(node.position) - true
            row = {"seed": seed, "track": track, "label": o["label"], "size": o["size_m"][:2],
                   "big": max(o["size_m"][:2]) >= 1.0, "err": float(np.linalg.norm(e)),
                   "along": float(e @ fwd), "across": float(e @ side), "obs": n_main,
                   "nodes": main["nodes"], "other": 1.0 - per_node[node_id][track] / max(sum(per_node[node_id].values()), 1),
                   "fixes": int(acc.depth_n), "hull_n": int(acc.hull_n), "closed": 0, "one_end": 0,
                   "width": (acc.footprint() or (0.0, 0.0))[0],
                   "true_along": float(abs(fwd[0]) * o["size_m"][0] + abs(fwd[1]) * o["size_m"][1])}
            if acc.has_depth:
                c = np.linalg.solve(acc.depth_info + 1e-12 * np.eye(2), acc.depth_rhs)
                row["err_fixes"] = float(np.linalg.norm(c - true))
                bare = RayAccumulator(node.ray_stats)
                bare.hull_n = 0
                est = bare.solve(height)
                row["err_fused"] = float(np.linalg.norm(np.array(est[0]) - true)) if est else float("nan")
                hull = acc.hull_bounds()
                if hull is not None:
                    row["closed"], row["one_end"] = int(hull[2].sum()), int((hull[3] != 0).sum())
            view_along, view_across, cut = [], [], 0
            for ob, kf, d, cam, others in node_views(mem, node, boxes_at, depths, cams, cfg):
                fix = dp.object_depth(d, ob.bbox, cam, noise, height or depths.camera_height(ob.tour_id, ob.stamp_ns, cam),
                                      others)
                if fix is None:
                    continue
                xy, _ = fix.in_map(kf.pose, pitch)
                ray = true - np.array([kf.pose.x, kf.pose.y])
                ray /= max(float(np.linalg.norm(ray)), 1e-9)
                fe = np.array(xy) - true
                view_along.append(float(fe @ ray))
                view_across.append(float(fe @ np.array([-ray[1], ray[0]])))
                cut += cut_by_border(ob.bbox, cam)
            if view_along:
                row["view_along"] = float(np.median(view_along))
                row["view_across"] = float(np.median(np.abs(view_across)))
                row["cut"] = cut / len(view_along)
            rows.append(row)
    return rows


UNION_VARIANTS = ("stored", "fused", "remeasured", "pooled", "denoised", "faces", "free")


def union_views(mem: Memory, node, boxes_at: dict, depths, cams: dict, cfg: VlkngConfig,
                height: float | None) -> list[dict]:
    """Each sighting of ``node`` re-read from its keyframe's depth: the object's surface points in
    the map plane (``depth.object_points``: the readings its fix is measured from), whether the
    box is cut, the line of sight's yaw, the depth noise there, and where free space was seen
    beyond it in its box (the start of each ray's part below the object's top that reached a
    reading farther than the object: nothing of the object stands on it)."""
    import math

    import numpy as np

    from vlkng_ros.core import depth as dp

    noise, pitch, out = dp.DepthNoise(), math.radians(cfg.capture.camera_pitch_deg), []
    for ob, kf, d, cam, others in node_views(mem, node, boxes_at, depths, cams, cfg):
        h = height or depths.camera_height(ob.tour_id, ob.stamp_ns, cam) or 1.0
        pts = dp.object_points(d, ob.bbox, cam, noise, h, others)
        fix = dp.object_depth(d, ob.bbox, cam, noise, h, others)
        if pts is None or fix is None:
            continue
        up = lambda q: h - (q[:, 1] * math.cos(pitch) + q[:, 2] * math.sin(pitch))  # noqa: E731 (height above the floor)
        top = float(np.percentile(up(pts), 95))
        # readings in the box beyond the object (not another box's): the background
        sh, sw = d.shape[:2]
        sx, sy = sw / cam.width, sh / cam.height
        rows, cols = np.mgrid[int(ob.bbox[1] * sy):int(math.ceil(ob.bbox[3] * sy)):2,
                              int(ob.bbox[0] * sx):int(math.ceil(ob.bbox[2] * sx)):2]
        z = d[rows, cols].astype(float)
        u, v = (cols + 0.5) / sx, (rows + 0.5) / sy
        with np.errstate(invalid="ignore"):
            bg = np.isfinite(z) & (z > float(pts[:, 2].max()) + dp.JUMP_M + 3.0 * float(noise.sigma(pts[:, 2].max())))
        for b in others:
            bg &= ~((u >= b[0]) & (u <= b[2]) & (v >= b[1]) & (v <= b[3]))
        q = np.stack([(u[bg] - cam.cx) / cam.fx * z[bg], (v[bg] - cam.cy) / cam.fy * z[bg], z[bg]], axis=1)
        below = up(q) < top
        share = np.where(h > top, (h - top) / np.maximum(h - up(q)[below], 1e-6), 0.0)
        c = np.array([kf.pose.x, kf.pose.y])
        free = c + share[:, None] * (dp.optical_to_map(q[below], kf.pose, pitch) - c)
        yaw = kf.pose.yaw - math.atan2(float(np.median(pts[:, 0])), float(np.median(pts[:, 2])))
        out.append({"xy": dp.optical_to_map(pts, kf.pose, pitch), "cut": fix.cut, "yaw": yaw, "free": free,
                    "sigma": float(noise.sigma(float(np.median(pts[:, 2])))),
                    "sighting": (ob.tour_id, ob.stamp_ns, kf.pose, ob.bbox, cam, others)})
    return out


def union_estimates(node, views: list[dict], depths, height: float | None, pitch: float) -> dict[str, tuple]:
    """``node``'s position, several ways (UNION_VARIANTS): stored; fused (the fixes and bearings
    without the surface bound); remeasured (all its sightings' fixes measured again together, one
    outlier test over all of them: what a re-solve at the end of a build would write); and with
    the surface bound (``RayAccumulator._hull_adjusted``) on the union of the re-read views'
    points: pooled (the 2-98th percentiles of all their points together, not each view's joined
    by min / max), denoised (each view's extent shrunk by twice its depth noise along its line of
    sight), faces (a face seen by uncut views at the mean of their own extents' ends there), free
    (the stored position, its far side along an axis seen from one end capped by the free space
    seen beyond the object: the centre at most midway from the seen face to it)."""
    import math

    import numpy as np

    from vlkng_ros.core import depth as dp
    from vlkng_ros.core.geometry import HULL_DIRS, HULL_PERCENTILE, RayAccumulator

    out = {"stored": node.position}
    bare = RayAccumulator(node.ray_stats)
    bare.hull_n = 0
    out["fused"] = (bare.solve(height) or (node.position,))[0]
    again = RayAccumulator(RayAccumulator(node.ray_stats).to_list()[: RayAccumulator.FORWARD_SIZE])
    dp.add_depth_fixes(again, depths, [v["sighting"] for v in views], dp.DepthNoise(), pitch, height)
    out["remeasured"] = (again.solve(height) or (node.position,))[0] if again.has_depth else node.position
    if not views:
        return out | {k: node.position for k in UNION_VARIANTS if k not in out}
    ext = []  # per view: (lo, hi) along the hull axes, whether it saw the low / high faces
    for v in views:
        proj = v["xy"] @ HULL_DIRS.T
        look = HULL_DIRS @ np.array([math.cos(v["yaw"]), math.sin(v["yaw"])])
        ext.append((np.percentile(proj, HULL_PERCENTILE, axis=0), np.percentile(proj, 100.0 - HULL_PERCENTILE, axis=0),
                    (look > 0.5) & (not v["cut"]), (look < -0.5) & (not v["cut"]), np.abs(look) * v["sigma"]))
    lo, hi, seen_lo, seen_hi, noise = (np.array(x) for x in zip(*ext))

    def bounded(hull_lo, hull_hi):
        acc = RayAccumulator(node.ray_stats)
        acc.hull_lo, acc.hull_hi = np.asarray(hull_lo, dtype=float), np.asarray(hull_hi, dtype=float)
        return (acc.solve(height) or (node.position,))[0]

    pooled = np.concatenate([v["xy"] for v in views]) @ HULL_DIRS.T
    out["pooled"] = bounded(np.percentile(pooled, HULL_PERCENTILE, axis=0),
                            np.percentile(pooled, 100.0 - HULL_PERCENTILE, axis=0))
    mid = 0.5 * (lo + hi)
    out["denoised"] = bounded(np.minimum(lo + 2.0 * noise, mid).min(axis=0), np.maximum(hi - 2.0 * noise, mid).max(axis=0))
    faces_lo = np.array([lo[seen_lo[:, i], i].mean() if seen_lo[:, i].any() else lo[:, i].min() for i in range(len(HULL_DIRS))])
    faces_hi = np.array([hi[seen_hi[:, i], i].mean() if seen_hi[:, i].any() else hi[:, i].max() for i in range(len(HULL_DIRS))])
    out["faces"] = bounded(faces_lo, faces_hi)
    x = np.array(node.position, dtype=float)
    acc = RayAccumulator(node.ray_stats)
    hull, free = acc.hull_bounds(), np.concatenate([v["free"] for v in views])
    if hull is not None and len(free) and (acc.footprint() or (0.0,))[0] >= 0.45:
        for i, (u, s) in enumerate(zip(hull[0], hull[3])):
            j = (i + len(HULL_DIRS) // 2) % len(HULL_DIRS)  # the perpendicular axis
            across = free @ HULL_DIRS[j]
            t = s * (free @ u)
            face, far = (acc.hull_lo[i], acc.hull_hi[i]) if s > 0 else (-acc.hull_hi[i], -acc.hull_lo[i])
            behind = (across > acc.hull_lo[j] + 0.05) & (across < acc.hull_hi[j] - 0.05) & (t > far)
            if s and behind.any() and s * float(u @ x) > 0.5 * (face + float(t[behind].min())):
                x = x + (0.5 * (face + float(t[behind].min())) - s * float(u @ x)) * s * u
    out["free"] = (float(x[0]), float(x[1]))
    return out


def union_rows(tour: Path, mem_dir: Path, seed: int) -> list[dict]:
    """Per big ground-truth object's main node with depth: the error (m) of each of
    ``union_estimates``."""
    import json
    import math
    from collections import defaultdict

    import numpy as np

    from vlkng_ros.core import depth as dp
    from vlkng_ros.core.calibration import memory_camera_height
    from vlkng_ros.core.geometry import RayAccumulator
    from vlkng_ros.eval.metrics import position_errors

    cfg = config(True)
    gt = {o["gt_track"]: o for o in json.loads((tour / "world.json").read_text())["objects"]}
    rows = []
    with Memory.open(mem_dir, cfg) as mem:
        nodes = {n.id: n for n in mem.graph.iter_objects()}
        boxes_at: dict[tuple[str, int], list] = defaultdict(list)
        for n in nodes.values():
            for ob in n.observations:
                boxes_at[(ob.tour_id, ob.stamp_ns)].append(ob.bbox)
        height, depths, cams = memory_camera_height(mem, cfg), dp.KeyframeDepths(mem.frames), {}
        for main in position_errors(mem, tour):
            o, node = gt[main["track"]], nodes[main["node"]]
            if max(o["size_m"][:2]) < 1.0 or not node.ray_stats or not RayAccumulator(node.ray_stats).has_depth:
                continue
            views = union_views(mem, node, boxes_at, depths, cams, cfg, height)
            est = union_estimates(node, views, depths, height, math.radians(cfg.capture.camera_pitch_deg))
            true = np.array(o["xy"], dtype=float)
            rows.append({"seed": seed, "label": o["label"], "size": o["size_m"][:2], "views": len(views),
                         "cut": sum(v["cut"] for v in views)}
                        | {k: float(np.linalg.norm(np.array(xy) - true)) for k, xy in est.items()})
    return rows


def print_union(rows: list[dict]) -> None:
    import numpy as np

    print("\nbig objects' position from the union of their views' points (error m; ``union_estimates``):")
    print("variant     median   p90  mean | better / worse than stored by > 0.05 m")
    for k in UNION_VARIANTS:
        e = np.array([r[k] for r in rows])
        if e.size:
            better = sum(r[k] < r["stored"] - 0.05 for r in rows)
            worse = sum(r[k] > r["stored"] + 0.05 for r in rows)
            print(f"{k:10s} {np.median(e):6.2f} {np.percentile(e, 90):5.2f} {e.mean():5.2f} | {better} / {worse}")
    for r in sorted(rows, key=lambda r: -r["stored"]):
        print(f"  {r['seed']:4d} {r['label'][:14]:14s} {r['size'][0]:.1f}x{r['size'][1]:.1f} views {r['views']:2d} "
              f"cut {r['cut']:2d} | " + " ".join(f"{k} {r[k]:.2f}" for k in UNION_VARIANTS))


PER_OBJECT_HEADER = ("seed label              size (m)  obs nd other fix cut  hull cl 1e width | err   along across "
                     "| fixes fused | view along across | true along")


def per_object_line(r: dict) -> str:
    nan = float("nan")
    return (f"{r['seed']:4d} {r['label'][:18]:18s} {r['size'][0]:4.1f}x{r['size'][1]:3.1f} {r['obs']:4d} {r['nodes']:2d} "
            f"{r['other']:5.2f} {r['fixes']:3d} {r.get('cut', nan):4.2f} {r['hull_n']:4d} {r['closed']:2d} "
            f"{r['one_end']:2d} {r['width']:5.2f} | {r['err']:5.2f} {r['along']:+5.2f} {r['across']:+6.2f} "
            f"| {r.get('err_fixes', nan):5.2f} {r.get('err_fused', nan):5.2f} | {r.get('view_along', nan):+10.2f} "
            f"{r.get('view_across', nan):6.2f} | {r['true_along']:10.2f}")


def costs(tour: Path, workdir: Path) -> dict[str, float]:
    """Per keyframe: capture-thread time with and without depth (ingest_frame, same frames, the
    selector decides alike), writer-thread time, and the box estimate at merge."""
    from vlkng_ros.core import depth as dp
    from vlkng_ros.core.capture import PoseBuffer
    from vlkng_ros.core.pipeline import MemoryBuilder
    from vlkng_ros.core.tour import Tour

    t = Tour.open(tour)
    frames = list(t.frames())
    poses = PoseBuffer(0.3)
    for s, p in t.poses():
        poses.add(s, p)
    cam = t.camera_model(90.0)
    out: dict[str, float] = {}
    for depth in (False, True):
        mem_dir = workdir / f"cost-{'depth' if depth else 'plain'}"
        shutil.rmtree(mem_dir, ignore_errors=True)
        cfg = config(depth)
        with Memory.open(mem_dir, cfg) as mem:
            builder = MemoryBuilder(mem, cfg, None, cam, block_on_depth=True)
            spent, kept = 0.0, 0
            for f in frames:
                t0 = time.perf_counter()
                kf = builder.ingest_frame(t.tour_id, f.stamp_ns, f.rgb, poses.lookup(f.stamp_ns), f.frame_id,
                                          depth=f.depth if depth else None)
                if kf is not None:
                    spent += time.perf_counter() - t0
                    kept += 1
                    # untimed: let the writer finish this keyframe's depth before the next one, as
                    # on a robot (keyframes >= 0.2 s apart, ~25 ms of writing each); replayed
                    # flat out, its 64-frame queue fills and the capture thread would time the wait
                    builder.depth_writer.flush()
            builder.depth_writer.flush()
            out[f"capture_ms_{'depth' if depth else 'plain'}"] = 1e3 * spent / max(kept, 1)
            out["keyframes"] = kept
            if depth:
                out["writer_ms"] = 1e3 * builder.depth_writer.seconds / max(builder.depth_writer.written, 1)
                # the box estimate at merge, on the stored (half-size) depth
                depths = dp.KeyframeDepths(mem.frames)
                boxes = 0
                t0 = time.perf_counter()
                for kf in mem.graph.keyframes(t.tour_id):
                    d = depths.get(t.tour_id, kf.stamp_ns)
                    for o in t.annotations.get(kf.stamp_ns, {}).get("objects", []):
                        dp.object_depth(d, o["bbox"], cam)
                        boxes += 1
                out["box_ms"] = 1e3 * (time.perf_counter() - t0) / max(boxes, 1)
                # what merging adds per box: the fix into an object's sums and its surface points'
                # extent (geometry.RayAccumulator.add_points), the depth already decoded above
                from vlkng_ros.core.geometry import RayAccumulator

                t0 = time.perf_counter()
                for kf in mem.graph.keyframes(t.tour_id):
                    for o in t.annotations.get(kf.stamp_ns, {}).get("objects", []):
                        if kf.pose is not None:
                            dp.add_depth_fix(RayAccumulator(), depths, t.tour_id, kf.stamp_ns, kf.pose, o["bbox"], cam,
                                             dp.DepthNoise())
                out["fix_ms"] = 1e3 * (time.perf_counter() - t0) / max(boxes, 1)
                out["boxes_per_keyframe"] = boxes / max(kept, 1)
        shutil.rmtree(mem_dir, ignore_errors=True)
    out["capture_added_ms"] = out["capture_ms_depth"] - out["capture_ms_plain"]
    return out


def main() -> int:
    from vlkng_ros.eval.sim import generate_tour

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[21, 22, 23])
    ap.add_argument("--minutes", type=float, default=1.5)
    ap.add_argument("--workdir", default="bench-out/depth")
    ap.add_argument("--rebuild", action="store_true", help="delete and rebuild the memories")
    ap.add_argument("--varied", action="store_true", help="generalisation worlds (vlkng sim --varied)")
    ap.add_argument("--camera-height", type=float, default=None, metavar="M",
                    help="tours from a camera this high (m; default: the simulator's 1.0 m)")
    ap.add_argument("--hfov", type=float, default=None, metavar="DEG",
                    help="tours from a camera with this horizontal field of view (default: the simulator's 90)")
    ap.add_argument("--depth-noise", type=float, default=None, metavar="X",
                    help="tours whose depth noise is X times the model the pipeline assumes (the config is not told)")
    ap.add_argument("--pose-error", type=float, default=None, metavar="X",
                    help="tours whose /pose error (SLAM drift and jitter) is X times the simulator's default")
    ap.add_argument("--depth-only", action="store_true", help="build and score only the memories with depth")
    ap.add_argument("--no-cost", action="store_true", help="skip the per-keyframe cost measurement")
    ap.add_argument("--per-object", action="store_true",
                    help="also print each big object's error broken down (depth memories), worst first")
    ap.add_argument("--misses", action="store_true", help="list each goal miss with depth and its class")
    ap.add_argument("--union", action="store_true",
                    help="also print each big object's position from the union of its views' points, several ways")
    ap.add_argument("--goal-max-from-object", type=float, default=None,
                    help="ask.goal_max_from_object_m (default: the config's; inf: the nearest clear goal however far)")
    args = ap.parse_args()
    global GOAL_MAX_FROM_OBJECT_M
    GOAL_MAX_FROM_OBJECT_M = args.goal_max_from_object
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    rows = {True: [], False: []}
    goal_errs = {True: [], False: []}
    ask_times: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    placed = [0, 0]
    kinds: dict[bool, dict[str, int]] = {True: {}, False: {}}
    breakdown: list[dict] = []
    union: list[dict] = []
    misses: list[dict] | None = [] if args.misses else None
    rig_args = {k: v for k, v in (("camera_height_m", args.camera_height), ("hfov_deg", args.hfov),
                                  ("depth_noise", args.depth_noise), ("pose_error", args.pose_error)) if v is not None}
    rig = "".join(f"-{tag}{v:g}" for tag, v in (("height", args.camera_height), ("hfov", args.hfov),
                                                 ("noise", args.depth_noise), ("pose", args.pose_error))
                  if v is not None)
    for seed in args.seeds:
        tour = workdir / f"tour-{seed}-{args.minutes:g}min-depth{'-varied' if args.varied else ''}{rig}"
        if not (tour / "world.json").is_file():
            shutil.rmtree(tour, ignore_errors=True)
            generate_tour(tour, minutes=args.minutes, seed=seed, log_progress=False, depth=True, varied=args.varied,
                          **rig_args)
        for depth in (True,) if args.depth_only else (True, False):
            mem_dir = workdir / f"{tour.name}.{'depth' if depth else 'nodepth'}.memory"
            secs = build(tour, mem_dir, depth, args.rebuild)
            r = node_errors(tour, mem_dir, False)
            rows[depth] += r
            goal_errs[depth] += goals(tour, mem_dir, depth, misses if depth else None, ask_times[depth])
            if depth and args.per_object:
                breakdown += per_object(tour, mem_dir, seed)
            if depth and args.union:
                union += union_rows(tour, mem_dir, seed)
            if depth:
                n, total = depth_share(mem_dir)
                placed[0] += n
                placed[1] += total
            ck = cross_kind(tour, mem_dir)
            kinds[depth] = {k: kinds[depth].get(k, 0) + v for k, v in ck.items()}
            print(f"seed {seed} {'with' if depth else 'without'} depth: {ck['mixed']} of {ck['nodes']} nodes mix "
                  f"kinds, {ck['cross']} of {ck['sightings']} sightings in another kind's node", flush=True)
            print(f"seed {seed} {'with' if depth else 'without'} depth: built/loaded in {secs:.0f} s, "
                  f"big median {summary([x for x in r if x['big']]).get('median', float('nan')):.2f} m", flush=True)
    print()
    print(HEADER)
    for depth in (True,) if args.depth_only else (True, False):
        tag = "depth" if depth else "no depth"
        print(line(f"big {tag}"[:11], summary([x for x in rows[depth] if x["big"]])))
        print(line(f"small {tag}"[:11], summary([x for x in rows[depth] if not x["big"]])))
    print()
    for depth in (True,) if args.depth_only else (True, False):
        g = [e for e, _ in goal_errs[depth]]
        ok = sum(e <= 1.5 for e in g) / len(g) if g else float("nan")
        reach = sum(r for _, r in goal_errs[depth]) / len(g) if g else float("nan")
        finite = [e for e in g if e != float("inf")]
        print(f"goals {'with' if depth else 'without'} depth: success (<= 1.5 m of centre) {ok:.3f}, "
              f"goal_reach {reach:.3f} of {len(g)} questions, "
              f"median goal error {statistics.median(finite) if finite else float('nan'):.2f} m")
        t = ask_times[depth]
        if t.get("ask"):
            print(f"ask time {'with' if depth else 'without'} depth: median {statistics.median(t['ask']):.0f} ms per "
                  f"question, of which the goal step {statistics.median(t['goal']):.0f} ms (p90 "
                  f"{statistics.quantiles(t['goal'], n=10)[-1] if len(t['goal']) > 1 else t['goal'][0]:.0f} ms)")
    print(f"objects placed with depth: {placed[0]} of {placed[1]}")
    for depth, k in kinds.items():
        if k:
            print(f"cross-kind merges {'with' if depth else 'without'} depth: {k['mixed']} of {k['nodes']} nodes mix "
                  f"ground-truth classes; {k['cross']} of {k['sightings']} sightings "
                  f"({k['cross'] / max(k['sightings'], 1):.1%}) sit in a node of another class; "
                  f"{k['object_nodes'] / max(k['objects'], 1):.2f} nodes per object")
    if args.per_object:
        print("\nbig objects with depth, worst first (along: + beyond the true centre along the mean view; fixes: "
              "the depth fixes' own centre, fused: before the surface bound; view: each fix's median error "
              "along its ray / across; other: share of the node's sightings that are other objects')")
        print(PER_OBJECT_HEADER)
        for r in sorted((r for r in breakdown if r["big"]), key=lambda r: -r["err"]):
            print(per_object_line(r))
    if args.union:
        print_union(union)
    if misses is not None:
        print_misses(misses)
    if not args.no_cost:
        tour = workdir / f"tour-{args.seeds[0]}-{args.minutes:g}min-depth{'-varied' if args.varied else ''}{rig}"
        c = costs(tour, workdir)
        print(f"\ncost per keyframe ({c['keyframes']} keyframes of seed {args.seeds[0]}, {c['boxes_per_keyframe']:.1f} "
              f"boxes each): capture thread {c['capture_ms_plain']:.2f} ms without depth, "
              f"{c['capture_ms_depth']:.2f} ms with (added {c['capture_added_ms']:+.2f} ms); "
              f"depth writer thread {c['writer_ms']:.1f} ms; box estimate at merge {c['box_ms']:.3f} ms per box, "
              f"{c['fix_ms']:.3f} ms with the fix and its surface points added to an object's sums")
    return 0


if __name__ == "__main__":
    sys.exit(main())
