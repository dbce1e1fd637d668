"""Depth in tours (tour-format v2): the simulator's aligned depth, matched to colour frames by
stamp, stored with keyframes, used to place objects; a tour without depth builds exactly as before."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vlkng_ros.core import depth as dp
from vlkng_ros.core.capture import PoseBuffer
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.images import decode_depth_png
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.pipeline import build_tour
from vlkng_ros.core.tour import Tour
from vlkng_ros.eval.sim import generate_tour

MINUTES = 0.3


def _cfg(depth: bool = True) -> VlkngConfig:
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"  # fast; the depth comparisons hold the embedder fixed
    cfg.depth.enabled = depth
    return cfg


@pytest.fixture(scope="module")
def tours(tmp_path_factory) -> dict[str, Path]:
    """The same walk (seed 3) generated with and without depth, both folders named 'home'."""
    root = tmp_path_factory.mktemp("depth-tours")
    out = {}
    for kind in ("depth", "plain"):
        out[kind] = root / kind / "home"
        generate_tour(out[kind], minutes=MINUTES, seed=3, log_progress=False, depth=kind == "depth")
    return out


def test_depth_changes_nothing_else_in_the_tour(tours):
    for name in ("annotations.jsonl", "questions.json", "world.json"):
        assert (tours["depth"] / name).read_bytes() == (tours["plain"] / name).read_bytes(), name
    a, b = Tour.open(tours["depth"]), Tour.open(tours["plain"])
    assert a.has_depth and not b.has_depth
    assert a.depth_topic == "/camera/aligned_depth_to_color/image_raw"
    fa, fb = list(a.frames()), list(b.frames())
    assert [f.stamp_ns for f in fa] == [f.stamp_ns for f in fb]
    assert all((x.rgb == y.rgb).all() for x, y in zip(fa[:5], fb[:5]))
    assert all(f.depth is None for f in fb)


def test_frames_get_their_depth_and_it_places_objects(tours):
    tour = Tour.open(tours["depth"])
    cam = tour.camera_model(90.0)
    poses = PoseBuffer(0.3)
    for s, p in tour.poses():
        poses.add(s, p)
    world = {o["gt_track"]: o for o in tour.world["objects"]}
    frames = list(tour.frames())
    assert all(f.depth is not None for f in frames)  # every frame has depth within 3 ms
    errors = []
    for f in frames[::6]:
        d = f.depth()
        assert d.shape == (480, 640) and d.dtype == np.float32
        assert 0.005 < np.isnan(d).mean() < 0.3  # dropouts, but mostly readings
        pose = poses.lookup(f.stamp_ns)
        for o in tour.annotations[f.stamp_ns]["objects"]:
            fix = dp.object_depth(d, o["bbox"], cam)
            if pose is not None and fix is not None:
                errors.append(math.dist(fix.in_map(pose)[0], world[o["gt_track"]]["xy"]))
    assert len(errors) > 30
    assert np.median(errors) < 0.3  # one view each: the fused estimate is better still


def test_tour_with_a_depth_topic_that_never_matches(tmp_path, tours):
    """Depth stamped too far from the colour frames is no depth (never a made-up match)."""
    cfg = VlkngConfig().depth
    cfg.max_offset_ms = 0.001
    tour = Tour.open(tours["depth"], depth=cfg)
    assert tour.has_depth
    assert sum(f.depth is not None for f in tour.frames()) <= 3  # only an exact-stamp coincidence


def _export(mem_dir: Path, cfg: VlkngConfig) -> dict:
    from vlkng_ros.commands.export import export_json

    with Memory.open(mem_dir, cfg) as mem:
        return export_json(mem)


@pytest.fixture(scope="module")
def memories(tmp_path_factory, tours) -> dict[str, Path]:
    """The depth tour built with depth and with depth off, and the plain tour: once per module."""
    root = tmp_path_factory.mktemp("depth-memories")
    out = {}
    for name, tour, depth in (("with", "depth", True), ("off", "depth", False), ("plain", "plain", True)):
        out[name] = root / name
        cfg = _cfg(depth)
        with Memory.open(out[name], cfg) as mem:
            report = build_tour(tours[tour], mem, cfg, progress=False)
        out[name + "_report"] = report
    return out


def test_build_stores_depth_and_no_depth_builds_as_before(memories):
    cfg, off = _cfg(True), _cfg(False)
    report = memories["with_report"]
    with Memory.open(memories["with"], cfg) as mem:
        kfs = mem.graph.keyframes("home")
        assert report.keyframes_with_depth == report.keyframes == len(kfs) > 5
        stored = [decode_depth_png(mem.frames.get_depth("home", kf.stamp_ns)) for kf in kfs]
        assert all(d.shape == (240, 320) for d in stored)  # store_scale 2
        assert all(np.isfinite(d).mean() > 0.6 for d in stored)
    # depth switched off on the depth tour = the tour without depth, byte for byte
    assert memories["off_report"].keyframes_with_depth == 0
    with Memory.open(memories["off"], off) as mem:
        assert not any(mem.frames.has_depth("home", kf.stamp_ns) for kf in mem.graph.keyframes("home"))
    plain = _export(memories["plain"], cfg)
    assert plain["objects"]
    assert json.dumps(_export(memories["off"], off), sort_keys=True) == json.dumps(plain, sort_keys=True)


def _median_error(mem_dir: Path, tour_dir: Path, cfg: VlkngConfig) -> tuple[float, int, int]:
    """Median distance of each ground-truth object's main node from its true position, and how
    many nodes are depth-placed (of how many)."""
    from collections import Counter, defaultdict

    from vlkng_ros.core.geometry import RayAccumulator
    from vlkng_ros.eval.metrics import match_observations

    tour = Tour.open(tour_dir)
    truth = {o["gt_track"]: o["xy"] for o in tour.world["objects"]}
    with Memory.open(mem_dir, cfg) as mem:
        nodes = {n.id: n for n in mem.graph.iter_objects()}
    per_gt: dict[str, Counter] = defaultdict(Counter)
    for node_id, track in match_observations(nodes.values(), {tour.tour_id: tour.annotations}):
        per_gt[track][node_id] += 1
    errors = [math.dist(nodes[c.most_common(1)[0][0]].position, truth[t])
              for t, c in per_gt.items() if nodes[c.most_common(1)[0][0]].position is not None]
    placed = sum(1 for n in nodes.values() if n.ray_stats and RayAccumulator(n.ray_stats).has_depth)
    return float(np.median(errors)), placed, len(nodes)


def test_depth_places_objects_better_and_stats_say_which(memories, tours):
    from vlkng_ros.core.stats import memory_stats

    cfg, off = _cfg(True), _cfg(False)
    with_err, placed, total = _median_error(memories["with"], tours["depth"], cfg)
    off_err, off_placed, _ = _median_error(memories["off"], tours["depth"], off)
    assert off_placed == 0 and placed >= 0.8 * total
    assert with_err < 0.6 * off_err, (with_err, off_err)
    with Memory.open(memories["with"], cfg) as mem:
        stats = memory_stats(mem)
    assert stats["depth_placed_objects"] == placed and len(stats["depth_placed"]) == placed
    assert stats["keyframes_with_depth"] == stats["keyframes"]
    assert all(o["footprint_m"] is None or o["footprint_m"][0] > 0 for o in stats["depth_placed"])


def test_depth_arriving_after_the_objects_were_placed_re_solves_them(tmp_path, tours):
    """Live: keyframes stored and their first chunks merged before any depth arrived (a depth
    driver started late); once depth is attached, the next merges re-solve those objects."""
    from vlkng_ros.core.capture import PoseBuffer
    from vlkng_ros.core.chunking import chunk_keyframes
    from vlkng_ros.core.geometry import RayAccumulator
    from vlkng_ros.core.perception.registry import make_perceiver
    from vlkng_ros.core.pipeline import MemoryBuilder

    cfg = _cfg(True)
    tour = Tour.open(tours["depth"])
    with Memory.open(tmp_path / "live", cfg) as mem:
        builder = MemoryBuilder(mem, cfg, make_perceiver(cfg, annotations=tour.annotations),
                                tour.camera_model(90.0), block_on_depth=True)
        poses = PoseBuffer(cfg.capture.pose_max_age_s)
        for s, p in tour.poses():
            poses.add(s, p)
        frames = {f.stamp_ns: f for f in tour.frames()}
        for f in frames.values():
            builder.ingest_frame("home", f.stamp_ns, f.rgb, poses.lookup(f.stamp_ns))  # no depth yet
        chunks = chunk_keyframes(mem.graph.keyframes("home"), cfg.chunk_size)
        assert len(chunks) >= 3
        builder.merge(builder.perceive("home", chunks[0]))
        first = {n.id for n in mem.graph.iter_objects()}
        assert first and not any(RayAccumulator(n.ray_stats).has_depth for n in mem.graph.iter_objects())
        for kf in mem.graph.keyframes("home"):  # the depth driver comes up
            assert builder.attach_depth("home", kf.stamp_ns, frames[kf.stamp_ns].depth)
        builder.depth_writer.flush()
        for kfs in chunks[1:]:
            builder.merge(builder.perceive("home", kfs))
        now = {n.id: n for n in mem.graph.iter_objects()}
        resolved = [now[i] for i in first if i in now and RayAccumulator(now[i].ray_stats).has_depth]
        assert len(resolved) >= 0.8 * len([i for i in first if i in now])


def _goals(mem_dir: Path, tour_dir: Path, cfg: VlkngConfig) -> list[tuple]:
    """(question (dict), goal (x, y, yaw), target position, target node's stored sums) for the tour's
    goal questions."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.types import AskRequest
    from vlkng_ros.eval.runner import load_questions

    out = []
    with Memory.open(mem_dir, cfg) as mem:
        engine = AskEngine(mem, cfg)
        for q in (q for q in load_questions(tour_dir) if q.get("goal_xy")):
            res = engine.ask(AskRequest(q["question"], [], 5, cfg.ask.mode))
            node = next(iter(mem.graph.get_objects([res.target_object_id])), None) if res.target_object_id else None
            goal = (round(res.goal.x, 6), round(res.goal.y, 6), round(res.goal.yaw, 6)) if res.goal else None
            out.append((q, goal, res.target_position, node.ray_stats if node else None))
    return out


def test_goals_stand_outside_the_true_footprint_and_no_depth_goals_are_unchanged(memories, tours):
    """Depth-measured targets: the robot's disc at the goal stays off the object's TRUE footprint
    (world.json), or the goal is a camera pose (the robot stood there). (It used to be checked
    against half the measured footprint's diagonal, the old over-conservative stand-off; the goal
    now stands robot radius + clearance off the near side measured along the line of sight.)"""
    from vlkng_ros.core.geometry import object_footprint
    from vlkng_ros.eval.retrieval_metrics import ROBOT_RADIUS_M, _to_box

    world = {o["gt_track"]: o for o in json.loads((tours["depth"] / "world.json").read_text())["objects"]
             if "size_m" in o}
    with_depth = _goals(memories["with"], tours["depth"], _cfg(True))
    measured = [(q, g, xy) for q, g, xy, s in with_depth if g and xy and s and object_footprint(s)]
    assert len(measured) >= 2
    with Memory.open(memories["with"], _cfg(True)) as mem:
        cameras = [(kf.pose.x, kf.pose.y) for kf in mem.graph.keyframes("home") if kf.pose]
    checked = 0
    for q, goal, centre in measured:
        target = next((world[t] for t in q.get("targets") or [] if t in world), None)
        if target is None or math.dist(centre, target["xy"]) > 1.0:  # another object answered
            continue
        checked += 1
        clear = _to_box(goal[:2], target) >= ROBOT_RADIUS_M - 0.05  # depth noise
        assert clear or min(math.dist(goal[:2], c) for c in cameras) < 1e-3, (q["question"], goal, target)
    assert checked >= 2
    # a tour without depth: the depth-enabled code path answers exactly what depth switched off does
    plain_on = _goals(memories["plain"], tours["plain"], _cfg(True))
    plain_off = _goals(memories["plain"], tours["plain"], _cfg(False))
    assert any(g for _, g, _, _ in plain_on)
    assert [(q, g, xy) for q, g, xy, _ in plain_on] == [(q, g, xy) for q, g, xy, _ in plain_off]
