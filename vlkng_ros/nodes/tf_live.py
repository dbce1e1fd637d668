"""Live TF for the capture node: ``tf2_ros`` where installed (every robot), else this project's
own buffer (:mod:`vlkng_ros.core.tf`) fed from ``/tf`` and ``/tf_static`` when the
``tf2_msgs`` message package is importable (the venv's tests build a test-only copy of it).

Both give ``pose(stamp_ns, camera_frame)`` (the camera's pose in the map frame, or None with
``last_error`` saying why), ``ready(stamp_ns, camera_frame)`` (the chain is known at that
stamp, so a frame need not wait longer) and ``lookup(target, source, stamp_ns)`` (any transform,
e.g. a LiDAR's mount for its point cloud; ValueError saying why not).
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from ..core.model import Pose
from ..core.poses import TfPoses
from ..core.tf import Transform, TransformBuffer, TransformUnavailable, camera_pose

TF_TOPIC, TF_STATIC_TOPIC = "/tf", "/tf_static"
# /tf comes at odometry's rate, several transforms a second per edge, 4x that in a 4x replay: a
# busy process that takes them in late (a saturated CPU) must not lose them from a short reader
# queue (tf2_ros's default, 100, is under a second of a 4x replay; measured: 713 of 1353 kept at 4x
# on a saturated 2-core machine, all 1353 with 1000; bench/bench_capture_live.py --stress 6)
TF_QUEUE_DEPTH = 1000


class OwnBufferTf:
    """This project's buffer, fed by ``tf2_msgs/msg/TFMessage`` subscriptions."""

    kind = "vlkng buffer on /tf, /tf_static"

    def __init__(self, node: Any, map_frame: str, tf_message_type: Any, cache_s: float = 30.0,
                 max_gap_s: float = 1.0) -> None:
        self.map_frame = map_frame
        self.buffer = TransformBuffer(cache_s, max_gap_s)
        self._poses = TfPoses(self.buffer, map_frame)
        self._lock = threading.Lock()
        group = MutuallyExclusiveCallbackGroup()  # transforms come in while an image is decoded
        self.subs = [
            node.create_subscription(tf_message_type, TF_TOPIC, lambda m: self._on_tf(m, False), QoSProfile(depth=TF_QUEUE_DEPTH),
                                     callback_group=group),
            node.create_subscription(tf_message_type, TF_STATIC_TOPIC, lambda m: self._on_tf(m, True),
                                     QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                                reliability=ReliabilityPolicy.RELIABLE), callback_group=group),
        ]
        self._logger = node.get_logger()

    def _on_tf(self, msg: Any, static: bool) -> None:
        with self._lock:
            self._add(msg, static)

    def _add(self, msg: Any, static: bool) -> None:
        for ts in msg.transforms:
            tr, rot = ts.transform.translation, ts.transform.rotation
            try:
                self.buffer.set_transform(ts.header.frame_id, ts.child_frame_id,
                                          int(ts.header.stamp.sec) * 1_000_000_000 + int(ts.header.stamp.nanosec),
                                          (tr.x, tr.y, tr.z), (rot.x, rot.y, rot.z, rot.w), static=static)
            except ValueError as e:
                self._logger.warning(f"transform ignored: {e}", throttle_duration_sec=10.0)

    def connected(self, camera_frame: str) -> bool:
        with self._lock:
            return self.buffer.connected(self.map_frame, camera_frame)

    def ready(self, stamp_ns: int, camera_frame: str) -> bool:
        with self._lock:
            return self.buffer.can_transform(self.map_frame, camera_frame, stamp_ns)

    @property
    def last_error(self) -> str:
        return self._poses.last_error

    def pose(self, stamp_ns: int, camera_frame: str) -> Pose | None:
        with self._lock:
            return self._poses.lookup(stamp_ns, camera_frame)

    def lookup(self, target: str, source: str, stamp_ns: int) -> Transform:
        """``target <- source`` at the stamp (maps source points into target); ValueError why not."""
        with self._lock:
            try:
                return self.buffer.lookup(target, source, stamp_ns)
            except TransformUnavailable as e:
                raise ValueError(str(e)) from e

    def destroy(self, node: Any) -> None:
        for sub in self.subs:
            node.destroy_subscription(sub)


class Tf2RosTf:  # pragma: no cover - needs tf2_ros (a robot with ROS 2 from apt); not installable here
    """``tf2_ros.Buffer`` + ``TransformListener``: what a robot has."""

    kind = "tf2_ros"

    def __init__(self, node: Any, map_frame: str, tf2_ros: Any) -> None:
        from rclpy.duration import Duration

        self.map_frame = map_frame
        self.buffer = tf2_ros.Buffer(cache_time=Duration(seconds=30.0))
        self.listener = tf2_ros.TransformListener(self.buffer, node, spin_thread=False,
                                                  qos=QoSProfile(depth=TF_QUEUE_DEPTH))
        self.last_error = ""

    @staticmethod
    def _time(stamp_ns: int) -> Any:
        from rclpy.time import Time

        return Time(nanoseconds=int(stamp_ns))

    def connected(self, camera_frame: str) -> bool:
        from rclpy.time import Time

        return bool(camera_frame) and self.buffer.can_transform(self.map_frame, camera_frame, Time())

    def ready(self, stamp_ns: int, camera_frame: str) -> bool:
        return self.buffer.can_transform(self.map_frame, camera_frame, self._time(stamp_ns))

    def pose(self, stamp_ns: int, camera_frame: str) -> Pose | None:
        try:
            tr = self.lookup(self.map_frame, camera_frame, stamp_ns)
        except ValueError as e:
            self.last_error = str(e)
            return None
        return camera_pose(tr, camera_frame, self.map_frame)

    def lookup(self, target: str, source: str, stamp_ns: int) -> Transform:
        try:
            ts = self.buffer.lookup_transform(target, source, self._time(stamp_ns))
        except Exception as e:  # tf2.LookupException / ExtrapolationException / ConnectivityException
            raise ValueError(f"{type(e).__name__}: {e}") from e
        tr, rot = ts.transform.translation, ts.transform.rotation
        return Transform((tr.x, tr.y, tr.z), (rot.x, rot.y, rot.z, rot.w))

    def destroy(self, node: Any) -> None:
        self.listener.unregister()


def make_live_tf(node: Any, map_frame: str, max_gap_s: float = 1.0) -> tuple[Any | None, str]:
    """(TF source, '') or (None, why there is none)."""
    try:
        import tf2_ros  # noqa: F401
    except ImportError:
        tf2_ros = None
    if tf2_ros is not None:  # pragma: no cover - a robot
        return Tf2RosTf(node, map_frame, tf2_ros), ""
    try:
        from tf2_msgs.msg import TFMessage
    except ImportError:
        return None, "neither tf2_ros nor tf2_msgs is installed"
    return OwnBufferTf(node, map_frame, TFMessage, max_gap_s=max_gap_s), ""
