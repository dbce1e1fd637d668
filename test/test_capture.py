"""Keyframe selection, pose tagging, chunking and triangulation (pure core)."""

import math

import cv2
import numpy as np
import pytest

from vlkng_ros.core.capture import KeyframeSelector, PoseBuffer
from vlkng_ros.core.images import decode_image, encode_jpeg
from vlkng_ros.core.chunking import Chunker, chunk_keyframes
from vlkng_ros.core.config import CaptureConfig
from vlkng_ros.core.geometry import (Ray, RayAccumulator, bottom_hidden, floor_range_factor, ray_for,
                                     triangulate)
from vlkng_ros.core.model import CameraModel, Keyframe, Pose
from helpers_views import floor_box, pitched_floor_point

NS = 1_000_000_000


def textured(seed: int, w: int = 320, h: int = 240) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.uint8)
    for _ in range(30):
        x, y = int(rng.integers(0, w - 20)), int(rng.integers(0, h - 20))
        color = tuple(int(c) for c in rng.integers(0, 255, 3))
        cv2.rectangle(img, (x, y), (x + int(rng.integers(10, 60)), y + int(rng.integers(10, 60))), color, -1)
    return img


def test_pose_buffer_interpolates_and_refuses_stale():
    buf = PoseBuffer(max_age_s=0.3)
    buf.add(10 * NS, Pose.from_xy_yaw(0.0, 0.0, 0.0))
    buf.add(int(10.25 * NS), Pose.from_xy_yaw(1.0, 0.0, math.pi / 2))
    mid = buf.lookup(int(10.125 * NS))
    assert mid is not None and mid.x == pytest.approx(0.5) and mid.yaw == pytest.approx(math.pi / 4)
    assert buf.lookup(int(10.5 * NS)).x == pytest.approx(1.0)  # nearest, 0.25 s old
    assert buf.lookup(11 * NS) is None  # 0.75 s from any pose: no pose, never a made-up one
    assert buf.lookup(9 * NS) is None


def test_pose_buffer_yaw_interpolation_takes_short_arc():
    buf = PoseBuffer(max_age_s=1.0)
    buf.add(0, Pose.from_xy_yaw(0, 0, math.radians(170)))
    buf.add(NS, Pose.from_xy_yaw(0, 0, math.radians(-170)))
    assert abs(math.degrees(buf.lookup(NS // 2).yaw)) == pytest.approx(180, abs=1e-6)


def test_selector_rejects_blur_and_redundant_frames_and_keeps_motion():
    cfg = CaptureConfig(min_interval_s=0.2, max_interval_s=100.0)
    sel = KeyframeSelector(cfg)
    sharp = textured(1)
    assert sel.consider(0, sharp, Pose.from_xy_yaw(0, 0, 0)).keep
    # same view, robot still: redundant
    d = sel.consider(NS, sharp, Pose.from_xy_yaw(0, 0, 0))
    assert not d.keep and d.reason == "redundant"
    # too soon after the last keyframe, whatever it shows
    assert sel.consider(NS // 10, textured(2), None).reason == "too soon"
    # motion makes it a keyframe, but a blurred frame is rejected first
    for i in range(6):  # establish the camera's typical sharpness
        sel.consider((2 + i) * NS, sharp, Pose.from_xy_yaw(0, 0, 0))
    blurred = cv2.GaussianBlur(textured(3), (31, 31), 12)
    assert sel.consider(9 * NS, blurred, Pose.from_xy_yaw(2, 0, 0)).reason == "blurred"
    kept = sel.consider(10 * NS, textured(3), Pose.from_xy_yaw(2, 0, 0))
    assert kept.keep and kept.reason == "moved"


def test_selector_keeps_new_view_without_pose_and_after_max_interval():
    sel = KeyframeSelector(CaptureConfig(min_interval_s=0.1, max_interval_s=3.0))
    assert sel.consider(0, textured(1), None).keep
    assert sel.consider(NS, textured(2), None).reason == "new view"
    assert not sel.consider(2 * NS, textured(2), None).keep
    assert sel.consider(5 * NS, textured(2), None).reason == "max interval"


def test_jpeg_roundtrip_and_corrupt_data():
    img = textured(4)
    back = decode_image(encode_jpeg(img, 95))
    assert back.shape == img.shape and np.abs(back.astype(int) - img).mean() < 6
    with pytest.raises(ValueError, match="corrupt"):
        decode_image(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(ValueError):
        decode_image(b"")


def kf(i: int, tour: str = "t") -> Keyframe:
    return Keyframe(tour, i * NS, i, 64, 48)


def test_chunker_full_partial_and_tour_switch():
    ch = Chunker(3)
    assert ch.add(kf(0)) is None and ch.add(kf(1)) is None
    assert [k.index for k in ch.add(kf(2))] == [0, 1, 2]
    ch.add(kf(3))
    assert [k.index for k in ch.add(kf(0, "other"))] == [3]  # a new tour closes the chunk
    assert [k.tour_id for k in ch.flush()] == ["other"]
    assert ch.flush() is None
    assert [len(c) for c in chunk_keyframes([kf(i) for i in range(8)], 3)] == [3, 3, 2]
    with pytest.raises(ValueError):
        Chunker(0)


def test_triangulation_recovers_a_point_from_bearings():
    cam = CameraModel.from_hfov(640, 480, 90.0)
    target = (3.0, 1.0)
    rays = []
    for x, y in [(0, 0), (0.8, -0.5), (1.5, -0.2)]:
        yaw = math.atan2(target[1] - y, target[0] - x) + 0.2  # target off-centre in the image
        bearing = math.atan2(target[1] - y, target[0] - x) - yaw
        u = cam.cx - cam.fx * math.tan(bearing)
        rays.append(ray_for(Pose.from_xy_yaw(x, y, yaw), (u - 10, 200, u + 10, 260), cam))
    (px, py), var = triangulate(rays)
    assert math.dist((px, py), target) < 0.15
    assert var < 0.3


def test_bearings_of_border_cut_boxes_vouch_for_less():
    """The same bearings from boxes cut by the image border (centres biased toward the image)
    give the same point but a larger variance: their agreement proves less."""
    cam = CameraModel.from_hfov(640, 480, 90.0)
    poses = [Pose.from_xy_yaw(0.5 * i, 0.0, 0.6 - 0.15 * i) for i in range(5)]
    target = (3.0, 2.0)

    def box(pose: Pose, cut: bool) -> tuple[float, float, float, float]:
        bearing = math.atan2(target[1] - pose.y, target[0] - pose.x) - pose.yaw
        u = cam.cx - cam.fx * math.tan(bearing)
        return (0.0 if cut else u - 20.0, 200.0, 2 * u if cut else u + 20.0, 260.0)

    (p_whole, v_whole) = triangulate([ray_for(p, box(p, False), cam) for p in poses])
    (p_cut, v_cut) = triangulate([ray_for(p, box(p, True), cam) for p in poses])
    assert math.dist(p_whole, p_cut) < 0.15  # same bearings, about the same point (the range prior weighs more)
    assert v_cut > 3.0 * v_whole


def test_triangulation_single_view_uses_range_prior():
    (px, py), var = triangulate([Ray((0.0, 0.0), 0.0)])
    assert px == pytest.approx(2.5, abs=0.01) and py == pytest.approx(0.0, abs=1e-6)
    assert var > 0.3  # one view: uncertain
    assert triangulate([]) is None


CAM = CameraModel.from_hfov(640, 480, 90.0)


def test_floor_contact_gives_the_range_along_the_ray():
    pose = Pose.from_xy_yaw(0.0, 0.0, 0.0)
    assert floor_range_factor(floor_box(CAM, pose, (4.0, 0.0), 1.0), CAM) == pytest.approx(4.0, rel=1e-6)
    # off-axis: the ray is longer than the forward depth
    assert floor_range_factor(floor_box(CAM, pose, (4.0, 2.0), 1.0), CAM) == pytest.approx(math.hypot(4.0, 2.0), rel=1e-6)
    # no range when the bottom is cut by the image, or at / near the horizon (things on a shelf at eye height)
    assert floor_range_factor((300.0, 300.0, 340.0, 480.0), CAM) == 0.0
    assert floor_range_factor((300.0, 200.0, 340.0, 245.0), CAM) == 0.0
    assert floor_range_factor((300.0, 100.0, 340.0, 200.0), CAM) == 0.0


def test_a_box_resting_on_or_hidden_by_a_lower_box_has_no_floor_contact():
    table = (100.0, 280.0, 400.0, 380.0)
    mug = (200.0, 250.0, 230.0, 282.0)  # stands on the table: its bottom edge is inside the table's box
    chair_behind = (150.0, 200.0, 260.0, 280.0)  # its legs are hidden by the table in front
    lamp_beside = (450.0, 150.0, 500.0, 300.0)
    assert bottom_hidden(mug, [table, mug, lamp_beside])
    assert bottom_hidden(chair_behind, [table, chair_behind])
    assert not bottom_hidden(table, [table, mug, chair_behind])  # things on it do not hide its bottom
    assert not bottom_hidden(lamp_beside, [table, mug, lamp_beside])


def test_floor_contact_ranges_an_object_seen_from_one_spot():
    """The robot turns on the spot: all bearings start at one point and carry no range, so the
    least-squares point sits at the range prior, metres short of a sofa 6 m away. The floor
    contact of its boxes puts it there."""
    target = (6.0, 1.0)
    poses = [Pose.from_xy_yaw(0.0, 0.0, yaw) for yaw in (-0.3, -0.1, 0.1, 0.3, 0.5)]
    rays = [ray_for(p, floor_box(CAM, p, target, 1.2), CAM, on_floor=True) for p in poses]
    (bx, by), bearing_var = triangulate(rays)  # no camera height: bearings only
    assert math.dist((bx, by), target) > 2.5
    (fx, fy), floor_var = triangulate(rays, camera_height=1.2)
    assert math.dist((fx, fy), target) < 0.25
    assert floor_var < bearing_var
    # the same rays without the floor cue (a mug on a table) stay where bearings put them
    assert triangulate([ray_for(p, floor_box(CAM, p, target, 1.2), CAM) for p in poses], camera_height=1.2)[0] == \
        pytest.approx((bx, by))


def test_rays_from_one_spot_do_not_place_an_object_where_the_camera_stands():
    """The robot turns on the spot in front of a wide sofa; the boxes (cut by the image borders)
    point at different parts of it, so the bearings spread over 120 degrees and all cross at the
    camera. That crossing is no position: the estimate is the prior's guess along the bearings,
    with the loosest variance (a later, better placed support must not be pulled onto it). With
    the robot walking past instead, the bearings do place it. Sums from before this check (20
    values) skip it."""
    turning = RayAccumulator()
    for deg in range(100, 221, 15):
        turning.add(Ray((4.0, -3.5), math.radians(deg), weight=0.15))
    (x, y), var = turning.solve()
    assert math.dist((x, y), (4.0, -3.5)) > 1.0 and var == 2.0
    old = RayAccumulator(turning.to_list()[:20])
    assert math.dist(old.solve()[0], (4.0, -3.5)) < 0.3  # what it used to say
    walking = RayAccumulator()
    for i in range(5):
        walking.add(Ray((1.0 * i, 0.0), math.atan2(2.0, 3.0 - 1.0 * i)))
    (x, y), var = walking.solve()
    assert math.dist((x, y), (3.0, 2.0)) < 0.05 and var < 0.5


def test_implied_camera_height_and_older_accumulators():
    """Well-spread views fix the point without the floor; there the floor rays imply the
    camera height they were seen with. An accumulator stored before floor ranging (10 values)
    still loads and solves as before."""
    target = (3.0, 2.0)
    poses = [Pose.from_xy_yaw(1.0 * i, 0.0, math.atan2(2.0, 3.0 - 1.0 * i)) for i in range(5)]
    acc = RayAccumulator()
    for p in poses:
        acc.add(ray_for(p, floor_box(CAM, p, target, 0.8), CAM, on_floor=True))
    (x, y), _ = acc.solve()
    assert math.dist((x, y), target) < 0.05 and acc.bearing_conditioning() > 0.1
    assert acc.implied_camera_height((x, y)) == pytest.approx(0.8, rel=0.03)
    old = RayAccumulator(acc.to_list()[:10])
    assert not old.has_floor and old.implied_camera_height((x, y)) is None
    assert old.solve(0.8)[0] == pytest.approx(acc.solve()[0])
    # without depth fixes the sums keep their 24-value form (a memory without depth is unchanged)
    assert len(acc.to_list()) == RayAccumulator.FORWARD_SIZE and RayAccumulator(acc.to_list()).to_list() == acc.to_list()


def test_a_camera_looking_down_ranges_the_floor_with_its_pitch():
    """A camera 0.4 m up looking down 12 degrees (a small robot's): the bottom of an object 3 m
    ahead and 1 m to the left is far below the principal point. Taken as level, the range comes
    out about half; with the pitch it is right."""
    pitch = math.radians(12.0)
    u, v = pitched_floor_point(CAM, 3.0, 1.0, 0.4, pitch)
    box = (u - 30.0, v - 60.0, u + 30.0, v)
    assert 0.4 * floor_range_factor(box, CAM, pitch) == pytest.approx(math.hypot(3.0, 1.0), rel=1e-6)
    assert 0.4 * floor_range_factor(box, CAM) < 0.6 * math.hypot(3.0, 1.0)
    # above the horizon of a camera looking UP (negative pitch) the same pixel is no floor at all
    assert floor_range_factor((u - 30.0, 200.0, u + 30.0, 250.0), CAM, math.radians(-5.0)) == 0.0
