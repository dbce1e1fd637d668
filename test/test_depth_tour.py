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


def test_build_stores_depth_and_no_depth_builds_as_before(tmp_path, tours):
    cfg = VlkngConfig()
    with Memory.open(tmp_path / "with", cfg) as mem:
        report = build_tour(tours["depth"], mem, cfg, progress=False)
        kfs = mem.graph.keyframes("home")
        assert report.keyframes_with_depth == report.keyframes == len(kfs) > 5
        stored = [decode_depth_png(mem.frames.get_depth("home", kf.stamp_ns)) for kf in kfs]
        assert all(d.shape == (240, 320) for d in stored)  # store_scale 2
        assert all(np.isfinite(d).mean() > 0.6 for d in stored)
    # depth switched off on the depth tour = the tour without depth, byte for byte
    off = VlkngConfig()
    off.depth.enabled = False
    with Memory.open(tmp_path / "off", off) as mem:
        report = build_tour(tours["depth"], mem, off, progress=False)
        assert report.keyframes_with_depth == 0
        assert not any(mem.frames.has_depth("home", kf.stamp_ns) for kf in mem.graph.keyframes("home"))
    with Memory.open(tmp_path / "plain", cfg) as mem:
        build_tour(tours["plain"], mem, cfg, progress=False)
    plain = _export(tmp_path / "plain", cfg)
    assert plain["objects"]
    assert json.dumps(_export(tmp_path / "off", off), sort_keys=True) == json.dumps(plain, sort_keys=True)
