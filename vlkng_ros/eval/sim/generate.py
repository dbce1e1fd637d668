"""Write a complete synthetic tour (tour-format v2): bag, annotations, questions, world.

The bag carries what a robot records: the camera (``/camera/image_raw/compressed``, frame
``camera_optical_frame``), SLAM's ``/pose`` (the robot's ``base_link`` in ``map``, ~4 Hz, with
SLAM-like error), ``/odom`` (10 Hz, drifting), and the frame tree: ``/tf`` with ``map -> odom``
(10 Hz, the latest SLAM correction, as SLAM Toolbox publishes it) and ``odom -> base_link``
(odometry, 20 Hz), ``/tf_static`` with ``base_link -> camera_link`` (the mounting: ``camera_offset``
forward/left of the robot's centre, 1.0 m up) and ``camera_link -> camera_optical_frame`` (the
optical axes). The renderer draws a level camera 1.0 m above the floor, so the mount has no pitch
(the TF code's handling of pitched mounts is covered by unit tests instead).
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from vlkng_ros.core.images import encode_jpeg
from vlkng_ros.eval.sim.questions import make_questions
from vlkng_ros.eval.sim.render import Renderer
from vlkng_ros.eval.sim.sensor import NOISE, realsense_depth
from vlkng_ros.eval.sim.trajectory import camera_times, pose_samples, walk
from vlkng_ros.eval.sim.world import WALL_HEIGHT, build_world, move_objects

log = logging.getLogger("vlkng.sim")

EPOCH_NS = 1_700_000_000_000_000_000
IMAGE_TOPIC = "/camera/image_raw/compressed"
POSE_TOPIC = "/pose"
INFO_TOPIC = "/camera/camera_info"
DEPTH_TOPIC = "/camera/aligned_depth_to_color/image_raw"
CAMERA_FRAME = "camera_optical_frame"
CAMERA_LINK = "camera_link"
BASE_FRAME, ODOM_FRAME, MAP_FRAME = "base_link", "odom", "map"
TF_TOPIC, TF_STATIC_TOPIC, ODOM_TOPIC = "/tf", "/tf_static", "/odom"
CAMERA_HEIGHT_M = 1.0  # the renderer's camera height
ODOM_TF_HZ, MAP_TF_HZ, ODOM_HZ = 20.0, 10.0, 10.0
# odometry drift (the odom frame slowly wanders from map; SLAM's map -> odom corrects it)
ODOM_DRIFT_YAW_RAD_S = math.radians(1.5) / 60.0
ODOM_DRIFT_M_S = (0.03 / 60.0, -0.02 / 60.0)
HFOV_DEG = 90.0
JPEG_QUALITY = 85


@dataclass
class SimSummary:
    out_dir: Path
    frames: int
    poses: int
    objects: int
    moved: list[str]
    rooms: list[str]
    annotated_boxes: int
    questions: int
    questions_by_type: dict[str, int]
    duration_s: float
    bytes_on_disk: int
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class _BagWriter:
    """rosbag2 (MCAP storage) writer for the tour's three topics."""

    def __init__(self, bag_dir: Path, width: int, height: int, fx: float, depth: bool = False):
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        self.ts = get_typestore(Stores.ROS2_HUMBLE)
        t = self.ts.types
        self.Header, self.Time = t["std_msgs/msg/Header"], t["builtin_interfaces/msg/Time"]
        self.CompressedImage = t["sensor_msgs/msg/CompressedImage"]
        self.Pwcs, self.Pwc = t["geometry_msgs/msg/PoseWithCovarianceStamped"], t["geometry_msgs/msg/PoseWithCovariance"]
        self.Pose, self.Point, self.Quat = t["geometry_msgs/msg/Pose"], t["geometry_msgs/msg/Point"], t["geometry_msgs/msg/Quaternion"]
        self.CameraInfo, self.Roi = t["sensor_msgs/msg/CameraInfo"], t["sensor_msgs/msg/RegionOfInterest"]
        self.writer = Writer(bag_dir, version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.c_img = self.writer.add_connection(IMAGE_TOPIC, self.CompressedImage.__msgtype__, typestore=self.ts)
        self.c_pose = self.writer.add_connection(POSE_TOPIC, self.Pwcs.__msgtype__, typestore=self.ts)
        self.c_info = self.writer.add_connection(INFO_TOPIC, self.CameraInfo.__msgtype__, typestore=self.ts)
        if depth:
            self.Image = t["sensor_msgs/msg/Image"]
            self.c_depth = self.writer.add_connection(DEPTH_TOPIC, self.Image.__msgtype__, typestore=self.ts)
        self.TFMessage, self.TransformStamped = t["tf2_msgs/msg/TFMessage"], t["geometry_msgs/msg/TransformStamped"]
        self.Transform, self.Vector3 = t["geometry_msgs/msg/Transform"], t["geometry_msgs/msg/Vector3"]
        self.Odometry, self.Twc = t["nav_msgs/msg/Odometry"], t["geometry_msgs/msg/TwistWithCovariance"]
        self.Twist = t["geometry_msgs/msg/Twist"]
        self.c_tf = self.writer.add_connection(TF_TOPIC, self.TFMessage.__msgtype__, typestore=self.ts)
        self.c_tf_static = self.writer.add_connection(TF_STATIC_TOPIC, self.TFMessage.__msgtype__, typestore=self.ts)
        self.c_odom = self.writer.add_connection(ODOM_TOPIC, self.Odometry.__msgtype__, typestore=self.ts)
        self.width, self.height, self.fx = width, height, fx

    def header(self, stamp_ns: int, frame_id: str):
        return self.Header(stamp=self.Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000),
                           frame_id=frame_id)

    def image(self, stamp_ns: int, log_ns: int, jpeg: bytes) -> None:
        msg = self.CompressedImage(header=self.header(stamp_ns, CAMERA_FRAME), format="jpeg",
                                   data=np.frombuffer(jpeg, dtype=np.uint8))
        self.writer.write(self.c_img, log_ns, self.ts.serialize_cdr(msg, msg.__msgtype__))

    def depth(self, stamp_ns: int, log_ns: int, mm: np.ndarray) -> None:
        """Aligned depth as an RGB-D driver publishes it: 16UC1 millimetres, 0 = no reading."""
        h, w = mm.shape
        msg = self.Image(header=self.header(stamp_ns, CAMERA_FRAME), height=h, width=w, encoding="16UC1",
                         is_bigendian=0, step=w * 2, data=np.ascontiguousarray(mm, dtype="<u2").view(np.uint8).ravel())
        self.writer.write(self.c_depth, log_ns, self.ts.serialize_cdr(msg, msg.__msgtype__))

    def _planar(self, x: float, y: float, yaw: float, sigma_xy: float, sigma_yaw_deg: float):
        """A PoseWithCovariance of a planar pose."""
        cov = np.zeros(36, dtype=np.float64)
        cov[0] = cov[7] = sigma_xy ** 2
        cov[35] = math.radians(sigma_yaw_deg) ** 2
        pose = self.Pose(position=self.Point(x=float(x), y=float(y), z=0.0),
                         orientation=self.Quat(x=0.0, y=0.0, z=math.sin(yaw / 2), w=math.cos(yaw / 2)))
        return self.Pwc(pose=pose, covariance=cov)

    def pose(self, stamp_ns: int, log_ns: int, x: float, y: float, yaw: float) -> None:
        msg = self.Pwcs(header=self.header(stamp_ns, "map"), pose=self._planar(x, y, yaw, 0.02, 1.0))
        self.writer.write(self.c_pose, log_ns, self.ts.serialize_cdr(msg, msg.__msgtype__))

    def tf(self, log_ns: int, transforms: list[tuple], static: bool = False) -> None:
        """``transforms``: (stamp_ns, parent, child, (x, y, z), (qx, qy, qz, qw))."""
        msg = self.TFMessage(transforms=[self.TransformStamped(
            header=self.header(stamp, parent), child_frame_id=child,
            transform=self.Transform(translation=self.Vector3(x=float(t[0]), y=float(t[1]), z=float(t[2])),
                                     rotation=self.Quat(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3]))))
            for stamp, parent, child, t, q in transforms])
        self.writer.write(self.c_tf_static if static else self.c_tf, log_ns, self.ts.serialize_cdr(msg, msg.__msgtype__))

    def odom(self, stamp_ns: int, log_ns: int, x: float, y: float, yaw: float) -> None:
        zero = self.Vector3(x=0.0, y=0.0, z=0.0)
        msg = self.Odometry(header=self.header(stamp_ns, ODOM_FRAME), child_frame_id=BASE_FRAME,
                            pose=self._planar(x, y, yaw, 0.05, 3.0),
                            twist=self.Twc(twist=self.Twist(linear=zero, angular=zero), covariance=np.zeros(36)))
        self.writer.write(self.c_odom, log_ns, self.ts.serialize_cdr(msg, msg.__msgtype__))

    def camera_info(self, stamp_ns: int, log_ns: int) -> None:
        w, h, f = self.width, self.height, self.fx
        k = np.array([f, 0, w / 2, 0, f, h / 2, 0, 0, 1], dtype=np.float64)
        p = np.array([f, 0, w / 2, 0, 0, f, h / 2, 0, 0, 0, 1, 0], dtype=np.float64)
        msg = self.CameraInfo(header=self.header(stamp_ns, CAMERA_FRAME), height=h, width=w,
                              distortion_model="plumb_bob", d=np.zeros(5), k=k,
                              r=np.eye(3).ravel(), p=p, binning_x=0, binning_y=0,
                              roi=self.Roi(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))
        self.writer.write(self.c_info, log_ns, self.ts.serialize_cdr(msg, msg.__msgtype__))

    def close(self) -> None:
        self.writer.close()


def generate_tour(out_dir: str | Path, minutes: float = 3.0, seed: int = 0, world_seed: int | None = None,
                  fps: float = 5.0, width: int = 640, height: int = 480, move_objects: int = 0,
                  log_progress: bool = True, overwrite: bool = False, depth: bool = False,
                  camera_offset: tuple[float, float] = (0.0, 0.0), varied: bool = False,
                  camera_height_m: float = CAMERA_HEIGHT_M, hfov_deg: float = HFOV_DEG,
                  depth_noise: float = 1.0, pose_error: float = 1.0) -> SimSummary:
    """Generate a tour into ``out_dir``. Same arguments, same annotations/questions/world bytes.
    ``depth``: also write aligned depth (16UC1, RealSense-like noise and dropouts, see sensor.py)
    on DEPTH_TOPIC, stamped within 3 ms of each colour frame; everything else is unchanged.
    ``camera_offset``: the camera's mounting (x forward, y left, m) from the robot's centre
    (``base_link``, whose pose ``/pose`` and ``/odom`` give); TF carries it. ``camera_height_m`` and
    ``hfov_deg``: the camera's height above the floor (TF) and horizontal field of view (camera_info),
    a rig other than the default's (e.g. 0.3 m and 69 deg: a RealSense low on a small base).
    ``depth_noise``: the depth's range noise as a multiple of the noise model the pipeline assumes
    by default (sensor.NOISE, a D435 at 640 px): 2-3 is a camera with a shorter stereo baseline or
    a lower resolution that nobody configured for, under 1 a quieter one. ``pose_error``: the
    SLAM-like error of ``/pose`` (a slow drift of 3 cm and 0.6 degrees, jitter of 8 mm and 0.17
    degrees) as a multiple of that (3: 9 cm, 1.8 degrees, a SLAM that keeps the robot less surely)."""
    started = time.monotonic()
    if minutes <= 0 or fps <= 0:
        raise ValueError("minutes and fps must be positive")
    if width < 64 or height < 48:
        raise ValueError("image must be at least 64x48 pixels")
    if not 0.1 <= camera_height_m <= 2.5:
        raise ValueError(f"camera height must be 0.1-2.5 m (walls are {WALL_HEIGHT:g} m), not {camera_height_m:g}")
    if not 30.0 <= hfov_deg <= 120.0:
        raise ValueError(f"horizontal field of view must be 30-120 degrees, not {hfov_deg:g}")
    if depth_noise != 1.0 and not depth:
        raise ValueError("depth noise needs depth (--depth)")
    if not 0.1 <= depth_noise <= 10.0:
        raise ValueError(f"depth noise must be 0.1-10 times the default model's, not {depth_noise:g}")
    if not 0.0 <= pose_error <= 10.0:
        raise ValueError(f"pose error must be 0-10 times the default's, not {pose_error:g}")
    noise = replace(NOISE, base_m=NOISE.base_m * depth_noise, quadratic=NOISE.quadratic * depth_noise)
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise ValueError(f"{out} exists and is not empty (use --force / overwrite=True to replace it)")
        for name in ("bag", "annotations.jsonl", "questions.json", "world.json"):
            p = out / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    world_seed = seed if world_seed is None else world_seed
    world = build_world(world_seed, varied)
    moved = move_objects_in(world, move_objects, seed)
    duration = minutes * 60.0
    traj = walk(world, duration, seed)
    rng = np.random.default_rng([int(seed), 0xCA3])
    t_cam = camera_times(duration, fps, rng)
    t_pose, px, py, pyaw = pose_samples(traj, duration, rng, error=pose_error)
    cx, cy, cyaw, comega = traj.at(t_cam)
    renderer = Renderer(world, width, height, hfov_deg, camera_height=camera_height_m, seed=seed, depth=depth)
    depth_rng = np.random.default_rng([int(seed), 0xDE97])  # its own stream: colour tours stay byte-identical
    epoch = EPOCH_NS + (int(seed) % 1000) * 86_400 * 1_000_000_000
    to_ns = lambda t: epoch + int(round(float(t) * 1e9))  # noqa: E731

    # non-image messages, in log-time order: (log_ns, kind, payload)
    events: list[tuple[int, int, tuple]] = []
    ox, oy = (float(v) for v in camera_offset)
    bx, by = _base_from_camera(px, py, pyaw, ox, oy)  # SLAM's estimate of the robot's centre
    for t, x, y, yaw in zip(t_pose, bx, by, pyaw):
        events.append((to_ns(t) + 6_000_000, 0, (to_ns(t), x, y, yaw)))
    for s in range(int(duration) + 1):
        events.append((to_ns(s + 0.01) + 1_000_000, 1, (to_ns(s + 0.01),)))
    events += _tf_events(traj, duration, t_pose, bx, by, pyaw, ox, oy, to_ns)
    events.sort(key=lambda e: (e[0], e[1]))

    bag = _BagWriter(out / "bag", width, height, renderer.fx, depth)
    bag.tf(epoch, [(epoch, BASE_FRAME, CAMERA_LINK, (ox, oy, camera_height_m), (0.0, 0.0, 0.0, 1.0)),
                   # REP 103 optical axes: z forward, x right, y down
                   (epoch, CAMERA_LINK, CAMERA_FRAME, (0.0, 0.0, 0.0), (-0.5, 0.5, -0.5, 0.5))], static=True)
    relations = world.relations()
    objects = world.objects
    ann_lines: list[str] = []
    ann_frames: list[dict[str, Any]] = []
    boxes = 0
    ev = 0
    last_place = world.rooms[0].kind
    last_log = time.monotonic()

    def write_events_until(log_ns: float) -> None:
        """Write the /pose and /camera_info messages logged up to ``log_ns``, in order."""
        nonlocal ev
        while ev < len(events) and events[ev][0] <= log_ns:
            lns, kind, payload = events[ev]
            if kind == 0:
                bag.pose(payload[0], lns, *payload[1:])
            elif kind == 1:
                bag.camera_info(payload[0], lns)
            elif kind == 2:
                bag.tf(lns, list(payload))
            else:
                bag.odom(payload[0], lns, *payload[1:])
            ev += 1

    try:
        for k, t in enumerate(t_cam):
            stamp = to_ns(t)
            log_ns = stamp + 12_000_000 + int(rng.integers(0, 4_000_000))
            write_events_until(log_ns)
            img, visible = renderer.render(float(cx[k]), float(cy[k]), float(cyaw[k]), float(comega[k]))
            bag.image(stamp, log_ns, encode_jpeg(img, JPEG_QUALITY))
            if depth:
                offset = int(depth_rng.integers(-3_000_000, 3_000_001))
                bag.depth(stamp + offset, log_ns + 1_000_000, realsense_depth(renderer.last_depth, depth_rng, noise))
            room = world.room_at(float(cx[k]), float(cy[k]))
            place = world.rooms[room].kind if room >= 0 else last_place
            last_place = place
            seen = {objects[v.index].gt_track for v in visible}
            frame = {
                "stamp_ns": stamp,
                "place": place,
                "objects": [{
                    "gt_track": objects[v.index].gt_track, "label": objects[v.index].label,
                    "bbox": list(v.bbox), "attributes": objects[v.index].attributes(),
                    "affordances": objects[v.index].affordances, "description": objects[v.index].description,
                } for v in sorted(visible, key=lambda v: objects[v.index].gt_track)],
                "relations": [list(r) for r in relations if r[0] in seen and r[2] in seen],
            }
            boxes += len(visible)
            ann_frames.append(frame)
            ann_lines.append(json.dumps(frame, separators=(",", ":")))
            if log_progress and time.monotonic() - last_log > 5.0:
                last_log = time.monotonic()
                log.info("rendered %d/%d frames (%.0f%%)", k + 1, len(t_cam), 100.0 * (k + 1) / len(t_cam))
        write_events_until(float("inf"))
    finally:
        bag.close()
    (out / "annotations.jsonl").write_text("\n".join(ann_lines) + "\n")
    questions = make_questions(world, ann_frames, seed, fps, minutes)
    (out / "questions.json").write_text(
        '{"questions": [\n' + ",\n".join(json.dumps(q) for q in questions) + "\n]}\n")
    world_json = world.to_json()
    world_json.update({"world_seed": int(world_seed), "tour_seed": int(seed), "varied": bool(varied), "moved": moved,
                       "duration_s": duration, "camera_offset": [ox, oy]})
    if (camera_height_m, hfov_deg) != (CAMERA_HEIGHT_M, HFOV_DEG):  # default tours keep their bytes
        world_json.update({"camera_height_m": float(camera_height_m), "hfov_deg": float(hfov_deg)})
    if depth and depth_noise != 1.0:
        world_json["depth_noise"] = float(depth_noise)
    if pose_error != 1.0:
        world_json["pose_error"] = float(pose_error)
    (out / "world.json").write_text(json.dumps(world_json, indent=1) + "\n")
    summary = SimSummary(out, len(t_cam), len(t_pose), len(world.objects), moved,
                         [r.kind for r in world.rooms], boxes, len(questions),
                         dict(Counter(q["type"] for q in questions)), duration, _dir_size(out),
                         time.monotonic() - started)
    log.info("tour %s: %d frames, %d objects, %d questions in %.1f s", out, summary.frames,
             summary.objects, summary.questions, summary.seconds)
    return summary


def true_camera_xy(tour_dir: str | Path, stamps_ns: list[int]) -> list[tuple[float, float]]:
    """The simulator's true camera position at each stamp of a generated tour (for benchmarks)."""
    meta = json.loads((Path(tour_dir) / "world.json").read_text())
    seed = int(meta["tour_seed"])
    world = build_world(int(meta["world_seed"]), bool(meta.get("varied", False)))
    move_objects_in(world, len(meta.get("moved", [])), seed)
    traj = walk(world, float(meta["duration_s"]), seed)
    epoch = EPOCH_NS + (seed % 1000) * 86_400 * 1_000_000_000
    x, y, _, _ = traj.at(np.array([(s - epoch) / 1e9 for s in stamps_ns]))
    return list(zip(x.tolist(), y.tolist()))


def _base_from_camera(x: np.ndarray, y: np.ndarray, yaw: np.ndarray, ox: float, oy: float) -> tuple[np.ndarray, np.ndarray]:
    """The robot's centre from the camera's place: the mount offset (ox forward, oy left) taken back."""
    c, s = np.cos(yaw), np.sin(yaw)
    return x - c * ox + s * oy, y - s * ox - c * oy


def _compose(a: tuple, b: tuple) -> tuple[float, float, float]:
    """Planar rigid transforms (x, y, yaw): a then b."""
    c, s = math.cos(a[2]), math.sin(a[2])
    return (a[0] + c * b[0] - s * b[1], a[1] + s * b[0] + c * b[1], a[2] + b[2])


def _inverse(a: tuple) -> tuple[float, float, float]:
    c, s = math.cos(a[2]), math.sin(a[2])
    return (-c * a[0] - s * a[1], s * a[0] - c * a[1], -a[2])


def _tf_events(traj, duration: float, t_pose: np.ndarray, sx: np.ndarray, sy: np.ndarray, syaw: np.ndarray,
               ox: float, oy: float, to_ns) -> list[tuple[int, int, tuple]]:
    """/tf (odom -> base_link, map -> odom) and /odom messages, as (log_ns, kind, payload).
    Odometry is the true motion seen through a slowly drifting odom frame; SLAM's map -> odom is
    the correction that puts its latest estimate (the /pose samples ``s*``) where odometry was
    then, so the chain gives SLAM's accuracy at odometry's rate."""
    def odom_at(times: np.ndarray) -> list[tuple[float, float, float]]:
        cx, cy, cyaw, _ = traj.at(times)
        bx, by = _base_from_camera(cx, cy, cyaw, ox, oy)
        return [_compose((ODOM_DRIFT_M_S[0] * t, ODOM_DRIFT_M_S[1] * t, ODOM_DRIFT_YAW_RAD_S * t), (x, y, yaw))
                for t, x, y, yaw in zip(times, bx, by, cyaw)]

    def quat(yaw: float) -> tuple[float, float, float, float]:
        return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))

    out: list[tuple[int, int, tuple]] = []
    t_odom = np.arange(0.0, duration + 1e-9, 1.0 / ODOM_TF_HZ)
    for k, (t, o) in enumerate(zip(t_odom, odom_at(t_odom))):
        stamp = to_ns(t)
        out.append((stamp + 2_000_000, 2, ((stamp, ODOM_FRAME, BASE_FRAME, (o[0], o[1], 0.0), quat(o[2])),)))
        if k % int(round(ODOM_TF_HZ / ODOM_HZ)) == 0:
            out.append((stamp + 3_000_000, 3, (stamp, o[0], o[1], o[2])))
    odom_at_slam = odom_at(np.asarray(t_pose))
    t_map = np.arange(0.0, duration + 1e-9, 1.0 / MAP_TF_HZ)
    for t in t_map:
        k = max(0, int(np.searchsorted(t_pose, t, side="right")) - 1)  # the latest SLAM estimate
        m = _compose((float(sx[k]), float(sy[k]), float(syaw[k])), _inverse(odom_at_slam[k]))
        stamp = to_ns(t)
        out.append((stamp + 4_000_000, 2, ((stamp, MAP_FRAME, ODOM_FRAME, (m[0], m[1], 0.0), quat(m[2])),)))
    return out


def move_objects_in(world, count: int, seed: int) -> list[str]:
    """Apply ``--move-objects`` (kept apart so the parameter name can shadow the function)."""
    return move_objects(world, count, seed)
