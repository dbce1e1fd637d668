"""Depth: an object's position and footprint from the depth inside its box, point clouds read
from their documented layout and projected with the camera model, and the fusion with bearings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlkng_ros.core import depth as dp
from vlkng_ros.core.geometry import RayAccumulator, ray_for
from vlkng_ros.core.model import CameraModel, Pose

CAM = CameraModel.from_hfov(640, 480, 90.0)  # fx = 320


def _scene(obj_z=2.0, obj_box=(260, 180, 380, 330), wall_z=5.0, noise=0.0, dropout=0.0, seed=0):
    """A wall at ``wall_z`` and a flat-fronted object at ``obj_z`` filling ``obj_box``."""
    rng = np.random.default_rng(seed)
    d = np.full((CAM.height, CAM.width), wall_z, dtype=np.float32)
    x1, y1, x2, y2 = obj_box
    d[y1:y2, x1:x2] = obj_z
    if noise:
        d += rng.normal(0.0, 1.0, d.shape).astype(np.float32) * dp.DepthNoise().sigma(d).astype(np.float32)
    if dropout:
        d[rng.random(d.shape) < dropout] = np.nan
    return d


def test_flat_object_in_front_of_a_wall():
    box = (260, 180, 380, 330)
    fix = dp.object_depth(_scene(noise=1.0, dropout=0.2), box, CAM)
    assert fix is not None
    assert fix.surface_m == pytest.approx(2.0, abs=0.03)
    width = 120 / CAM.fx * 2.0  # 0.75 m
    assert fix.width_m == pytest.approx(width, rel=0.15)
    # the centre lies behind the visible face; lateral offset of the box centre (+0 px here)
    assert 2.0 < fix.z_m < 2.0 + width
    assert abs(fix.x_m) < 0.05
    assert 0.0 < fix.var_z < 0.1 and 0.0 < fix.var_x < 0.05


def test_background_through_the_box_does_not_pull_the_range():
    """A chair: its box is mostly the wall behind it, seen between legs and back; the nearer
    surface (the chair) is the object even where it is the smaller share of the central region."""
    d = _scene(obj_z=5.0, obj_box=(0, 0, 1, 1))
    x1, y1, x2, y2 = 280, 200, 360, 320
    for x in range(x1, x2, 8):  # legs / slats 3 px wide every 8 columns: ~3/8 of the pixels
        d[y1:y2, x:x + 3] = 1.5
    d[y1:y1 + 12, x1:x2] = 1.5  # the seat edge
    fix = dp.object_depth(d, (x1, y1, x2, y2), CAM)
    assert fix is not None and fix.surface_m == pytest.approx(1.5, abs=0.05)


def test_another_detection_in_front_is_left_out_and_one_inside_is_kept():
    """A chair (its own box) in front of a counter: the counter's range is the counter's, not the
    chair's; a kettle inside the counter's box (every reading of it also the counter's) keeps its fix."""
    counter, chair = (160, 200, 480, 300), (260, 180, 380, 330)
    d = _scene(obj_z=4.0, obj_box=counter, wall_z=6.0, noise=1.0)
    d[180:330, 260:380] = 2.0  # the chair, nearer, over the counter's middle
    alone = dp.object_depth(d, counter, CAM)
    fix = dp.object_depth(d, counter, CAM, others=[chair])
    assert alone is not None and alone.surface_m < 2.2  # without the chair's box: the chair's range
    assert fix is not None and fix.surface_m == pytest.approx(4.0, abs=0.1)
    kettle = (300, 230, 340, 290)
    d[230:290, 300:340] = 3.9
    inside = dp.object_depth(d, kettle, CAM, others=[counter])
    assert inside is not None and inside.surface_m == pytest.approx(3.9, abs=0.1)


def test_a_box_seen_at_a_slant_is_centred_between_its_corners():
    """A 1.6 x 0.6 m box turned 40 degrees, seen from 3.5 m: two faces show; the centre is the
    midpoint of the outline's two ends (the hidden corner completes the parallelogram), deeper
    than the near corner plus half of what the readings span."""
    yaw, hx, hy, cz = math.radians(40.0), 0.8, 0.3, 3.5
    u = (np.arange(CAM.width) + 0.5 - CAM.cx) / CAM.fx  # x / z per column
    d = np.full((CAM.height, CAM.width), 8.0, dtype=np.float32)
    c, s = math.cos(yaw), math.sin(yaw)
    corners = [(cx * c - cy * s, cz + cx * s + cy * c) for cx, cy in ((hx, hy), (hx, -hy), (-hx, -hy), (-hx, hy))]
    cols = np.full(CAM.width, np.inf)
    for (ax, az), (bx, bz) in zip(corners, corners[1:] + corners[:1]):  # each edge: ray-segment hit depth
        den = (bx - ax) - u * (bz - az)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (u * az - ax) / den
            z = az + t * (bz - az)
        cols = np.where((t >= 0) & (t <= 1) & (z > 0), np.minimum(cols, z), cols)
    hit = np.isfinite(cols)
    x1, x2 = int(np.argmax(hit)), int(CAM.width - np.argmax(hit[::-1]))
    d[180:300, hit] = cols[hit]
    fix = dp.object_depth(d, (x1, 180, x2, 300), CAM)
    assert fix is not None
    assert fix.z_m == pytest.approx(cz, abs=0.12)
    assert fix.x_m == pytest.approx(0.0, abs=0.12)


def test_dropouts_edges_and_too_little_depth():
    box = (260, 180, 380, 330)
    assert dp.object_depth(np.full((480, 640), np.nan, np.float32), box, CAM) is None
    mostly_gone = _scene(dropout=0.97, seed=1)
    assert dp.object_depth(mostly_gone, box, CAM) is None
    # flying pixels (halfway between object and wall) are not the object
    d = _scene()
    d[180:330:3, 300:340:3] = 3.5
    fix = dp.object_depth(d, box, CAM)
    assert fix.surface_m == pytest.approx(2.0, abs=0.02)
    # readings outside the sensor's range count as none
    far = _scene(obj_z=30.0, wall_z=40.0)
    assert dp.object_depth(far, box, CAM) is None


def test_depth_stored_at_half_size_gives_the_same_fix():
    d = _scene(noise=1.0, seed=4)
    full = dp.object_depth(d, (100, 150, 220, 300), CAM)
    half = dp.object_depth(d[::2, ::2], (100, 150, 220, 300), CAM)
    assert half.surface_m == pytest.approx(full.surface_m, abs=0.03)
    assert half.x_m == pytest.approx(full.x_m, abs=0.05)


def test_noise_model_grows_with_range():
    n = dp.DepthNoise()
    assert n.sigma(1.0) < n.sigma(3.0) < n.sigma(6.0)
    assert 0.005 < n.sigma(2.0) < 0.05


def test_fix_in_map_and_fusion_with_bearings():
    """A camera at (1, 2) looking along +y sees an object 3 m ahead, 0.5 m to its right."""
    pose = Pose.from_xy_yaw(1.0, 2.0, math.pi / 2)
    fix = dp.DepthFix(x_m=0.5, z_m=3.0, surface_m=2.8, var_z=0.01, var_x=0.002, width_m=0.4,
                      extent_m=0.4, points=100)
    xy, cov = fix.in_map(pose)
    assert xy == pytest.approx((1.5, 5.0), abs=1e-9)
    assert cov[1, 1] == pytest.approx(0.01) and cov[0, 0] == pytest.approx(0.002)
    # one bearing + one depth fix: the position is the fix (bearings give no range)
    acc = RayAccumulator()
    u = CAM.cx + CAM.fx * 0.5 / 3.0
    acc.add(ray_for(pose, (u - 10, 200, u + 10, 260), CAM))
    assert acc.solve() is not None and acc.solve()[1] > 0.05  # bearing only: loose
    acc.add_depth(xy, cov, fix.width_m, fix.extent_m)
    (x, y), var = acc.solve()
    assert (x, y) == pytest.approx((1.5, 5.0), abs=0.02)
    assert var < 0.05
    assert acc.has_depth and acc.footprint() == pytest.approx((0.4, 0.4))
    # round trip through the stored list, and older 24-value lists read as no depth
    back = RayAccumulator(acc.to_list())
    assert back.solve()[0] == pytest.approx(acc.solve()[0]) and back.solve()[1] == pytest.approx(acc.solve()[1])
    assert not RayAccumulator(acc.to_list()[:24]).has_depth


def test_more_depth_evidence_helps():
    """Fixes from several viewpoints around an object at (4, 1): each biased along its own view
    by noise; together closer than the typical single fix, and the variance shrinks."""
    rng = np.random.default_rng(7)
    truth = np.array([4.0, 1.0])
    acc = RayAccumulator()
    errors, variances = [], []
    for k in range(8):
        ang = 2 * math.pi * k / 8
        cam = truth + 3.0 * np.array([math.cos(ang), math.sin(ang)])
        yaw = ang + math.pi
        pose = Pose.from_xy_yaw(float(cam[0]), float(cam[1]), yaw)
        fix = dp.DepthFix(x_m=float(rng.normal(0, 0.03)), z_m=3.0 + float(rng.normal(0, 0.12)), surface_m=2.8,
                          var_z=0.12 ** 2, var_x=0.03 ** 2, width_m=0.5, extent_m=0.5, points=50)
        xy, cov = fix.in_map(pose)
        errors.append(math.dist(xy, truth))
        acc.add(ray_for(pose, (310, 200, 330, 260), CAM))
        acc.add_depth(xy, cov, 0.5, 0.5)
        variances.append(acc.solve()[1])
    est, _ = acc.solve()
    assert math.dist(est, truth) < np.median(errors)
    assert variances[-1] < variances[0]


def _cloud_buffer(points: np.ndarray, big: bool, pad_point: int, pad_row: int, with_nan: bool):
    """A PointCloud2 buffer built from its definition: fields x, y, z (FLOAT32 = 7) at offsets
    0, 4, 8, an 'intensity' UINT16 (4) after them, points padded to point_step, rows to row_step."""
    width = len(points) // 2
    point_step = 14 + pad_point
    row_step = width * point_step + pad_row
    order = ">" if big else "<"
    buf = bytearray(row_step * 2)
    for i, p in enumerate(points):
        r, c = divmod(i, width)
        o = r * row_step + c * point_step
        buf[o:o + 12] = np.array(p, dtype=order + "f4").tobytes()
        buf[o + 12:o + 14] = np.array([i], dtype=order + "u2").tobytes()
    fields = [("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1), ("intensity", 12, 4, 1)]
    return fields, width, 2, point_step, row_step, bytes(buf)


@pytest.mark.parametrize("big", [False, True])
def test_point_cloud_layout(big):
    pts = np.array([[0.1, 0.2, 1.0], [np.nan, 0, 1], [-0.3, 0.1, 2.0], [0.0, 0.0, 3.0]], dtype=np.float32)
    fields, w, h, ps, rs, data = _cloud_buffer(pts, big, pad_point=2, pad_row=5, with_nan=True)
    out = dp.cloud_xyz(fields, w, h, ps, rs, data, is_bigendian=big)
    assert out.shape == (3, 3)
    assert out == pytest.approx(pts[[0, 2, 3]])
    with pytest.raises(ValueError, match="truncated"):
        dp.cloud_xyz(fields, w, h, ps, rs, data[:-20], is_bigendian=big)
    with pytest.raises(ValueError, match="no field 'z'"):
        dp.cloud_xyz(fields[:2], w, h, ps, rs, data)


def test_cloud_projected_into_a_depth_image_places_the_object():
    """A LiDAR mounted 0.2 m above the camera (its x forward, y left, z up) sees a 0.6 m wide
    object face 2.5 m ahead; moved into the optical frame and projected, the object's box gives
    its range from the sparse depth."""
    ys, zs = np.meshgrid(np.linspace(-0.3, 0.3, 40), np.linspace(-0.6, 0.0, 25))
    obj = np.column_stack([np.full(ys.size, 2.5), ys.ravel(), zs.ravel()])
    wall = np.column_stack([np.full(400, 6.0), np.linspace(-3, 3, 400), np.full(400, -0.4)])
    lidar = np.vstack([obj, wall])
    # lidar (x fwd, y left, z up) -> optical (x right, y down, z fwd), lidar origin 0.2 m above
    rot = np.array([[0, -1, 0], [0, 0, -1], [1, 0, 0]], dtype=float)
    cam_pts = dp.transform_points(lidar, rot, np.array([0.0, -0.2, 0.0]))
    d = dp.cloud_to_depth(cam_pts, CAM)
    assert np.isfinite(d).sum() > 200
    uv = CAM.project(cam_pts[: len(obj)])
    box = (uv[:, 0].min(), uv[:, 1].min(), uv[:, 0].max(), uv[:, 1].max())
    fix = dp.object_depth(d, box, CAM)
    assert fix is not None and fix.surface_m == pytest.approx(2.5, abs=0.03)
    assert fix.width_m == pytest.approx(0.6, abs=0.1)
    assert dp.quaternion_matrix(0, 0, math.sin(math.pi / 4), math.cos(math.pi / 4)) @ np.array([1, 0, 0]) == pytest.approx([0, 1, 0])


def test_camera_model_projects_and_back_projects():
    p = CAM.back_project([100.0, 500.0], [50.0, 400.0], [2.0, 3.0])
    assert CAM.project(p) == pytest.approx(np.array([[100.0, 50.0], [500.0, 400.0]]))
    assert np.isnan(CAM.project([[0.0, 0.0, -1.0]])).all()
    assert CameraModel.from_k(640, 480, [500, 0, 320, 0, 500, 240, 0, 0, 1]) == CameraModel(640, 480, 500, 500, 320, 240)
    assert CameraModel.from_k(0, 480, [500, 0, 320, 0, 500, 240, 0, 0, 1]) is None


class _Frames:
    """A frame store holding depth for some stamps (what KeyframeDepths reads)."""

    def __init__(self) -> None:
        self.depth: dict[tuple[str, int], bytes] = {}

    def get_depth(self, tour_id, stamp_ns):
        return self.depth.get((tour_id, stamp_ns))

    def has_depth(self, tour_id, stamp_ns):
        return (tour_id, stamp_ns) in self.depth


def test_position_re_solved_when_depth_arrives_later():
    """An object placed from bearings only (rays from one spot: no range) gets its depth fixes
    once its keyframes' depth is stored, and lands where the depth says."""
    from vlkng_ros.core.images import encode_depth_png

    frames = _Frames()
    depths = dp.KeyframeDepths(frames)
    box = (260, 180, 380, 330)
    sightings, acc = [], RayAccumulator()
    for k in range(3):  # the robot turns in place a little: bearings only, no range
        pose = Pose.from_xy_yaw(0.0, 0.0, 0.05 * k)
        acc.add(ray_for(pose, box, CAM))
        sightings.append(("t", k, pose, box, CAM))
    stats = acc.to_list()
    assert dp.redo_depth(stats, sightings, depths, dp.DepthNoise()) is None  # no depth yet: nothing to do
    for k in range(3):
        frames.depth[("t", k)] = encode_depth_png(_scene(obj_z=2.0)[::2, ::2])
    depths = dp.KeyframeDepths(frames)
    new = dp.redo_depth(stats, sightings, depths, dp.DepthNoise())
    assert new is not None and new.depth_n == 3 and new.n == acc.n  # bearings kept, depth added
    (x, y), var = new.solve()
    assert 2.0 < math.hypot(x, y) < 2.0 + 0.75 and var < 0.1
    # nothing more to add: a second pass changes nothing
    assert dp.redo_depth(new.to_list(), sightings, depths, dp.DepthNoise()) is None


def test_cloud_moved_into_the_camera_by_tf():
    """A LiDAR 0.3 m above and 0.1 m behind a camera_link (body frames, x forward): a point 2 m
    ahead of the LiDAR and 0.5 m to its left is 1.9 m ahead of the camera, 0.3 m above it and
    0.5 m left, i.e. in the optical frame (x right, y down, z forward) (-0.5, -0.3, 1.9), whether
    the image names camera_link (turned here) or its optical frame (turned by TF)."""
    from vlkng_ros.core.config import DepthConfig
    from vlkng_ros.core.tf import TransformBuffer

    tf = TransformBuffer(cache_s=None)
    tf.set_transform("base_link", "camera_link", 0, (0.2, 0.0, 1.0), (0, 0, 0, 1), static=True)
    tf.set_transform("base_link", "lidar", 0, (0.1, 0.0, 1.3), (0, 0, 0, 1), static=True)
    tf.set_transform("camera_link", "camera_optical_frame", 0, (0, 0, 0), (-0.5, 0.5, -0.5, 0.5), static=True)
    for frame in ("camera_link", "/camera_optical_frame"):
        rot, trans = dp.cloud_to_camera(DepthConfig(), frame, "/lidar", 10, tf.lookup)
        p = dp.transform_points(np.array([[2.0, 0.5, 0.0]]), rot, trans)[0]
        assert p == pytest.approx([-0.5, -0.3, 1.9], abs=1e-6), frame
        tr = tf.lookup(frame.lstrip("/"), "lidar", 10)  # the conversion alone, from the looked-up transform
        rot2, trans2 = dp.optical_from_transform(tr, frame)
        assert rot2 == pytest.approx(rot) and trans2 == pytest.approx(trans)
    with pytest.raises(ValueError, match="no transform from the cloud's frame to the camera: .*not connected"):
        dp.cloud_to_camera(DepthConfig(), "camera_link", "radar", 10, tf.lookup)


def test_cloud_placement_config_wins_then_tf_then_none():
    """The configured mount wins over TF (as a robot engineer set it); a cloud in the image's own
    frame, or with no TF at all, is taken as in the optical frame; a live lookup's ValueError is
    reported like the buffer's."""
    from vlkng_ros.core.config import DepthConfig
    from vlkng_ros.core.tf import Transform

    calls = []

    def lookup(target, source, stamp_ns):
        calls.append((target, source, stamp_ns))
        return Transform((0.0, 0.0, 0.5), (0.0, 0.0, 0.0, 1.0))

    mount = DepthConfig(cloud_frame_to_camera="0 0.1 0 0 0 0 1")
    rot, trans = dp.cloud_to_camera(mount, "cam_optical_frame", "lidar", 5, lookup)
    assert rot == pytest.approx(np.eye(3)) and trans == pytest.approx([0.0, 0.1, 0.0]) and not calls
    for cam, cloud, lk in (("cam_optical_frame", "/cam_optical_frame", lookup), ("cam_optical_frame", "lidar", None),
                           ("", "lidar", lookup), ("cam_optical_frame", "", lookup)):
        rot, trans = dp.cloud_to_camera(DepthConfig(), cam, cloud, 5, lk)
        assert rot == pytest.approx(np.eye(3)) and trans == pytest.approx([0.0, 0.0, 0.0]) and not calls
    rot, trans = dp.cloud_to_camera(DepthConfig(), "cam_optical_frame", "lidar", 5, lookup)
    assert calls == [("cam_optical_frame", "lidar", 5)] and trans == pytest.approx([0.0, 0.0, 0.5])

    def failing(target, source, stamp_ns):
        raise ValueError("ExtrapolationException: lookup would require extrapolation into the future")

    with pytest.raises(ValueError, match="^no transform from the cloud's frame to the camera: Extrapolation"):
        dp.cloud_to_camera(DepthConfig(), "cam_optical_frame", "lidar", 5, failing)


def test_camera_height_from_the_floor_in_the_depth_image():
    """A level camera 1.2 m above a floor sees, in each lower row v, the floor at depth
    fy * 1.2 / (v - cy); with a box standing in part of the view the floor still dominates."""
    rows = np.arange(CAM.height)[:, None] + 0.5
    with np.errstate(divide="ignore"):
        d = np.where(rows > CAM.cy, CAM.fy * 1.2 / (rows - CAM.cy), np.nan) * np.ones((1, CAM.width))
    d = d.astype(np.float32)
    d[300:480, 100:250] = 1.5  # a box in front
    d += np.random.default_rng(1).normal(0, 0.01, d.shape).astype(np.float32)
    assert dp.floor_height(d, CAM) == pytest.approx(1.2, abs=0.03)
    assert dp.floor_height(d[::2, ::2], CAM) == pytest.approx(1.2, abs=0.03)
    assert dp.floor_height(np.full((480, 640), 1.5, np.float32), CAM) is None  # a wall of furniture


def test_obstacle_points_keep_what_stands_above_the_floor_within_range():
    """A level camera 1 m up: the floor below it is no obstacle, a box 2 m ahead is, a wall 6 m
    away (beyond the reliable range) is left out."""
    rows = (np.arange(CAM.height) + 0.5 - CAM.cy) / CAM.fy  # metres below the axis per metre ahead
    d = np.full((CAM.height, CAM.width), 6.0, dtype=np.float32)
    with np.errstate(divide="ignore"):
        floor = np.where(rows > 0, 1.0 / rows, np.inf)
    d = np.minimum(d, floor[:, None].astype(np.float32))
    d[200:330, 280:360] = 2.0  # 0.5 m tall box ahead (rows 240..320 reach 1 m below the axis at 2 m)
    pts = dp.obstacle_points(d, CAM, camera_height_m=1.0)
    assert pts.size and np.all(pts[:, 2] <= 4.0)
    assert np.allclose(pts[:, 2], 2.0)  # only the box: the floor and the far wall are out
    assert np.all(1.0 - pts[:, 1] >= 0.08)


def test_bearings_from_an_arc_of_views_correct_depth_fixes_that_fall_short():
    """A long object seen from one side over a 120 degree arc: every depth fix falls 0.3 m short
    along its ray (its unseen depth guessed short), the bearings all pass through its centre.
    Where the bearings cross they take over (fusing all alike left it 0.21 m off)."""
    acc = RayAccumulator()
    for deg in np.linspace(-60.0, 60.0, 8):
        a = math.radians(90.0 + deg)  # looking north-ish at the origin from 3 m south
        pose = Pose.from_xy_yaw(-3.0 * math.cos(a), -3.0 * math.sin(a), a)
        acc.add(ray_for(pose, (310, 200, 330, 260), CAM))  # box centred: the bearing is the view axis
        d = np.array([math.cos(a), math.sin(a)])
        # across the view a 2 m wide object's fix is loose ((0.15 * width)^2), along it tighter
        cov = 0.03 * np.outer(d, d) + 0.09 * (np.eye(2) - np.outer(d, d))
        acc.add_depth(tuple(-0.3 * d), cov, 2.0, 0.9)
    fixes = np.linalg.solve(acc.depth_info, acc.depth_rhs)
    xy, _ = acc.solve()
    assert math.hypot(*fixes) == pytest.approx(0.3, abs=0.03)
    assert math.hypot(*xy) < 0.1


def _render_box(xy, yaw, centre, half, height, cam_h=1.0, wall=7.0):
    """Depth image (and the box around the object's pixels) of a level camera ``cam_h`` above
    the floor at ``xy`` looking along ``yaw``, at an axis-aligned block (``centre``, half sizes
    ``half``, ``height`` tall) on the floor, a wall ``wall`` m away elsewhere: ray cast per pixel."""
    u = (np.arange(CAM.width) + 0.5 - CAM.cx) / CAM.fx
    v = (np.arange(CAM.height) + 0.5 - CAM.cy) / CAM.fy
    ox, oy = np.meshgrid(u, v)
    fwd, right = np.array([math.cos(yaw), math.sin(yaw), 0.0]), np.array([math.sin(yaw), -math.cos(yaw), 0.0])
    d = ox[..., None] * right - oy[..., None] * np.array([0.0, 0.0, 1.0]) + fwd  # ray parameter = optical depth
    o = np.array([xy[0], xy[1], cam_h])
    lo = np.array([centre[0] - half[0], centre[1] - half[1], 0.0])
    hi = np.array([centre[0] + half[0], centre[1] + half[1], height])
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo - o) / d, (hi - o) / d
    near, far = np.nanmax(np.minimum(t1, t2), axis=-1), np.nanmin(np.maximum(t1, t2), axis=-1)
    with np.errstate(divide="ignore"):
        z = np.minimum(np.where(oy > 0, cam_h / oy, np.inf), wall)
    hit = (near <= far) & (far > 0) & (near < z)
    z = np.where(hit, near, z).astype(np.float32)
    rows, cols = np.nonzero(hit)
    return z, (float(cols.min()), float(rows.min()), float(cols.max() + 1), float(rows.max() + 1))


def _placed_from_views(yaws_deg, centre=(0.0, 0.0), half=(0.5, 1.0), height=1.2, hull=True):
    """Where bearings and depth fixes (rendered, half-size depth as stored) put a block seen from
    3 m away along each of ``yaws_deg``; ``hull=False``: without the measured surface's extent."""
    from vlkng_ros.core.images import encode_depth_png

    frames = _Frames()
    acc = RayAccumulator()
    for k, deg in enumerate(yaws_deg):
        a = math.radians(deg)
        xy = (centre[0] - 3.0 * math.cos(a), centre[1] - 3.0 * math.sin(a))
        z, box = _render_box(xy, a, centre, half, height)
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        pose = Pose.from_xy_yaw(xy[0], xy[1], a)
        acc.add(ray_for(pose, box, CAM))
        assert dp.add_depth_fix(acc, dp.KeyframeDepths(frames), "t", k, pose, box, CAM, dp.DepthNoise(), 0.0, 1.0)
    if not hull:
        acc = RayAccumulator(acc.to_list()[: RayAccumulator.DEPTH_SIZE])
    return acc.solve()[0]


def test_a_long_object_seen_from_one_end_is_centred_by_the_surface_measured_across_views():
    """A 1 x 2 m block, taller than the camera (no top seen), seen from its narrow end over a
    90 degree arc: each fix guesses its unseen depth from its width and falls short (0.4 m
    off when fused), but the side faces seen at a slant reach its far half; the object reaches at
    least that far, so its centre is at least the middle of the measured extent."""
    centre = (1.0, 2.0)
    xy = _placed_from_views(np.linspace(45.0, 135.0, 6), centre)
    assert math.dist(xy, centre) < 0.2
    old = _placed_from_views(np.linspace(45.0, 135.0, 6), centre, hull=False)
    assert math.dist(old, centre) > 0.3  # the fixes' shared guess (what fusing them gave)


def _sofa_driven_at(dists, height=0.85, cam_h=1.0):
    """Where bearings and depth fixes put a 0.9 x 2 m block ``height`` tall, centred at (1, 2),
    seen end-on by a camera ``cam_h`` high driving straight at it (``dists``: from its centre)."""
    from vlkng_ros.core.images import encode_depth_png

    centre, frames, acc = (1.0, 2.0), _Frames(), RayAccumulator()
    for k, dist in enumerate(dists):
        xy = (centre[0], centre[1] - dist)
        z, box = _render_box(xy, math.pi / 2, centre, (0.45, 1.0), height, cam_h=cam_h)
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        pose = Pose.from_xy_yaw(xy[0], xy[1], math.pi / 2)
        acc.add(ray_for(pose, box, CAM))
        assert dp.add_depth_fix(acc, dp.KeyframeDepths(frames), "t", k, pose, box, CAM, dp.DepthNoise(), 0.0, cam_h)
    return acc.solve()[0]


def test_a_sofa_seen_only_from_its_end_is_centred_by_its_top_receding():
    """A 0.9 x 2 m sofa 0.85 m tall, seen only end-on by a camera 1 m high driving at it (2.6-4 m
    from its centre): its sides never show, but the camera looks down on its top, which recedes
    row by row up the image to the far end. Its centre is placed within 0.45 m of the truth
    (0.36 m short: from 4 m, 0.15 m below the camera, a row spans too much of the top to follow it;
    one view 3 m off alone: 0.08 m), not near the seen end (0.69 m short before: the top's far
    readings thin out, and the depth interval grew over its first half metre)."""
    xy = _sofa_driven_at([4.0, 3.5, 3.0, 2.6])
    assert math.dist(xy, (1.0, 2.0)) < 0.45
    assert math.dist(_sofa_driven_at([3.0]), (1.0, 2.0)) < 0.15


def test_a_top_at_the_cameras_height_adds_nothing():
    """A block as tall as the camera shows no top: its far end is unseen, and the fix's depth
    stays the guess from its width (well short of a 2 m block's centre)."""
    xy = _sofa_driven_at([4.0, 3.5, 3.0, 2.6], height=1.0)
    assert xy[1] < 2.0 - 0.4


def test_a_long_object_seen_from_two_sides_is_centred_between_its_measured_faces():
    """Seen from the west and from the south: along the diagonal both views look at (its faces at
    either end seen), the centre is the middle of the surface's extent; the other axes keep it
    at least that far from the faces seen. Each fix alone guesses the depth it cannot see where
    the block stands above the camera (1 m); the lower one's top shows it (``_top_surface``)."""
    for half, height in (((0.5, 1.0), 1.2), ((1.0, 0.45), 0.8)):
        xy = _placed_from_views([0.0, 90.0], (0.0, 0.0), half, height)
        old = _placed_from_views([0.0, 90.0], (0.0, 0.0), half, height, hull=False)
        assert math.hypot(*xy) < 0.1
        assert (0.4 < math.hypot(*old)) if height > 1.0 else (math.hypot(*old) < 0.1)


def test_surface_extents_join_on_merge_and_a_memory_without_points_is_unchanged():
    a, b = RayAccumulator(), RayAccumulator()
    a.add_depth((0.5, 0.5), 0.05 * np.eye(2))
    b.add_depth((0.5, 2.5), 0.05 * np.eye(2))
    a.add_points(np.array([[0.0, 0.0], [1.0, 0.0]]), math.pi / 2)
    b.add_points(np.array([[0.5, 2.0], [0.5, 3.0]]), -math.pi / 2)
    m = RayAccumulator(a.merged(b).to_list())
    assert m.hull_n == 2 and m.hull_lo[0] == pytest.approx(0.02) and m.hull_hi[2] == pytest.approx(2.98)
    axes, mid, closed, side = m.hull_bounds()
    assert closed[2] and not closed[0] and side[2] == 0  # the y axis: both faces seen
    old = RayAccumulator()
    old.add_depth((1.0, 1.0), 0.05 * np.eye(2), 1.0, 0.5)
    assert len(old.to_list()) == RayAccumulator.SIZE
    assert RayAccumulator(old.to_list()[: RayAccumulator.DEPTH_SIZE]).solve() == old.solve()  # no points: as before


def test_an_object_seen_off_the_axis_is_measured_across_the_line_of_sight():
    """A 1 x 1 m block 3 m away, its face square to the line of sight, seen 33 degrees right of
    the optical axis (near the image's side): its width is the face's 1 m across the line of
    sight (its 5-95 % spread: 0.9 m; across the optical axis it was 0.75 m), and its centre lies
    behind the face along that line (0.43 m short before: at the face, seen as a slanted box)."""
    centre, half = (3.0, 0.0), (0.5, 0.5)
    z, box = _render_box((0.0, 0.0), math.radians(33.0), centre, half, 1.2)
    fix = dp.object_depth(z, box, CAM, camera_height_m=1.0)
    assert fix is not None and fix.width_m == pytest.approx(0.9, abs=0.06)
    assert fix.var_x < dp.CUT_VAR_M2  # the whole object: not cut by the image's side
    xy, cov = fix.in_map(Pose.from_xy_yaw(0.0, 0.0, math.radians(33.0)))
    assert math.dist(xy, centre) < 0.25
    # its covariance's axes lie along and across the line of sight (the map's x), not the camera's
    assert np.abs(np.linalg.eigh(cov)[1][0]).max() > 0.98


def test_a_box_stopping_short_of_the_image_side_is_cut_where_the_object_goes_on():
    """The detector's box of a sofa running off the image's left side stops 8 px short of it (box
    jitter): the sofa's depth goes on to the border, so the box is cut (loose fix, no width);
    the same box with a wall beside it at the image's edge is whole."""
    d = _scene(obj_z=2.0, obj_box=(0, 200, 200, 330), wall_z=5.0, noise=1.0)
    box = (8, 200, 200, 330)
    fix = dp.object_depth(d, box, CAM)
    assert fix is not None and fix.var_x > dp.CUT_VAR_M2 and fix.var_z > dp.CUT_VAR_M2 and fix.cut
    acc = RayAccumulator()
    frames = _Frames()
    from vlkng_ros.core.images import encode_depth_png

    frames.depth[("t", 0)] = encode_depth_png(d)
    assert dp.add_depth_fix(acc, dp.KeyframeDepths(frames), "t", 0, Pose.from_xy_yaw(0.0, 0.0, 0.0), box, CAM,
                            dp.DepthNoise())
    assert acc.footprint() is None and acc.hull_seen_lo.sum() + acc.hull_seen_hi.sum() == 0
    whole = dp.object_depth(_scene(obj_z=2.0, obj_box=(8, 200, 200, 330), wall_z=5.0, noise=1.0), box, CAM)
    assert whole is not None and whole.var_x < 0.05 and not whole.cut


def test_something_narrow_in_front_that_no_box_covers_is_not_the_object():
    """A post 0.12 m wide 1.5 m away, undetected, stands in front of a 2 m sofa 5 m away: its
    readings are the nearest cluster in the sofa's box but span a fifth of the box's angle; it is
    not the sofa, and no fix (a fix at 1.5 m, 3.5 m short and trusted most, pulled a sofa 1.4 m off)."""
    sofa = (256, 220, 384, 300)  # 2 m at 5 m: 128 px
    d = _scene(obj_z=5.0, obj_box=sofa, wall_z=7.0, noise=1.0)
    d[150:480, 307:333] = 1.5  # the post, 26 px wide, over the box's middle
    fix = dp.object_depth(d, sofa, CAM)
    assert fix is None or fix.surface_m > 4.5
    d[150:480, 290:350] = 1.5  # 60 px: the box's near half, a thing the box may well be of
    near = dp.object_depth(d, sofa, CAM)
    assert near is not None and near.surface_m == pytest.approx(1.5, abs=0.05)


def test_a_fix_that_disagrees_with_the_objects_other_fixes_is_left_out():
    """A 2 x 0.9 m sofa 5 m away seen from five spots; in one view an undetected post 1.5 m away
    covers a third of its box (wide enough to pass for the sofa's near side). That fix lies 3.5 m
    short and, near and narrow, is trusted most: with the others it pulled the sofa 1.35 m
    toward the camera; measured together, it is left out."""
    from vlkng_ros.core.images import encode_depth_png

    centre, half = (0.0, 5.0), (1.0, 0.45)
    frames, sightings = _Frames(), []
    for k, x in enumerate(np.linspace(-0.8, 0.8, 5)):
        yaw = math.atan2(centre[1], centre[0] - x)
        z, box = _render_box((x, 0.0), yaw, centre, half, 0.8)
        if k == 2:
            w = box[2] - box[0]
            z[:, int(box[0] + w / 3): int(box[0] + 2 * w / 3)] = 1.5
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        sightings.append(("t", k, Pose.from_xy_yaw(x, 0.0, yaw), box, CAM))
    acc = dp.redo_depth([], sightings, dp.KeyframeDepths(frames), dp.DepthNoise(), 0.0, 1.0)
    assert acc is not None and acc.depth_n == 4
    xy, _ = acc.solve()
    assert math.dist(xy, centre) < 0.2


def test_a_shallow_object_against_a_wall_seen_face_on_ends_at_the_wall():
    """A shelf 1.6 m wide and 0.4 m deep, its back against a wall, seen face on from 2.8 m: only
    its front shows, and the unseen depth guessed from its width (0.6 m behind the front) put
    its centre 0.34 m beyond the true one. The wall shows either side of it and above it at the
    depth of its back; the object ends there. With the wall far behind, the guess stands; with a
    thing behind one side only (a chair, not a wall), too."""
    rng = np.random.default_rng(3)
    for height in (0.9, 1.6):
        z, box = _render_box((-3.0, 0.0), 0.0, (0.0, 0.0), (0.2, 0.8), height, wall=3.2)
        z = (z + rng.normal(0.0, 1.0, z.shape) * dp.DepthNoise().sigma(z)).astype(np.float32)
        fix = dp.object_depth(z[::2, ::2], box, CAM, camera_height_m=1.0)
        assert fix is not None and fix.z_m == pytest.approx(3.0, abs=0.05)
        assert fix.extent_m < 0.6
    z, box = _render_box((-3.0, 0.0), 0.0, (0.0, 0.0), (0.2, 0.8), 0.9, wall=5.0)
    free = dp.object_depth(z, box, CAM, camera_height_m=1.0)
    assert free is not None and free.z_m > 3.25  # nothing behind it: the width's guess
    z[:, : int(box[0])] = 3.2  # behind its left side only: no wall
    one = dp.object_depth(z, box, CAM, camera_height_m=1.0)
    assert one is not None and one.z_m == pytest.approx(free.z_m, abs=1e-6)


def _placed_from_cut_views(views, centre, half, height, seed=5):
    """Where bearings and depth fixes (rendered, noisy, half-size depth as stored) put a block
    seen from each (x, y, yaw deg) of ``views``; also the sums."""
    from vlkng_ros.core.images import encode_depth_png

    rng = np.random.default_rng(seed)
    frames, acc = _Frames(), RayAccumulator()
    for k, (x, y, deg) in enumerate(views):
        a = math.radians(deg)
        z, box = _render_box((x, y), a, centre, half, height)
        z = (z + rng.normal(0.0, 1.0, z.shape) * dp.DepthNoise().sigma(z)).astype(np.float32)
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        pose = Pose.from_xy_yaw(x, y, a)
        acc.add(ray_for(pose, box, CAM))
        assert dp.add_depth_fix(acc, dp.KeyframeDepths(frames), "t", k, pose, box, CAM, dp.DepthNoise(), 0.0, 1.0)
    return acc.solve()[0], acc


def test_a_counter_wider_than_every_view_is_centred_between_the_ends_its_cut_views_saw():
    """A counter 3 m long and 0.8 m deep, seen from 1.2 m in front of it: no view holds all of it,
    every box runs off the image's side. Each view sees one end and the counter going on past
    the border: the middle of what it saw lies toward that end (three views near its south end
    and one near its north end put it 0.2 m south). The ends seen, across the line of sight,
    bound the measured extent: its centre is their middle. A view cut on both sides saw no end."""
    centre, half = (0.0, 0.0), (0.4, 1.5)
    views = [(-1.6, -1.5, 15.0), (-1.8, -1.4, 12.0), (-1.7, -1.6, 10.0), (-1.6, 1.5, -15.0)]
    xy, acc = _placed_from_cut_views(views, centre, half, 0.9)
    assert acc.footprint() is None  # no view saw all of it
    assert abs(xy[1] - centre[1]) < 0.08
    assert abs(xy[0] - centre[0]) < 0.3  # across the counter: what the fixes measured
    assert acc.hull_end_lo[2] == 3 and acc.hull_end_hi[2] == 1  # the y axis: each view saw one end
    # both sides cut (it fills the view): no end seen, and the position is what the fixes say
    _, both = _placed_from_cut_views([(-1.0, 0.0, 0.0)], centre, (0.4, 2.5), 0.9)
    assert both.hull_end_lo.sum() + both.hull_end_hi.sum() == 0


def test_cut_views_ends_leave_an_axis_that_whole_views_bound_as_it_was():
    """Whole views (the object inside the image) saw a face on an axis: the cut views' ends do
    not add to it, the faces the whole views saw decide (what an object never cut gets)."""
    acc = RayAccumulator()
    acc.add_depth((0.0, 0.0), 0.05 * np.eye(2), 1.0, 0.5)
    acc.add_points(np.array([[-0.5, -1.0], [0.5, 1.0]]), math.pi / 2)  # looking north: the south face
    for yaw, end in ((math.pi / 2, (1.0, 0.0)), (-math.pi / 2, (-1.0, 0.0)), (0.0, (0.0, 1.0))):
        acc.add_points(np.array([[-0.5, -1.0], [0.5, 2.0]]), yaw, whole=False, end_dir=end)
    _, _, closed, side = acc.hull_bounds()
    assert not closed[2] and side[2] == 1  # the y axis: only the south face, as the whole view saw
    assert closed[0]  # the x axis: no whole view saw a face there; the cut views saw both ends
    old = RayAccumulator(acc.to_list()[: RayAccumulator.HULL_SIZE])  # a memory from before: no ends
    assert old.hull_end_lo.sum() + old.hull_end_hi.sum() == 0 and old.hull_n == 4


def _armchair_hull(table: bool):
    """The sums of a 0.6 x 0.6 m armchair seen from three spots 2.5 m off (whole in the image)
    and once from 2.3 m with the camera turned so that its box runs off the image's left side
    (cut); a low table (0.45 m) stands between, and no box was detected for it."""
    from vlkng_ros.core.images import encode_depth_png

    centre, half, frames, sightings = (0.0, 0.0), (0.3, 0.3), _Frames(), []
    views = [(2.5, -1.0, 0.0), (2.4, -0.6, 0.0), (2.6, -1.4, 0.0), (2.0, -1.2, 40.0)]
    for k, (x, y, turn) in enumerate(views):
        a = math.atan2(-y, -x) - math.radians(turn)
        z, box = _render_box((x, y), a, centre, half, 0.7)
        if table:
            z = np.minimum(z, _render_box((x, y), a, (1.1, -0.55), (0.3, 0.55), 0.45)[0])
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        sightings.append(("t", k, Pose.from_xy_yaw(x, y, a), box, CAM))
    assert sightings[-1][3][0] == 0.0  # the last box is cut by the image's side
    return dp.redo_depth([], sightings, dp.KeyframeDepths(frames), dp.DepthNoise(), 0.0, 1.0)


def test_an_armchair_behind_an_undetected_table_keeps_its_footprint():
    """In the cut view the near mode takes the table in front of the armchair: its fix is loose
    (cut) and barely moves the armchair, but its points had joined the surface extents, measured
    across views by min / max, and grew the 0.6 m armchair's footprint to 1.5 x 1.0 m (foot1: an
    armchair between a coffee table, a sofa and a piano got a goal 1.6 m off). A cut view's
    points join only where they reach the object the whole views placed; the armchair's own
    points in the same cut view still join."""
    acc = _armchair_hull(table=True)
    assert acc is not None and acc.depth_n == 4  # the loose fix still counts
    size = acc.hull_hi - acc.hull_lo
    assert np.all(size <= 0.6 * np.array([1.0, math.sqrt(2.0), 1.0, math.sqrt(2.0)]) + 0.15), size
    assert np.all(np.abs(acc.hull_lo) < 0.45) and np.all(np.abs(acc.hull_hi) < 0.45)
    clear = _armchair_hull(table=False)
    assert clear is not None and clear.hull_n == 4  # the cut view's own armchair points join


def test_a_wall_just_behind_an_object_does_not_grow_its_footprint():
    """A 0.6 x 0.6 m armchair 0.1 m before a wall, seen from 2.5 m face on and 35 degrees either
    side, its boxes a little loose (10 % of the width each side and above, a detector's box).
    Inside the box the wall shows beside and above the armchair within the depths its readings
    grow over (the gap is under the depth noise's histogram bins): those readings had joined
    its surface extents and put it 0.5 m off, its footprint 1.3 m across. The wall seen around
    the box (either side and above, at one depth) bounds what is the armchair's. Over several
    noise draws (the wall joins the grown depths in some of them)."""
    for seed in range(4):
        _wall_behind_armchair(seed)


def _wall_behind_armchair(seed):
    from vlkng_ros.core.images import encode_depth_png

    rng = np.random.default_rng(seed)
    frames, sightings = _Frames(), []
    for k, deg in enumerate((-35.0, 0.0, 35.0)):
        a = math.radians(deg)
        xy = (-2.5 * math.cos(a), -2.5 * math.sin(a))
        z, box = _render_box(xy, a, (0.0, 0.0), (0.3, 0.3), 0.7, wall=9.0)
        z = np.minimum(z, _render_box(xy, a, (0.45, 0.0), (0.05, 4.0), 2.5, wall=9.0)[0])  # the wall
        z = (z + rng.normal(0.0, 1.0, z.shape) * dp.DepthNoise().sigma(z)).astype(np.float32)
        w, h = box[2] - box[0], box[3] - box[1]
        box = (box[0] - 0.1 * w, box[1] - 0.1 * h, box[2] + 0.1 * w, box[3])
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        sightings.append(("t", k, Pose.from_xy_yaw(xy[0], xy[1], a), box, CAM))
    acc = dp.redo_depth([], sightings, dp.KeyframeDepths(frames), dp.DepthNoise(), 0.0, 1.0)
    assert acc is not None and acc.hull_n == 3
    true_half = 0.3 * np.array([1.0, math.sqrt(2.0), 1.0, math.sqrt(2.0)])
    assert np.all(acc.hull_hi <= true_half + 0.15) and np.all(acc.hull_lo >= -true_half - 0.15)
    assert math.dist(acc.solve()[0], (0.0, 0.0)) < 0.15


def _bed_with_a_thing_in_front(bar_rows_share):
    """A 2 x 1.6 m bed 0.55 m high, its centre 3.4 m ahead, seen from four spots (one chunk), and
    once more (another chunk) with something 0.5 m before the camera across the bed's whole box
    over ``bar_rows_share`` of its rows (a chair back the robot stands behind). Returns where the
    four views alone put it, and the chunks' sums merged (as a node's are)."""
    from vlkng_ros.core.images import encode_depth_png

    centre, half = (0.0, 3.4), (0.8, 1.0)
    frames, clean, occluded = _Frames(), [], []
    for k, x in enumerate((-0.6, -0.2, 0.2, 0.6, 0.1)):
        yaw = math.atan2(centre[1], centre[0] - x)
        z, box = _render_box((x, 0.0), yaw, centre, half, 0.55)
        if k == 4:
            mid, rows = 0.5 * (box[1] + box[3]), bar_rows_share * (box[3] - box[1])
            z[int(mid - rows / 2): int(mid + rows / 2), int(box[0]): int(box[2])] = 0.5
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        (occluded if k == 4 else clean).append(("t", k, Pose.from_xy_yaw(x, 0.0, yaw), box, CAM, ()))
    depths, noise = dp.KeyframeDepths(frames), dp.DepthNoise()
    accs = [RayAccumulator(), RayAccumulator()]
    assert dp.add_depth_fixes(accs[0], depths, clean, noise, 0.0, 1.0) == 4
    assert dp.add_depth_fixes(accs[1], depths, occluded, noise, 0.0, 1.0) == 1
    return accs[0].solve()[0], accs[0].merged(accs[1])


def test_a_thing_in_front_of_a_big_object_in_one_view_does_not_drag_it():
    """The thing 0.5 m before the camera spans the bed's whole box (so it passes for the bed's
    near side) over a fifth of its rows: the near mode takes it, and its fix lies 2.8 m short
    with a sigma of a few cm, trusted several times more than the bed's own fixes; alone in its
    chunk no outlier test sees it, and merged it dragged the bed 1.8 m toward the camera. Most
    of the box's middle lies beyond it (the bed): its range may be that far off, and its
    variance says so; its readings do not join the bed's surface. Where it covers more of the
    box's middle than the bed shows (a tv stand's box a third beyond a thing before it gave a fix
    2.8 m short, sigma 0.12 m), the share beyond still makes it that loose: the bed stays. Where
    nothing of the box lies beyond it, nothing says it is not the object: the near mode's choice
    stands (a chair whose box shows the floor and wall between its legs keeps its range:
    test_background_through_the_box_does_not_pull_the_range)."""
    clean, acc = _bed_with_a_thing_in_front(0.2)
    assert math.dist(clean, (0.0, 3.4)) < 0.6  # from the foot the fixes fall short (the far half unseen)
    assert acc.depth_n == 5 and math.dist(acc.solve()[0], clean) < 0.1
    clean, most = _bed_with_a_thing_in_front(0.55)  # the thing covers most of the box's middle
    assert most.depth_n == 5 and math.dist(most.solve()[0], clean) < 0.15
    clean, near = _bed_with_a_thing_in_front(1.0)  # ... all of the box: a nearer bed, trusted
    assert near.depth_n == 5 and math.dist(near.solve()[0], clean) > 0.5


def _sideboard_seen_from_afar(dists, wall=None, seed=3):
    """Where bearings and depth fixes (rendered with the sensor's noise, half-size depth as stored)
    put a 1.4 x 0.4 m sideboard 0.75 m tall, centred at the origin, seen face on from ``dists``
    (m from its centre); ``wall``: a wall that far beyond its centre (else nothing within range)."""
    from vlkng_ros.core.images import encode_depth_png

    rng = np.random.default_rng(seed)
    frames, acc = _Frames(), RayAccumulator()
    for k, dist in enumerate(dists):
        xy = (0.0, -dist)
        z, box = _render_box(xy, math.pi / 2, (0.0, 0.0), (0.7, 0.2), 0.75,
                             wall=dist + wall if wall is not None else 9.0)
        z = (z + rng.normal(0.0, 1.0, z.shape) * dp.DepthNoise().sigma(z)).astype(np.float32)
        z[z > dp.DepthNoise().max_m] = np.nan
        frames.depth[("t", k)] = encode_depth_png(z[::2, ::2])
        pose = Pose.from_xy_yaw(xy[0], xy[1], math.pi / 2)
        acc.add(ray_for(pose, box, CAM))
        assert dp.add_depth_fix(acc, dp.KeyframeDepths(frames), "t", k, pose, box, CAM, dp.DepthNoise(), 0.0, 1.0)
    return acc.solve()[0]


def test_a_shallow_object_seen_from_afar_is_not_deepened_by_the_depth_noise():
    """A 0.4 m deep sideboard seen face on from 6-7 m, where the depth noise is 0.2-0.3 m: its
    readings' depth interval spans the noise's spread (some 4 sigma) beyond the 0.4 m of the
    object, and half of it put the centre 0.4-0.6 m beyond the truth (0.2-0.6 m with a wall just
    behind it; bigger worlds' far views: 0.3-0.5 m on sideboards, tv stands, benches). What the
    readings span less the noise's 2nd-98th percentile spread (2 x 2.05 sigma) is the object's."""
    for wall in (None, 0.25):
        xy = _sideboard_seen_from_afar([6.0, 6.5, 7.0], wall)
        assert abs(xy[1]) < 0.15 and abs(xy[0]) < 0.1
    near = _sideboard_seen_from_afar([2.5, 3.0])  # the noise is millimetres: as before (the face-on guess)
    assert 0.1 < near[1] < 0.3


def test_a_far_fix_is_no_surer_of_the_depth_it_cannot_see_than_its_whole_span_makes_it():
    """A 0.5 m wide, 1.2 m long block seen end on from 6.5 m: only its end face shows, and its
    readings span 1.7 m, nearly all of it noise (sigma 0.26 m). The centre is put from what is left
    once the noise's spread is taken out (0.4 m short: its length is unseen), but the fix's range
    variance keeps the guess the whole span leaves open: trimmed, it shrank to 0.17 m (sigma) and
    the error lay beyond 2 sigma in every noise draw (fresh varied big objects within 2 sigma 0.90 -> 0.80)."""
    noise = dp.DepthNoise()
    for seed in range(4):
        rng = np.random.default_rng(seed)
        z, box = _render_box((0.0, -6.5), math.pi / 2, (0.0, 0.0), (0.25, 0.6), 0.9, wall=9.0)
        z = (z + rng.normal(0.0, 1.0, z.shape) * noise.sigma(z)).astype(np.float32)
        z[z > noise.max_m] = np.nan
        fix = dp.object_depth(z, box, CAM, noise)
        assert fix is not None and -0.6 < fix.z_m - 6.5 < -0.2  # short by the unseen length
        assert abs(fix.z_m - 6.5) <= 2.0 * math.sqrt(fix.var_z)
        # ... and no surer than the half span's guess (BEHIND_SIGMA_SHARE of it) alone
        assert fix.var_z >= (dp.BEHIND_SIGMA_SHARE * 0.5 * fix.spread_m) ** 2


# --- a depth image not registered to the colour image (an RGB-D driver without alignment) ----
def test_unregistered_depth_is_registered_to_the_colour_camera():
    """A depth camera 5 cm right of the colour camera, turned 3 degrees, with its own intrinsics
    and size (212x120, wider) sees a wall 3 m ahead and a box 1 m ahead. Registered, its depth at
    the colour camera's pixels is the depth the colour camera itself would see (to a mm on the wall
    and the box, away from their outline), the box's edges in the colour columns where the colour
    image has them; taken as registered (scaled by the size ratio, as an aligned image is) they lie
    23 and 30 columns off (the other intrinsics, and the baseline's parallax: 15 px at 1 m, as a
    depth camera with the colour camera's intrinsics shows)."""
    from helpers import BOX_FACE, render_wall_and_box

    colour = CameraModel(320, 240, 300.0, 300.0, 160.0, 120.0)
    depth_cam = CameraModel(212, 120, 110.0, 110.0, 106.0, 60.0)
    a = math.radians(3.0)
    rot = np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0], [-math.sin(a), 0.0, math.cos(a)]])
    origin = np.array([0.05, 0.0, 0.0])
    raw = render_wall_and_box(depth_cam, origin, rot)
    raw[5, 7] = 0.0  # no reading: 0 and NaN are skipped, not a point at the lens
    raw[6, 7] = np.nan
    ideal = render_wall_and_box(colour)

    reg = dp.register_depth(raw, depth_cam, rot, origin, colour)
    assert reg.shape == (240, 320) and reg.dtype == np.float32
    # away from the box's outline (3 px: a depth pixel is 2.7 colour pixels wide; one on the box's
    # edge covers it whole) every colour pixel the depth camera also saw matches
    x1, y1, x2, y2, z = BOX_FACE
    u1, u2 = colour.fx * x1 / z + colour.cx, colour.fx * x2 / z + colour.cx
    v1, v2 = colour.fy * y1 / z + colour.cy, colour.fy * y2 / z + colour.cy
    us, vs = np.meshgrid(np.arange(320) + 0.5, np.arange(240) + 0.5)
    outline = (((np.abs(us - u1) < 3) | (np.abs(us - u2) < 3)) & (vs > v1 - 3) & (vs < v2 + 3)) | (
        ((np.abs(vs - v1) < 3) | (np.abs(vs - v2) < 3)) & (us > u1 - 3) & (us < u2 + 3))
    seen = np.isfinite(reg)
    assert np.abs(reg - ideal)[seen & ~outline].max() < 0.003
    # no holes between the coarser camera's readings: every colour pixel (the depth camera's view
    # is wider) but the two without a reading and the wall the box hides from the depth camera, left
    # of the box (that camera stands right of the colour one): fx * 0.05 * (1 / 1 - 1 / 3) = 10 px
    shadow = (us < u1) & (us > u1 - colour.fx * 0.05 * (1 / z - 1 / 3.0)) & (vs > v1) & (vs < v2)
    assert seen[~shadow & ~outline].mean() > 0.9999
    assert (~seen[shadow & ~outline]).mean() > 0.99
    # the box's edges in the colour columns, along the middle row
    row = reg[120]
    near = np.nonzero(row < 2.0)[0]
    assert abs(near.min() - u1) <= 1 and abs(near.max() + 1 - u2) <= 1
    naive = raw[60, np.arange(320) * 212 // 320]  # used as if registered: scaled by the size ratio
    cols = np.nonzero(naive < 2.0)[0]
    assert cols.min() - u1 > 20 and u2 - (cols.max() + 1) > 20  # what registering fixes
    # with the colour camera's own intrinsics, the baseline alone: the parallax fx * 0.05 / 1 = 15 px
    raw = render_wall_and_box(colour, origin)
    naive, reg = np.nonzero(raw[120] < 2.0)[0], np.nonzero(dp.register_depth(raw, colour, np.eye(3), origin, colour)[120] < 2.0)[0]
    assert naive.min() - u1 == pytest.approx(-15, abs=1) and naive.max() + 1 - u2 == pytest.approx(-15, abs=1)
    assert abs(reg.min() - u1) <= 1 and abs(reg.max() + 1 - u2) <= 1


def test_registered_depth_policy_same_frame_tf_and_missing_info():
    """Same frame (or an unnamed one, or one TF puts on the colour camera): the image as it is, the
    very array. Another frame: TF colour frame <- depth frame at the image's stamp (not the cloud's
    configured mount), a body-frame depth frame turned; without the depth camera's CameraInfo or
    TF, a ValueError that says what to set."""
    from vlkng_ros.core.tf import Transform, TransformBuffer

    colour = CameraModel(160, 120, 150.0, 150.0, 80.0, 60.0)
    depth_cam = CameraModel(160, 120, 200.0, 200.0, 80.0, 60.0)  # narrower than the colour camera
    d = np.full((120, 160), 2.0, dtype=np.float32)
    for cam, dep in (("cam_color_optical_frame", "/cam_color_optical_frame"), ("", "x"), ("x", "")):
        assert dp.registered_depth(d, dep, None, colour, cam, 0, None) is d
    tf = TransformBuffer(cache_s=None)
    tf.set_transform("cam_link", "cam_color_optical_frame", 0, (0, 0, 0), (-0.5, 0.5, -0.5, 0.5), static=True)
    tf.set_transform("cam_link", "cam_depth_optical_frame", 0, (0, -0.05, 0), (-0.5, 0.5, -0.5, 0.5), static=True)
    tf.set_transform("cam_link", "cam_depth_frame", 0, (0, -0.05, 0), (0, 0, 0, 1), static=True)
    calls = []

    def lookup(target, source, stamp_ns):
        calls.append((target, source, stamp_ns))
        return tf.lookup(target, source, stamp_ns)

    for dep in ("cam_depth_optical_frame", "cam_depth_frame"):  # the same mount, named both ways
        reg = dp.registered_depth(d, "/" + dep, depth_cam, colour, "cam_color_optical_frame", 7, lookup)
        assert calls[-1] == ("cam_color_optical_frame", dep, 7)
        # a wall 2 m ahead of a camera 5 cm right of the colour one: 2 m, its left edge moved right
        # by fx * 0.05 / 2 = 3.75 colour pixels, its view 3/4 of the colour camera's, without holes
        assert np.nanmedian(reg) == pytest.approx(2.0, abs=1e-6)
        cols = np.nonzero(np.isfinite(reg[60]))[0]
        assert cols.min() == pytest.approx(80 - 60 + 3.75, abs=1) and cols.max() == pytest.approx(80 + 60 + 3.75, abs=1)
        assert len(cols) == cols.max() - cols.min() + 1
    with pytest.raises(ValueError, match=r"^depth image in 'cam_depth_optical_frame', not the colour image's "
                                         r"'cam_color_optical_frame' \(not aligned\): set depth.camera_info_topic "
                                         r"to the depth camera's CameraInfo \(e.g. camera/depth/camera_info\)"):
        dp.registered_depth(d, "cam_depth_optical_frame", None, colour, "cam_color_optical_frame", 7, lookup,
                            depth_topic="camera/depth/image_rect_raw/compressedDepth")
    # a driver that aligns but names its own frame, which TF puts on the colour camera: as it is
    tf.set_transform("cam_color_optical_frame", "cam_aligned_depth_optical_frame", 0, (0, 0, 0), (0, 0, 0, 1), static=True)
    assert dp.registered_depth(d, "cam_aligned_depth_optical_frame", None, colour, "cam_color_optical_frame", 7, lookup) is d
    tf.set_transform("cam_color_optical_frame", "cam_near_optical_frame", 0, (0.003, 0, 0), (0, 0, 0, 1), static=True)
    with pytest.raises(ValueError, match="set depth.camera_info_topic"):  # 3 mm off: another camera
        dp.registered_depth(d, "cam_near_optical_frame", None, colour, "cam_color_optical_frame", 7, lookup)
    with pytest.raises(ValueError, match="no transform from the depth image's 'radar' frame to the camera: "):
        dp.registered_depth(d, "radar", depth_cam, colour, "cam_color_optical_frame", 7, lookup)
    with pytest.raises(ValueError, match=r"no TF \(the camera driver's mount on /tf_static; live, capture.pose_source"):
        dp.registered_depth(d, "cam_depth_optical_frame", depth_cam, colour, "cam_color_optical_frame", 7, None)
    assert Transform  # the lookup returns core.tf Transforms, as the live buffers do


def test_depth_to_points_skips_no_reading_and_scales_a_smaller_image():
    """Readings back-projected through their pixel centres; 0 / NaN / inf are none; a depth image
    at half the CameraInfo's size uses the intrinsics scaled by that ratio."""
    cam = CameraModel(8, 6, 4.0, 4.0, 4.0, 3.0)
    d = np.array([[1.0, 0.0, np.nan, np.inf], [2.0, 2.0, 2.0, 2.0], [4.0, -1.0, 4.0, 4.0]], np.float32)
    pts, (tl, tr, bl, br) = dp.depth_to_points(d, cam, corners=True)  # 4x3 image of an 8x6 camera: 2x2 pixels
    assert len(pts) == len(tl) == len(br) == 8
    assert cam.project(tr[-1])[0] == pytest.approx([8.0, 4.0]) and cam.project(bl[-1])[0] == pytest.approx([6.0, 6.0])
    assert pts[0] == pytest.approx([(1.0 - 4.0) / 4.0 * 1.0, (1.0 - 3.0) / 4.0 * 1.0, 1.0])
    assert pts[-1] == pytest.approx([(7.0 - 4.0) / 4.0 * 4.0, (5.0 - 3.0) / 4.0 * 4.0, 4.0])
    assert cam.project(tl[-1])[0] == pytest.approx([6.0, 4.0]) and cam.project(br[-1])[0] == pytest.approx([8.0, 6.0])
    full = dp.depth_to_points(np.full((6, 8), 3.0), cam)
    assert len(full) == 48 and cam.project(full)[9] == pytest.approx([1.5, 1.5])  # pixel (1, 1) through its centre
    with pytest.raises(ValueError, match="shape"):
        dp.depth_to_points(np.zeros((2, 2, 3)), cam)
