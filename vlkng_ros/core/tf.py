"""A minimal transform buffer (this project's own code, no tf2): where was the camera at a stamp?

A robot publishes its frame tree on ``/tf`` (``map -> odom`` from SLAM, ``odom -> base_link``
from odometry, at their own rates) and ``/tf_static`` (``base_link -> camera_link ->
camera_optical_frame``: the mounting). The camera's pose at an image stamp is the chain
``map -> <image header.frame_id>`` evaluated at that stamp: each dynamic edge interpolated
between its two samples around the stamp (linear in translation, slerp in rotation), static edges
as they are. A stamp outside an edge's samples is not extrapolated (as tf2 does not): the lookup
fails and says which edge was missing or too old.

On a robot the live path uses ``tf2_ros.Buffer`` where it is installed; this buffer serves bags
(``/tf`` + ``/tf_static``, tour-format v2) and the venv, which has no tf2 wheel. Both feed
:func:`camera_pose`, which turns ``map -> camera frame`` into the pose convention the rest of
vlkng uses (x forward, y left, z up: REP 103 body axes), so an optical frame (z forward, x right,
y down: REP 103 ``_optical`` frames) gives the heading the lens looks along.
"""

from __future__ import annotations

import bisect
import logging
import math
from dataclasses import dataclass

from .model import Pose

log = logging.getLogger("vlkng.tf")

NS = 1_000_000_000
Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # x, y, z, w


# --- quaternion / rigid transform algebra ---------------------------------------------------
def q_mul(a: Quat, b: Quat) -> Quat:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def q_conj(q: Quat) -> Quat:
    return (-q[0], -q[1], -q[2], q[3])


def q_normalized(q: Quat) -> Quat:
    n = math.sqrt(sum(v * v for v in q))
    if not math.isfinite(n) or n < 1e-9:
        raise ValueError(f"quaternion {q} has no direction")
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def q_rotate(q: Quat, v: Vec3) -> Vec3:
    x, y, z, _ = q_mul(q_mul(q, (v[0], v[1], v[2], 0.0)), q_conj(q))
    return (x, y, z)


def q_slerp(a: Quat, b: Quat, t: float) -> Quat:
    dot = sum(x * y for x, y in zip(a, b))
    if dot < 0.0:  # the shorter way round
        b, dot = (-b[0], -b[1], -b[2], -b[3]), -dot
    if dot > 0.9995:
        return q_normalized(tuple(x + (y - x) * t for x, y in zip(a, b)))  # type: ignore[arg-type]
    theta = math.acos(min(1.0, dot))
    s = math.sin(theta)
    wa, wb = math.sin((1.0 - t) * theta) / s, math.sin(t * theta) / s
    return tuple(wa * x + wb * y for x, y in zip(a, b))  # type: ignore[return-value]


def q_from_rpy(roll: float, pitch: float, yaw: float) -> Quat:
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


def q_from_matrix(cols: tuple[Vec3, Vec3, Vec3]) -> Quat:
    """Quaternion of the rotation whose columns are the rotated x, y, z axes."""
    (m00, m10, m20), (m01, m11, m21), (m02, m12, m22) = cols
    tr = m00 + m11 + m22
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        q = ((m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, 0.25 * s)
    elif m00 > m11 and m00 > m22:
        s = math.sqrt(1.0 + m00 - m11 - m22) * 2
        q = (0.25 * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s)
    elif m11 > m22:
        s = math.sqrt(1.0 + m11 - m00 - m22) * 2
        q = ((m01 + m10) / s, 0.25 * s, (m12 + m21) / s, (m02 - m20) / s)
    else:
        s = math.sqrt(1.0 + m22 - m00 - m11) * 2
        q = ((m02 + m20) / s, (m12 + m21) / s, 0.25 * s, (m10 - m01) / s)
    return q_normalized(q)


@dataclass(frozen=True)
class Transform:
    """Maps points of the child frame into the parent frame: p_parent = R p_child + t."""

    t: Vec3 = (0.0, 0.0, 0.0)
    q: Quat = (0.0, 0.0, 0.0, 1.0)

    def __mul__(self, other: "Transform") -> "Transform":
        r = q_rotate(self.q, other.t)
        return Transform((self.t[0] + r[0], self.t[1] + r[1], self.t[2] + r[2]), q_normalized(q_mul(self.q, other.q)))

    def inverse(self) -> "Transform":
        qi = q_conj(self.q)
        r = q_rotate(qi, self.t)
        return Transform((-r[0], -r[1], -r[2]), qi)

    def interpolate(self, other: "Transform", t: float) -> "Transform":
        return Transform(tuple(a + (b - a) * t for a, b in zip(self.t, other.t)),  # type: ignore[arg-type]
                         q_slerp(self.q, other.q, t))


class TransformUnavailable(LookupError):
    """A transform that cannot be given at that stamp; the message says which edge and why."""


class _Edge:
    """One parent -> child edge: a static transform, or time-stamped samples."""

    __slots__ = ("parent", "static", "stamps", "values", "max_gap_ns")

    def __init__(self, parent: str, max_gap_ns: int | None = None) -> None:
        self.parent = parent
        self.max_gap_ns = max_gap_ns
        self.static: Transform | None = None
        self.stamps: list[int] = []
        self.values: list[Transform] = []

    def at(self, stamp_ns: int, child: str) -> Transform:
        if self.static is not None:
            return self.static
        s = self.stamps
        if not s:
            raise TransformUnavailable(f"no transform {self.parent} -> {child} received yet")
        i = bisect.bisect_left(s, stamp_ns)
        if i < len(s) and s[i] == stamp_ns:
            return self.values[i]
        if i == 0:
            raise TransformUnavailable(f"{self.parent} -> {child} starts at {s[0]}, after the stamp {stamp_ns} "
                               f"({(s[0] - stamp_ns) / NS:.3f} s earlier than the first sample)")
        if i == len(s):
            raise TransformUnavailable(f"{self.parent} -> {child} is known up to {s[-1]}, not yet at {stamp_ns} "
                               f"(would extrapolate {(stamp_ns - s[-1]) / NS:.3f} s)")
        t0, t1 = s[i - 1], s[i]
        if self.max_gap_ns is not None and t1 - t0 > self.max_gap_ns:
            raise TransformUnavailable(f"{self.parent} -> {child} has a gap of {(t1 - t0) / NS:.2f} s around the "
                                       f"stamp {stamp_ns} (more than {self.max_gap_ns / NS:.2f} s: not interpolated)")
        return self.values[i - 1].interpolate(self.values[i], (stamp_ns - t0) / (t1 - t0))


class TransformBuffer:
    """Frame tree with time-stamped (``/tf``) and static (``/tf_static``) edges.

    ``cache_s``: dynamic samples older than this behind the newest one are dropped (tf2's
    default is 10 s; a live node waits ``pose_wait_s`` at most; a bag is read whole with
    ``cache_s=None``). A stamp that jumps back more than a second (a bag restarted) clears the
    dynamic history of that edge. ``max_gap_s``: two samples further apart than this are not
    interpolated between (lost data: the frames in the gap get no pose rather than a made-up one)."""

    def __init__(self, cache_s: float | None = 30.0, max_gap_s: float | None = 1.0) -> None:
        self.cache_ns = None if cache_s is None else int(cache_s * NS)
        self.max_gap_ns = None if max_gap_s is None else int(max_gap_s * NS)
        self._edges: dict[str, _Edge] = {}  # child -> edge

    def __len__(self) -> int:
        return len(self._edges)

    def frames(self) -> set[str]:
        return set(self._edges) | {e.parent for e in self._edges.values()}

    def set_transform(self, parent: str, child: str, stamp_ns: int, t: Vec3, q: Quat, static: bool = False) -> None:
        parent, child = parent.lstrip("/"), child.lstrip("/")
        if not parent or not child or parent == child:
            raise ValueError(f"transform {parent!r} -> {child!r}: needs two different frame names")
        if not all(math.isfinite(v) for v in (*t, *q)):
            raise ValueError(f"transform {parent} -> {child} at {stamp_ns} is not finite")
        value = Transform((float(t[0]), float(t[1]), float(t[2])), q_normalized(tuple(float(v) for v in q)))  # type: ignore[arg-type]
        edge = self._edges.get(child)
        if edge is None or edge.parent != parent:
            if edge is not None:
                log.warning("frame %s re-parented from %s to %s", child, edge.parent, parent)
            edge = self._edges[child] = _Edge(parent, self.max_gap_ns)
        if static:
            edge.static = value
            edge.stamps.clear()
            edge.values.clear()
            return
        edge.static = None
        s = edge.stamps
        if s and stamp_ns < s[-1] - NS:
            log.warning("%s -> %s: stamps jumped back %.2f s (bag restarted or clock reset): history cleared",
                        parent, child, (s[-1] - stamp_ns) / NS)
            s.clear()
            edge.values.clear()
        i = bisect.bisect_left(s, stamp_ns)
        if i < len(s) and s[i] == stamp_ns:
            edge.values[i] = value
        else:
            s.insert(i, stamp_ns)
            edge.values.insert(i, value)
        if self.cache_ns is not None and s[-1] - s[0] > self.cache_ns:
            cut = bisect.bisect_left(s, s[-1] - self.cache_ns)
            del s[:cut]
            del edge.values[:cut]

    def _chain(self, frame: str) -> list[str]:
        """``frame`` and its ancestors up to the root."""
        out = [frame]
        while out[-1] in self._edges:
            nxt = self._edges[out[-1]].parent
            if nxt in out:
                raise TransformUnavailable(f"the frame tree has a loop through {nxt}")
            out.append(nxt)
        return out

    def connected(self, target: str, source: str) -> bool:
        """The tree links the two frames (at some time; a lookup may still fail on the stamp)."""
        target, source = target.lstrip("/"), source.lstrip("/")
        if not target or not source:
            return False
        try:
            return any(f in self._chain(target) for f in self._chain(source))
        except TransformUnavailable:
            return False

    def lookup(self, target: str, source: str, stamp_ns: int) -> Transform:
        """The transform of ``source`` in ``target`` at ``stamp_ns`` (maps source points into target).
        Raises :class:`TransformUnavailable` naming what is missing."""
        target, source = target.lstrip("/"), source.lstrip("/")
        if target == source:
            return Transform()
        up_s, up_t = self._chain(source), self._chain(target)
        common = next((f for f in up_s if f in up_t), None)
        if common is None:
            known = ", ".join(sorted(self.frames())) or "none"
            raise TransformUnavailable(f"{target} and {source} are not connected (frames known: {known})")
        def to_common(chain: list[str]) -> Transform:
            acc = Transform()
            for child in chain[:chain.index(common)]:
                acc = self._edges[child].at(stamp_ns, child) * acc
            return acc
        return to_common(up_t).inverse() * to_common(up_s)

    def can_transform(self, target: str, source: str, stamp_ns: int) -> bool:
        try:
            self.lookup(target, source, stamp_ns)
            return True
        except TransformUnavailable:
            return False


def is_optical_frame(frame_id: str) -> bool:
    """REP 103: frames named ``*_optical_frame`` (or ``*_optical``) look along +z, x right, y down."""
    name = frame_id.lstrip("/").lower()
    return name.endswith("optical_frame") or name.endswith("_optical")


def camera_pose(map_to_camera: Transform, camera_frame: str, map_frame: str = "map") -> Pose:
    """The camera's pose in vlkng's convention (x forward, y left, z up) from ``map -> camera``.
    Roll and pitch are kept in the quaternion; ``Pose.yaw`` is the heading the lens looks along."""
    q = map_to_camera.q
    if is_optical_frame(camera_frame):
        forward, left, up = q_rotate(q, (0.0, 0.0, 1.0)), q_rotate(q, (-1.0, 0.0, 0.0)), q_rotate(q, (0.0, -1.0, 0.0))
        q = q_from_matrix((forward, left, up))
    t = map_to_camera.t
    return Pose(t[0], t[1], t[2], q[0], q[1], q[2], q[3], map_frame)


def pitch_down(pose: Pose) -> float:
    """How far (rad) the pose's forward axis looks below the horizontal."""
    fwd = q_rotate((pose.qx, pose.qy, pose.qz, pose.qw), (1.0, 0.0, 0.0))
    return math.asin(max(-1.0, min(1.0, -fwd[2])))
