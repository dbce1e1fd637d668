"""Which pose a frame gets: TF, ``/pose`` or ``/odom``, chosen by ``capture.pose_source``.

- ``tf``: the camera's pose at the image stamp, ``<map_frame> -> <image header.frame_id>``
  (mounting offset and pitch included; see :mod:`vlkng_ros.core.tf`);
- ``pose``: the robot's pose from SLAM (``pose_topic``, PoseWithCovarianceStamped in the map
  frame), interpolated around the stamp; the camera's mounting is then the configuration's;
- ``odom``: the robot's pose from odometry (``odom_topic``, nav_msgs/Odometry): drifts, in the
  ``odom`` frame; the fallback for a robot without SLAM;
- ``auto``: TF when the frame tree connects the map frame to the camera's frame, else ``/pose``
  when there is one, else ``/odom``.

A frame with no pose close enough in time gets none (never a made-up one).
"""

from __future__ import annotations

import logging
from typing import Callable

from .capture import PoseBuffer
from .model import Pose
from .tf import TransformBuffer, TransformUnavailable, camera_pose

log = logging.getLogger("vlkng.poses")

POSE_SOURCES = ("auto", "tf", "pose", "odom")


def check_pose_source(name: str) -> str:
    if name not in POSE_SOURCES:
        raise ValueError(f"capture.pose_source {name!r}: use one of {', '.join(POSE_SOURCES)}")
    return name


class TfPoses:
    """Camera poses from a transform buffer: ``lookup(stamp_ns, camera_frame)``."""

    def __init__(self, buffer: TransformBuffer, map_frame: str = "map") -> None:
        self.buffer = buffer
        self.map_frame = map_frame
        self.last_error = ""

    def connects(self, camera_frame: str) -> bool:
        """The tree links the map frame to ``camera_frame`` (at some time)."""
        return self.buffer.connected(self.map_frame, camera_frame)

    def lookup(self, stamp_ns: int, camera_frame: str) -> Pose | None:
        try:
            tf = self.buffer.lookup(self.map_frame, camera_frame, stamp_ns)
        except TransformUnavailable as e:
            self.last_error = str(e)
            return None
        return camera_pose(tf, camera_frame, self.map_frame)


class TopicPoses:
    """Robot poses from a pose topic (``/pose`` or ``/odom``); the frame id is not used."""

    def __init__(self, poses: PoseBuffer) -> None:
        self.poses = poses

    def lookup(self, stamp_ns: int, camera_frame: str = "") -> Pose | None:
        return self.poses.lookup(stamp_ns)


Lookup = Callable[[int, str], "Pose | None"]


def choose_source(requested: str, has_tf: Callable[[], bool], has_pose: bool, has_odom: bool) -> str:
    """The source ``auto`` stands for (or the requested one): '' when nothing gives poses."""
    check_pose_source(requested)
    if requested != "auto":
        return requested
    if has_tf():
        return "tf"
    if has_pose:
        return "pose"
    if has_odom:
        return "odom"
    return ""
