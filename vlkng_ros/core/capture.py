"""Capture: which camera frames become keyframes, and which pose each keyframe gets.

The paper keeps every N-th frame. Here a frame is kept when it is useful: enough time passed and
the robot moved or turned, or the view changed (thumbnail difference), with blurred frames
rejected and a maximum interval so a parked robot still refreshes its memory now and then.

Nothing the camera saw may be lost for want of a keyframe (a memory must hold what the robot
passed), so two kinds of frame are held back instead of dropped:
- a frame worth keeping but motion-blurred (a fast turn) is a *candidate*: a sharp frame soon after
  replaces it, else it is kept after ``blur_wait_s``, or as soon as the camera turned
  ``blur_max_turn_deg`` since the last keyframe, so a turn leaves a keyframe at least every that
  many degrees (the sharpest-and-newest candidate; a spinning robot does not get one per frame);
- the newest frame that was not kept: when the stream ends (``flush``: a bag's end, a live node
  stopped or its camera idle) nothing comes after it to show what it shows, so it is kept when it
  moved, turned or changed ``flush_fraction`` of the usual thresholds since the last keyframe. A
  robot that stopped on its last keyframe's view gives no extra keyframe.
Things only glimpsed between two keyframes (one or two frames at the image's edge, sooner than
``min_interval_s``) stay a limit of any stride: bench/bench_coverage.py counts them.
Poses come from SLAM (slower than the camera, not in step): a frame gets the pose interpolated
between the two poses around its stamp, or the nearest one, and NO pose when the nearest pose is
older/newer than ``pose_max_age_s`` (never a made-up one).
"""

from __future__ import annotations

import bisect
import logging
import math
from dataclasses import dataclass, field
from typing import Any

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
class Held:
    """A frame the selector holds back and may keep later (a blurred candidate, the stream's last
    frame). ``payload``: whatever the caller passed with it (frame id, depth), handed back."""

    stamp_ns: int
    rgb: np.ndarray
    pose: Pose | None
    payload: Any = None
    reason: str = ""
    sharpness: float = 0.0
    thumb: np.ndarray | None = None
    since_ns: int = 0  # a candidate: when the first candidate of its wait was seen


@dataclass
class Decision:
    keep: bool
    reason: str
    sharpness: float = 0.0
    novelty: float = 0.0
    released: list[Held] = field(default_factory=list)  # earlier frames kept now, before this one


def _small_gray(rgb: np.ndarray) -> np.ndarray:
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) if rgb.ndim == 3 else rgb
    return cv2.resize(gray, SHARPNESS_SIZE, interpolation=cv2.INTER_AREA)


def _sharpness(small: np.ndarray) -> float:
    return float(cv2.Laplacian(small, cv2.CV_32F).var())


def _thumb(small: np.ndarray) -> np.ndarray:
    return cv2.resize(small, THUMB_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)


def _turn_deg(a: Pose | None, b: Pose | None) -> float:
    if a is None or b is None:
        return 0.0
    return abs(math.degrees(math.atan2(math.sin(b.yaw - a.yaw), math.cos(b.yaw - a.yaw))))


def _moved_m(a: Pose | None, b: Pose | None) -> float:
    return 0.0 if a is None or b is None else math.hypot(b.x - a.x, b.y - a.y)


class KeyframeSelector:
    """Stateful keyframe decision for one camera stream (see module docstring).

    ``consider`` decides on each frame as it comes; a frame may also be kept later, returned in a
    decision's ``released`` (a blurred candidate whose wait ran out) or by ``flush`` at the end of
    the stream. The caller stores released frames before the current one (stamps stay in order)."""

    def __init__(self, cfg: CaptureConfig) -> None:
        self.cfg = cfg
        self._last_stamp: int | None = None
        self._last_pose: Pose | None = None
        self._last_thumb: np.ndarray | None = None
        self._sharpness_history: list[float] = []
        self._held: Held | None = None  # the best blurred candidate, waiting for a sharp frame
        self._tail: Held | None = None  # the newest frame not kept: kept at the end if it is new

    def reset(self) -> None:
        self.__init__(self.cfg)  # type: ignore[misc]

    def _commit(self, frame: Held) -> None:
        self._last_stamp = frame.stamp_ns
        self._last_pose = frame.pose if frame.pose is not None else self._last_pose
        self._last_thumb = frame.thumb
        if self._tail is not None and self._tail.stamp_ns <= frame.stamp_ns:
            self._tail = None

    def _trigger(self, stamp_ns: int, pose: Pose | None, novelty: float, scale: float = 1.0) -> str:
        """Why this frame is worth keeping after the last keyframe ("" when it is not); ``scale``
        multiplies the thresholds."""
        cfg = self.cfg
        if self._last_stamp is None:
            return "first frame"
        if (stamp_ns - self._last_stamp) / NS >= cfg.max_interval_s:
            return "max interval"
        if (_moved_m(self._last_pose, pose) >= scale * cfg.min_translation_m
                or _turn_deg(self._last_pose, pose) >= scale * cfg.min_rotation_deg):
            return "moved"
        if novelty >= scale * cfg.novelty_threshold:
            return "new view"
        return ""

    def _novelty(self, thumb: np.ndarray) -> float:
        if self._last_thumb is None:
            return 1.0
        return float(np.mean(np.abs(thumb - self._last_thumb)) / 64.0)

    def consider(self, stamp_ns: int, rgb: np.ndarray, pose: Pose | None, payload: Any = None) -> Decision:
        cfg = self.cfg
        if self._last_stamp is not None and stamp_ns <= self._last_stamp - NS:
            log.warning("image stamps jumped back %.2f s: restarting keyframe selection",
                        (self._last_stamp - stamp_ns) / NS)
            self.reset()
        frame = Held(stamp_ns, rgb, pose, payload)
        since = None if self._last_stamp is None else (stamp_ns - self._last_stamp) / NS
        if since is not None and since < cfg.min_interval_s:
            self._tail = frame
            return Decision(False, "too soon")
        small = _small_gray(rgb)
        sharpness = _sharpness(small)
        history = self._sharpness_history
        typical = float(np.median(history)) if len(history) >= 5 else sharpness
        history.append(sharpness)
        del history[:-50]
        # Absolute floor (nothing to see: a covered lens, a blank wall), and relative to what this
        # camera usually gives (a soft-focus camera must not have every frame rejected): blurred
        # well below its own typical sharpness (motion blur), a candidate when worth keeping.
        if sharpness < cfg.blur_threshold:
            return Decision(False, "blurred", sharpness)
        blurred = sharpness < 0.4 * typical
        frame.sharpness = sharpness
        frame.thumb = _thumb(small)
        novelty = self._novelty(frame.thumb)
        reason = self._trigger(stamp_ns, pose, novelty)
        released: list[Held] = []
        held = self._held
        if held is not None and not (reason and not blurred):
            # no sharp frame came to replace the candidate: keep it once it waited long enough, or
            # once the camera turned so far that waiting longer leaves a gap between keyframes
            if ((stamp_ns - held.since_ns) / NS >= cfg.blur_wait_s
                    or _turn_deg(self._last_pose, pose) >= cfg.blur_max_turn_deg):
                self._held = None
                self._commit(held)
                released.append(held)
                if (stamp_ns - held.stamp_ns) / NS < cfg.min_interval_s:
                    self._tail = frame
                    return Decision(False, "too soon", sharpness, novelty, released)
                novelty = self._novelty(frame.thumb)
                reason = self._trigger(stamp_ns, pose, novelty)
        if not reason:
            self._tail = frame
            return Decision(False, "redundant", sharpness, novelty, released)
        if blurred:
            # worth keeping but blurred: hold it as the candidate (a sharp frame soon replaces it)
            frame.reason = f"{reason}, blurred"
            if self._held is None:
                frame.since_ns = stamp_ns
                self._held = frame
            elif sharpness >= 0.9 * self._held.sharpness:  # as sharp: the newer view
                frame.since_ns = self._held.since_ns
                self._held = frame
            self._tail = frame
            return Decision(False, "blurred", sharpness, novelty, released)
        self._held = None  # a sharp keyframe covers the candidate's view
        frame.reason = reason
        self._commit(frame)
        return Decision(True, reason, sharpness, novelty, released)

    def flush(self) -> list[Held]:
        """The stream ended: the frames still worth keeping, oldest first. A waiting candidate is
        kept (no sharper frame will come), then the last frame when it moved, turned or changed
        ``flush_fraction`` of the thresholds since the last keyframe: nothing comes after it to
        show what it shows. A stream that ended on the last keyframe's view gives nothing."""
        out: list[Held] = []
        if self._held is not None:
            held, self._held = self._held, None
            self._commit(held)
            out.append(held)
        tail, self._tail = self._tail, None
        if tail is not None and (self._last_stamp is None or tail.stamp_ns > self._last_stamp):
            if tail.thumb is None:  # a frame that came too soon was never looked at
                small = _small_gray(tail.rgb)
                tail.sharpness = _sharpness(small)
                tail.thumb = _thumb(small)
            if tail.sharpness < self.cfg.blur_threshold:
                return out  # nothing to see in it
            scale = self.cfg.flush_fraction
            reason = self._trigger(tail.stamp_ns, tail.pose, self._novelty(tail.thumb), scale)
            if reason:
                tail.reason = f"end of stream ({reason})"
                self._commit(tail)
                out.append(tail)
        return out
