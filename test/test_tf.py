"""Poses from TF: the transform buffer, the camera pose convention, and bags with /tf + /tf_static."""

from __future__ import annotations

import math
import shutil

import pytest

from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.pipeline import build_tour, tour_pose_lookup
from vlkng_ros.core.tf import (TransformBuffer, TransformUnavailable, camera_pose, is_optical_frame, pitch_down,
                               q_from_rpy, q_rotate)
from vlkng_ros.core.tour import Tour

OPTICAL = (-0.5, 0.5, -0.5, 0.5)  # camera_link -> camera_optical_frame (REP 103)
S = 1_000_000_000


def robot_tree(pitch_deg: float = 0.0) -> TransformBuffer:
    """map -> odom (static here) -> base_link (driving +x at 1 m/s, turning to +90 deg at t=2 s)
    -> camera_link (0.3 m forward, 0.1 m left, 1.2 m up, pitched down) -> camera_optical_frame."""
    buf = TransformBuffer(max_gap_s=None)
    buf.set_transform("map", "odom", 0, (1.0, 2.0, 0.0), q_from_rpy(0, 0, math.pi / 2), static=True)
    buf.set_transform("odom", "base_link", 0, (0.0, 0.0, 0.0), q_from_rpy(0, 0, 0.0))
    buf.set_transform("odom", "base_link", 2 * S, (2.0, 0.0, 0.0), q_from_rpy(0, 0, math.pi / 2))
    buf.set_transform("base_link", "camera_link", 0, (0.3, 0.1, 1.2), q_from_rpy(0, math.radians(pitch_deg), 0),
                      static=True)
    buf.set_transform("camera_link", "camera_optical_frame", 0, (0, 0, 0), OPTICAL, static=True)
    return buf


def test_optical_rotation_is_rep103():
    # the optical frame looks along camera_link's +x, its x axis points right (-y), its y down (-z)
    assert q_rotate(OPTICAL, (0, 0, 1)) == pytest.approx((1, 0, 0), abs=1e-9)
    assert q_rotate(OPTICAL, (1, 0, 0)) == pytest.approx((0, -1, 0), abs=1e-9)
    assert q_rotate(OPTICAL, (0, 1, 0)) == pytest.approx((0, 0, -1), abs=1e-9)
    assert is_optical_frame("camera_color_optical_frame") and not is_optical_frame("camera_link")


def test_chain_with_static_mount_gives_the_camera_pose_and_heading():
    buf = robot_tree()
    pose = camera_pose(buf.lookup("map", "camera_optical_frame", 0), "camera_optical_frame")
    # base at odom origin = map (1, 2) facing map +y; the camera 0.3 ahead (+y), 0.1 left (-x), 1.2 up
    assert (pose.x, pose.y, pose.z) == pytest.approx((0.9, 2.3, 1.2), abs=1e-9)
    assert pose.yaw == pytest.approx(math.pi / 2, abs=1e-9)
    # the same pose through camera_link (a body-axes frame) directly
    body = camera_pose(buf.lookup("map", "camera_link", 0), "camera_link")
    assert (body.x, body.y, body.yaw) == pytest.approx((pose.x, pose.y, pose.yaw), abs=1e-9)


def test_interpolates_between_samples_and_never_extrapolates():
    buf = robot_tree()
    mid = camera_pose(buf.lookup("map", "camera_optical_frame", S), "camera_optical_frame")
    # half way: base 1 m along odom x (map +y), turned 45 deg (slerp)
    yaw = math.pi / 2 + math.pi / 4
    ex = 1.0 + 0.0 + 0.3 * math.cos(yaw) - 0.1 * math.sin(yaw)
    ey = 2.0 + 1.0 + 0.3 * math.sin(yaw) + 0.1 * math.cos(yaw)
    assert (mid.x, mid.y, mid.yaw) == pytest.approx((ex, ey, yaw), abs=1e-9)
    with pytest.raises(TransformUnavailable, match=r"odom -> base_link .*\(would extrapolate 1.000 s\)"):
        buf.lookup("map", "camera_optical_frame", 3 * S)
    with pytest.raises(TransformUnavailable, match="not connected"):
        buf.lookup("map", "laser", S)
    assert not buf.can_transform("map", "camera_optical_frame", -S)


def test_inverse_lookup_and_pitched_mount():
    buf = robot_tree(pitch_deg=15.0)
    fwd = buf.lookup("map", "camera_link", 0)
    back = buf.lookup("camera_link", "map", 0)
    both = fwd * back
    assert both.t == pytest.approx((0, 0, 0), abs=1e-9)
    pose = camera_pose(buf.lookup("map", "camera_optical_frame", 0), "camera_optical_frame")
    assert math.degrees(pitch_down(pose)) == pytest.approx(15.0, abs=1e-6)
    assert pose.yaw == pytest.approx(math.pi / 2, abs=1e-9)  # pitch does not change the heading


def test_no_interpolation_across_a_gap_in_the_data():
    buf = TransformBuffer(max_gap_s=1.0)
    buf.set_transform("odom", "base_link", 0, (0, 0, 0), (0, 0, 0, 1))
    buf.set_transform("odom", "base_link", S // 2, (0.5, 0, 0), (0, 0, 0, 1))
    buf.set_transform("odom", "base_link", 5 * S, (5.0, 0, 0), (0, 0, 0, 1))  # 4.5 s of odometry lost
    assert buf.lookup("odom", "base_link", S // 4).t == pytest.approx((0.25, 0, 0))
    with pytest.raises(TransformUnavailable, match="gap of 4.50 s"):
        buf.lookup("odom", "base_link", 2 * S)


def test_stamps_jumping_back_clear_the_history():
    buf = robot_tree()
    buf.set_transform("odom", "base_link", 100 * S, (5.0, 0.0, 0.0), (0, 0, 0, 1))  # bag restarted ...
    buf.set_transform("odom", "base_link", 10 * S, (0.0, 0.0, 0.0), (0, 0, 0, 1))  # ... from earlier
    with pytest.raises(TransformUnavailable):
        buf.lookup("odom", "base_link", 50 * S)
    with pytest.raises(ValueError, match="not finite"):
        buf.set_transform("odom", "base_link", 11 * S, (math.nan, 0, 0), (0, 0, 0, 1))


@pytest.fixture(scope="module")
def offset_tour(tmp_path_factory):
    """A short generated tour whose camera is mounted 0.3 m forward, 0.1 m left of base_link."""
    from vlkng_ros.eval.sim import generate_tour

    out = tmp_path_factory.mktemp("tf") / "offset"
    generate_tour(out, minutes=0.4, seed=8, camera_offset=(0.3, 0.1), log_progress=False)
    return out


def test_bag_tf_gives_the_true_camera_position_pose_gives_the_robots(offset_tour):
    from vlkng_ros.eval.sim.generate import true_camera_xy

    tour = Tour.open(offset_tour)
    frames = [(f.stamp_ns, f.frame_id) for f in tour.frames()]
    assert {fid for _, fid in frames} == {"camera_optical_frame"}
    cfg = VlkngConfig()
    assert cfg.capture.pose_source == "auto"
    source, lookup = tour_pose_lookup(tour, cfg)
    assert source == "tf"
    truth = true_camera_xy(offset_tour, [s for s, _ in frames])
    tf_err = [math.dist((p.x, p.y), xy) for (s, f), xy in zip(frames, truth) if (p := lookup(s, f))]
    assert len(tf_err) >= 0.95 * len(frames)
    cfg.capture.pose_source = "pose"
    _, by_pose = tour_pose_lookup(tour, cfg)
    pose_err = [math.dist((p.x, p.y), xy) for (s, f), xy in zip(frames, truth) if (p := by_pose(s, f))]
    tf_med, pose_med = sorted(tf_err)[len(tf_err) // 2], sorted(pose_err)[len(pose_err) // 2]
    print(f"\ncamera position error, median: TF {tf_med:.3f} m, /pose {pose_med:.3f} m (mount 0.32 m)")
    assert tf_med < 0.05  # SLAM's error only: the mounting comes from /tf_static
    assert 0.25 < pose_med < 0.4  # /pose is the robot's centre: off by the mounting
    p = lookup(*frames[len(frames) // 2])
    assert p.z == pytest.approx(1.0, abs=1e-6) and abs(pitch_down(p)) < 1e-6


def test_pose_source_choices_and_clear_errors(offset_tour, tmp_path):
    cfg = VlkngConfig()
    tour = Tour.open(offset_tour)
    cfg.capture.pose_source = "odom"
    assert tour_pose_lookup(tour, cfg)[0] == "odom"
    cfg.capture.pose_source = "gps"
    with pytest.raises(ValueError, match="pose_source 'gps'"):
        tour_pose_lookup(tour, cfg)
    cfg.capture.pose_source = "tf"
    cfg.capture.map_frame = "world"
    with pytest.raises(ValueError, match="do not connect 'world' to the image frame 'camera_optical_frame'"):
        tour_pose_lookup(tour, cfg)
    # auto without the map frame in the tree falls back to /pose
    cfg.capture.pose_source = "auto"
    assert tour_pose_lookup(tour, cfg)[0] == "pose"


def test_tf_built_memory_places_objects_as_well_as_pose(sim_home, built_home, tmp_path):
    """The shared memory (default config: auto -> TF) against the same tour built from /pose:
    keyframes keep the image's frame id, and object positions are as good (the simulated camera
    sits over base_link here, so both see the same SLAM error)."""
    from vlkng_ros.eval.metrics import position_errors

    cfg = VlkngConfig()
    with Memory.open(built_home, cfg) as mem:
        kfs = mem.graph.keyframes()
        assert kfs and all(k.frame_id == "camera_optical_frame" for k in kfs)
        assert all(k.pose is not None and k.pose.z == pytest.approx(1.0) for k in kfs)  # camera height from TF
        tf_rows = position_errors(mem, sim_home)
    cfg.capture.pose_source = "pose"
    mem_dir = tmp_path / "pose-mem"
    with Memory.open(mem_dir, cfg) as mem:
        build_tour(sim_home, mem, cfg, progress=False)
        pose_rows = position_errors(mem, sim_home)
    med = lambda rows: sorted(r["err"] for r in rows)[len(rows) // 2]  # noqa: E731
    print(f"\nobject position error, median: TF {med(tf_rows):.3f} m ({len(tf_rows)} objects), "
          f"/pose {med(pose_rows):.3f} m ({len(pose_rows)})")
    assert len(tf_rows) >= 0.9 * len(pose_rows)
    assert med(tf_rows) <= med(pose_rows) + 0.05
    shutil.rmtree(mem_dir, ignore_errors=True)
