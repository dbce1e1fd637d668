"""Capture: which camera frames become keyframes, and which pose each keyframe gets.

The paper keeps every N-th frame. Here a frame is kept when it is useful: enough time passed and
the robot moved or turned, or the view changed (thumbnail difference), with blurred frames
rejected and a maximum interval so a parked robot still refreshes its memory now and then.
Poses come from SLAM (slower than the camera, not in step): a frame gets the pose interpolated
between the two poses around its stamp, or the nearest one, and NO pose when the nearest pose is
older/newer than ``pose_max_age_s`` (never a made-up one).
"""

from __future__ import annotations

import bisect
import logging
import math
from dataclasses import dataclass

import cv2
import numpy as np

from .config import CaptureConfig
from .images import decode_image, encode_jpeg  # noqa: F401 - re-exported for older importers
from .model import Pose

log = logging.getLogger("vlkng.capture")

NS = 1_000_000_000
THUMB_SIZE = (64, 48)  # novelty is compared on thumbnails: cheap, and blind to noise
SHARPNESS_SIZE = (320, 240)  # blur is measured at one size, so the threshold holds for any camera


class PoseBuffer:
    """Time-indexed SLAM poses; lookups interpolate, or return None when too far in time."""

    def __init__(self, max_age_s: float, capacity: int = 20000) -> None:
        self.max_age_ns = int(max_age_s * NS)
        self.capacity = capacity
        self._stamps: list[int] = []
        self._poses: list[Pose] = []

    def __len__(self) -> int:
        return len(self._stamps)

    def add(self, stamp_ns: int, pose: Pose) -> None:
        if self._stamps and stamp_ns < self._stamps[-1] - NS:
            log.warning("pose stamps jumped back %.2f s (bag looped or clock reset): "
                        "clearing pose history", (self._stamps[-1] - stamp_ns) / NS)
            self._stamps.clear()
            self._poses.clear()
        i = bisect.bisect_left(self._stamps, stamp_ns)
        if i < len(self._stamps) and self._stamps[i] == stamp_ns:
            self._poses[i] = pose
            return
        self._stamps.insert(i, stamp_ns)
        self._poses.insert(i, pose)
        if len(self._stamps) > self.capacity:
            del self._stamps[: len(self._stamps) - self.capacity]
            del self._poses[: len(self._poses) - self.capacity]

    def lookup(self, stamp_ns: int) -> Pose | None:
        if not self._stamps:
            return None
        i = bisect.bisect_left(self._stamps, stamp_ns)
        before = i - 1 if i > 0 else None
        after = i if i < len(self._stamps) else None
        if after is not None and self._stamps[after] == stamp_ns:
            return self._poses[after]
        near_before = before is not None and stamp_ns - self._stamps[before] <= self.max_age_ns
        near_after = after is not None and self._stamps[after] - stamp_ns <= self.max_age_ns
        if near_before and near_after:
            t0, t1 = self._stamps[before], self._stamps[after]  # type: ignore[index]
            return interpolate_pose(self._poses[before], self._poses[after],  # type: ignore[index]
                                    (stamp_ns - t0) / (t1 - t0))
        if near_before:
            return self._poses[before]  # type: ignore[index]
        if near_after:
            return self._poses[after]  # type: ignore[index]
        return None


def interpolate_pose(a: Pose, b: Pose, t: float) -> Pose:
    """Linear in position, shortest-arc in yaw (planar robot); roll/pitch are not kept."""
    dyaw = math.atan2(math.sin(b.yaw - a.yaw), math.cos(b.yaw - a.yaw))
    p = Pose.from_xy_yaw(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.yaw + dyaw * t, a.frame_id)
    return Pose(p.x, p.y, a.z + (b.z - a.z) * t, p.qx, p.qy, p.qz, p.qw, a.frame_id)


@dataclass
class Decision:
    keep: bool
    reason: str
    sharpness: float = 0.0
    novelty: float = 0.0


class KeyframeSelector:
    """Stateful keyframe decision for one camera stream (see module docstring)."""

    def __init__(self, cfg: CaptureConfig) -> None:
        self.cfg = cfg
        self._last_stamp: int | None = None
        self._last_pose: Pose | None = None
        self._last_thumb: np.ndarray | None = None
        self._sharpness_history: list[float] = []

    def reset(self) -> None:
        self.__init__(self.cfg)  # type: ignore[misc]

    def consider(self, stamp_ns: int, rgb: np.ndarray, pose: Pose | None) -> Decision:
        cfg = self.cfg
        if self._last_stamp is not None and stamp_ns <= self._last_stamp - NS:
            log.warning("image stamps jumped back %.2f s: restarting keyframe selection",
                        (self._last_stamp - stamp_ns) / NS)
            self.reset()
        since = None if self._last_stamp is None else (stamp_ns - self._last_stamp) / NS
        if since is not None and since < cfg.min_interval_s:
            return Decision(False, "too soon")
        gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) if rgb.ndim == 3 else rgb
        small = cv2.resize(gray, SHARPNESS_SIZE, interpolation=cv2.INTER_AREA)
        sharpness = float(cv2.Laplacian(small, cv2.CV_32F).var())
        history = self._sharpness_history
        typical = float(np.median(history)) if len(history) >= 5 else sharpness
        history.append(sharpness)
        del history[:-50]
        # Absolute floor, and relative to what this camera usually gives (a soft-focus camera
        # must not have every frame rejected): blurred well below its own typical sharpness.
        if sharpness < cfg.blur_threshold or sharpness < 0.4 * typical:
            return Decision(False, "blurred", sharpness)
        thumb = cv2.resize(small, THUMB_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)
        novelty = 1.0 if self._last_thumb is None else float(
            np.mean(np.abs(thumb - self._last_thumb)) / 64.0)
        reason = ""
        if self._last_stamp is None:
            reason = "first frame"
        elif since is not None and since >= cfg.max_interval_s:
            reason = "max interval"
        elif pose is not None and self._last_pose is not None and (
                math.hypot(pose.x - self._last_pose.x, pose.y - self._last_pose.y) >= cfg.min_translation_m
                or abs(math.degrees(math.atan2(math.sin(pose.yaw - self._last_pose.yaw),
                                               math.cos(pose.yaw - self._last_pose.yaw))))
                >= cfg.min_rotation_deg):
            reason = "moved"
        elif novelty >= cfg.novelty_threshold:
            reason = "new view"
        if not reason:
            return Decision(False, "redundant", sharpness, novelty)
        self._last_stamp = stamp_ns
        self._last_pose = pose if pose is not None else self._last_pose
        self._last_thumb = thumb
        return Decision(True, reason, sharpness, novelty)
