"""Where to send the robot for an object: a goal pose Nav2 can reach (the one home of goal geometry).

The object's estimated centre is inside the object (a sofa, a wardrobe): a planner refuses it
or stops short wherever its costmap allows. The goal is instead a pose in free space:

- on the **side it was seen from**: on the line from the object's centre toward a camera pose of
  a keyframe that shows it. The camera saw the object from there, so the line of sight between
  them was free space; a goal on that segment (or the camera pose itself, when the camera was
  closer than the stand-off) is a place the robot has already been or looked through;
- at a **stand-off** that keeps the robot's disc (``ask.robot_radius_m``) plus a clearance
  (``ask.goal_clearance_m``) off the object's near side ALONG THAT LINE, not off its largest
  extent (a 2 x 0.9 m sofa approached from the front needs 0.45 m, not half its diagonal):
  - with depth, the near side is measured: the object's readings in that keyframe's depth
    (``depth.object_points``), projected on the line, their FRONT_PERCENTILE-th is its near
    surface; every part of the object, seen or hidden behind what was seen, lies beyond it, so the
    goal is outside the object whichever way it is turned (``View.front_m``);
  - without depth (or where the box was cut by the image border), the object's half extent along
    the line is half the width it showed from views roughly perpendicular to it (the width seen
    across a view is the extent along the perpendicular: ``along_half_extent``);
  - when neither exists, its footprint radius (``object_radius``: half the depth-measured
    footprint's diagonal, else half a wide view's width), as large as it is in any direction;
- where depth saw what stood around (``View.obstacles``), moved back along the line toward the
  camera until the robot's disc clears what ANY of the object's views saw (one view's image may
  miss the desk corner another showed; each view read at the camera height its floor gave, or the
  views' median where that disagrees: ``camera_heights``); where that line is blocked, the line turned about the
  object by +-FAN_DEG (every 15 deg up to 90) gives nearer candidates, each only where that
  camera saw free floor (``fan_standoff``): beside a chair in front of the object rather than
  1.6 m back behind it;
- toward the view whose goal is nearest the object's centre: a camera that stood nearer than its
  stand-off is itself a candidate (the robot was there), so a long object passed at its side gets
  the goal there, not one off its end that a wide object needs (a 1.9 m piano seen end-on needs
  1.6 m; the robot's pose beside it was 0.7 m off);
- with depth, **all round** the object (``ring_goal``): every RING_DEG about its centre, the nearest
  stand-off whose robot disc clears the readings and lies outside the measured footprint
  (``Footprint``: its surface points' extent, an octagon in map coordinates, taken as the box of
  its sides), where a camera saw the floor free: a bed seen from its foot gets a goal beside its
  long side, half its width plus the disc off (the footprint itself, not only its readings: a
  plant's foliage gives too few, a camera that passed it dropped them: ``stood_free``);
  where views saw one end of an axis only, the object may reach as far beyond its centre as the
  seen face lies before it, and the disc keeps off that too (``Footprint.hidden``: a chair's back);
  "seen free" is also where a view's depth read the floor at the goal and at its disc's edge toward
  the object (``floor_seen``, ``depth.FloorSight``: the rays passed above a pouf or beside a sofa whose
  readings lay on the 2D segment from the camera);
  the footprint of what the object rests on (``answer.supports_of``: the sofa under a cushion)
  keeps the goal's centre off it (its top is read too sparsely to block it; ``Footprint.clear``);
  a line's stand-off moves back along it until the disc clears the footprints too;
- the disc off the footprint **where that is within reach**: a measured footprint may reach out
  too far (a counter's took in the chairs before it, a tv stand's the sofa), so where no such
  candidate lies within ``ask.goal_max_from_object_m``, the candidates whose centre merely lies
  outside the measured octagon are ranked as below (what they always were);
- clear AND within reach first (``goal_rank``): a goal has to be a place to stand and near enough
  to see and reach the object (``ask.goal_max_from_object_m`` from its centre); where every clear
  candidate lies beyond that, the line's blocked stand-off within it is sent (the planner stops
  short, still near the object) rather than a clear spot too far to see it from (a kettle in a
  0.5 m gap: 0.75 m, not 1.85 m back); beyond reach, clear before blocked;
- **facing** the object.

Without a view pose the goal is the object's centre (the planner's tolerance must do the rest);
without an object position, the best frame's pose (where it was seen from).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from .geometry import BORDER_PX, HULL_DIRS, RayAccumulator, cut_by_border, object_footprint
from .model import CameraModel, ObjectNode, Pose

if TYPE_CHECKING:
    from .ask.graph_retrieval import Subgraph
    from .depth import FloorSight
    from .ask.types import RankedFrame
    from .memory import Memory

MAX_VIEWS = 16  # keyframes read per goal (spread over the object's sightings)
MIN_FOOTPRINT_RADIUS_M = 0.1
MAX_FOOTPRINT_RADIUS_M = 1.5
DEFAULT_FOOTPRINT_RADIUS_M = 0.3  # no usable view to measure it from
WIDTH_QUANTILE = 0.75  # an object looks narrower end-on: take a wide view, not the narrowest
PERPENDICULAR_TOLERANCE_DEG = 25.0  # a view this near perpendicular to the approach shows the extent along it
MIN_PERPENDICULAR_VIEWS = 2  # ... and at least this many (one may show it part-hidden, or from a wrong centre)
FRONT_PERCENTILE = 10.0  # the near surface along the approach: this percentile of the object's depth readings
OBSTACLE_MARGIN_M = 0.05  # the robot's disc at the goal keeps this much beyond its radius off what depth saw
STEP_M = 0.05
MIN_OBSTACLE_POINTS = 3
FAN_DEG = (15.0, 30.0, 45.0, 60.0, 75.0, 90.0)  # a depth view's line of sight turned about the object's
# centre by +-these, up to perpendicular: more candidate goals, each where that view saw free floor (``fan_standoff``)
SEEN_HALF_ANGLE_DEG = 30.0  # a fan goal lies within this of the camera's heading (inside any usual field of view)
SEEN_CORRIDOR_M = 0.1  # ... and no reading lies within this of the segment from the camera to it (nothing hid it)
SEEN_RANGE_M = 4.0  # ... nor farther from the camera than depth.obstacle_points reads obstacles
RING_DEG = 15.0  # with depth, candidate goals all round the object: directions this far apart, each where a
# camera saw free floor, outside the measured footprints, the robot's disc clear of what depth saw (``ring_goal``)
RING_CHUNK = 64  # ... checked nearest first, this many at a time
FLOOR_AGREE_M = 0.08  # views' camera heights farther than this from their median are not the floor's (the
# obstacle readings start this high above it: a height off by more classes the floor as what the robot would bump)
FRONT_BEYOND_M = 0.25  # a near surface measured farther than this beyond the estimated centre is not the
# object's (the background through a table's legs, another object): that view measured nothing


@dataclass(frozen=True)
class View:
    """A keyframe camera pose that saw the object, with what it measured of it."""

    pose: Pose
    width_m: float | None = None  # how wide the object looked from here (m); None: not measured
    front_m: float | None = None  # depth: distance (m) from here to the object's near surface, along
    # the line toward its estimated centre; None: not measured
    obstacles: np.ndarray | None = None  # depth: (N, 2) map points of what stood in this keyframe's view
    # (``depth.obstacle_points``); None: not measured
    floor: "FloorSight | None" = None  # depth: where this keyframe's camera saw the floor (``depth.FloorSight``);
    # None: not known (the 2D test alone says what it saw free: ``corridor_free``)


@dataclass(frozen=True)
class Footprint:
    """Where an object stands, as depth measured it: the extent (``lo``, ``hi``) of its surface points
    along each of ``geometry.HULL_DIRS`` (``RayAccumulator.add_points``), an octagon around it in
    the map plane that is where it is, whatever its estimated centre says."""

    lo: np.ndarray
    hi: np.ndarray
    far_lo: np.ndarray | None = None  # where the object may reach beyond what was measured (``of``)
    far_hi: np.ndarray | None = None
    support: bool = False

    def clear(self, clearance_m: float) -> float:
        """How far outside this footprint a goal keeps: ``clearance_m`` (the robot's disc) off the
        object's own, its centre merely outside what the object rests on (a counter's or a sofa's
        top reads with what stands on and before it: the disc kept off it stood on the chairs at
        the counter)."""
        return 0.0 if self.support else clearance_m

    @classmethod
    def of(cls, ray_stats: list[float] | None, centre: tuple[float, float] | None = None,
           support: bool = False) -> "Footprint | None":
        """The footprint in an object's stored sums; None where depth kept no surface points (a
        memory built without depth never has one). With its ``centre``: along an axis whose faces
        views saw at one end only (``RayAccumulator.hull_bounds``), the object may reach as far
        beyond the centre as the seen face lies before it (the back of a chair no camera saw)."""
        acc = RayAccumulator(ray_stats) if ray_stats else None
        if acc is None or acc.hull_n <= 0 or np.any(acc.hull_hi < acc.hull_lo):
            return None
        lo, hi = np.array(acc.hull_lo, dtype=float), np.array(acc.hull_hi, dtype=float)
        bounds = acc.hull_bounds()
        if centre is None or bounds is None:
            return cls(lo, hi, support=support)
        c, side = HULL_DIRS @ np.asarray(centre, dtype=float), bounds[3]
        far_hi = np.where(side > 0, np.clip(2.0 * c - lo, hi, lo + 2.0 * MAX_FOOTPRINT_RADIUS_M), hi)
        far_lo = np.where(side < 0, np.clip(2.0 * c - hi, hi - 2.0 * MAX_FOOTPRINT_RADIUS_M, lo), lo)
        return cls(lo, hi, far_lo, far_hi, support)

    def hidden(self) -> np.ndarray:
        """(N, 2) points STEP_M apart where the object may stand unseen: inside its far extent
        (``of``), outside what was measured; none without a far extent."""
        if self.far_lo is None or self.far_hi is None:
            return np.zeros((0, 2))
        xs = np.arange(self.far_lo[0], self.far_hi[0] + 1e-9, STEP_M)
        ys = np.arange(self.far_lo[2], self.far_hi[2] + 1e-9, STEP_M)
        pts = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
        proj = pts @ HULL_DIRS.T
        inside = np.all((proj >= self.far_lo - 1e-9) & (proj <= self.far_hi + 1e-9), axis=1)
        return pts[inside & (self.gap(pts) > 0.0)]

    def sides(self) -> np.ndarray:
        """The hull axes (indices into ``HULL_DIRS``) whose box the object is taken to fill where the
        robot's disc keeps off it: of the boxes two perpendicular axes make, the smallest. An axis's extent is read at a percentile
        (``geometry.HULL_PERCENTILE``), and few of a box's points lie at its corners, so the extents
        along axes diagonal to its sides cut its corners off (0.1 m of a 0.9 m armchair's: the
        robot's disc beside the cut corner stood on the chair); its sides, along the box's own axes,
        bound it, and that box is the smaller (a rectangle's diagonal box is at least twice its area)."""
        n = len(HULL_DIRS) // 2
        size = self.hi - self.lo
        k = min(range(n), key=lambda i: size[i] * size[i + n])
        return np.array([k, k + n])

    def gap(self, points: np.ndarray, box: bool = False) -> np.ndarray:
        """Per point of ``points`` (K, 2): how far it lies outside the footprint (with ``box``, its
        box: ``sides``) along the axis it is farthest out on (<= 0 inside); never more than its
        distance to it."""
        ax = self.sides() if box else np.arange(len(HULL_DIRS))
        proj = points @ HULL_DIRS[ax].T
        return np.max(np.maximum(proj - self.hi[ax][None, :], self.lo[ax][None, :] - proj), axis=1)

    def standoff(self, centre: np.ndarray, u: np.ndarray, clearance_m: float, box: bool = False) -> float:
        """The smallest t >= 0 whose point ``centre + t * u`` is ``clearance_m`` outside the footprint
        (``gap``, ``box`` as there): a robot disc of that radius there just clears it."""
        ax = self.sides() if box else np.arange(len(HULL_DIRS))
        a, p = HULL_DIRS[ax] @ u, HULL_DIRS[ax] @ centre
        alpha, beta = np.concatenate([p - self.hi[ax], self.lo[ax] - p]), np.concatenate([a, -a])
        if np.any(alpha >= clearance_m):
            return 0.0
        up = beta > 1e-9
        return float(np.min((clearance_m - alpha[up]) / beta[up])) if up.any() else math.inf


def footprint_radius(widths_m: list[float]) -> float:
    """The object's footprint radius (m) from the widths it showed across its views."""
    if not widths_m:
        return DEFAULT_FOOTPRINT_RADIUS_M
    w = sorted(widths_m)
    r = w[min(len(w) - 1, int(WIDTH_QUANTILE * (len(w) - 1) + 0.5))] / 2.0
    return min(MAX_FOOTPRINT_RADIUS_M, max(MIN_FOOTPRINT_RADIUS_M, r))


def object_radius(ray_stats: list[float] | None, widths_m: list[float]) -> float:
    """The object's footprint radius (m), its largest half extent: half the diagonal of the
    footprint depth measured (``geometry.object_footprint``), else ``footprint_radius`` of the
    widths it showed (what a memory built without depth always gets)."""
    footprint = object_footprint(ray_stats) if ray_stats else None
    if footprint is None:
        return footprint_radius(widths_m)
    return min(MAX_FOOTPRINT_RADIUS_M, max(MIN_FOOTPRINT_RADIUS_M, 0.5 * math.hypot(*footprint)))


def along_half_extent(obj_xy: tuple[float, float], views: list[View], approach_rad: float) -> float | None:
    """Half the object's extent (m) along the direction ``approach_rad`` (map angle): half the
    widest it looked from the views within PERPENDICULAR_TOLERANCE_DEG of perpendicular to it
    (the widest: a view off perpendicular shows a long object's extent at a slant, which may be
    shorter); None without such a view."""
    tol = math.sin(math.radians(PERPENDICULAR_TOLERANCE_DEG))
    widths = [v.width_m for v in views if v.width_m is not None and v.width_m > 0.0
              and abs(math.cos(math.atan2(obj_xy[1] - v.pose.y, obj_xy[0] - v.pose.x) - approach_rad)) <= tol]
    if len(widths) < MIN_PERPENDICULAR_VIEWS:
        return None
    return min(MAX_FOOTPRINT_RADIUS_M, max(MIN_FOOTPRINT_RADIUS_M, max(widths) / 2.0))


def standoff_goal(obj_xy: tuple[float, float], radius_m: float, views: list[Pose] | list[View],
                  robot_radius_m: float, clearance_m: float, frame_id: str = "map",
                  max_from_object_m: float = math.inf, footprints: tuple[Footprint, ...] = ()) -> Pose:
    """A free-space pose facing the object, on the line from its centre toward one of ``views``
    (poses, or ``View`` with what each measured), ``robot radius + clearance`` off the object's
    near side along that line (module docstring; ``radius_m``, its largest half extent, where
    nothing measured the near side), moved back along it until the robot's disc clears the
    obstacles of all the views (``clear_standoff``) and, where that moved it, the line turned where
    that camera saw free floor (``fan_standoff``). A camera nearer than its stand-off gives its own
    pose (the robot stood there). The goal is the candidate nearest the object's centre (then the
    one whose camera was nearest its stand-off) among, in this order (``goal_rank``): clear ones
    within ``max_from_object_m`` of the centre, the lines' blocked stand-offs within it (near
    enough to see and reach the object; the planner stops short), clear ones beyond it, the rest.
    ``footprints`` (depth: the object's own and what it rests on, ``Footprint``): where depth saw
    what stood around, the candidates all round the object (``ring_goal``) join in; first, a clear
    candidate within reach whose robot disc lies off them (``Footprint.clear``; each line's
    stand-off moved back until it does); else the order above among the candidates whose centre
    lies outside them."""
    ox, oy = obj_xy
    vs = [v if isinstance(v, View) else View(v) for v in views]
    seen = [v.obstacles for v in vs if v.obstacles is not None and v.obstacles.size]
    obstacles = stood_free(thin_obstacles(np.concatenate(seen)), [v.pose for v in vs], robot_radius_m) if seen else None
    body = robot_radius_m + OBSTACLE_MARGIN_M
    best = None
    # first the candidates whose robot disc clears the footprints; then, ranked below any of those within
    # reach, the ones whose centre does (where the footprint reaches out too far, what it always was)
    for disc in ((True, False) if footprints else (False,)):
        for key, ux, uy, t in _line_candidates(obj_xy, radius_m, vs, robot_radius_m + clearance_m, obstacles, body,
                                               footprints, disc, max_from_object_m):
            key = ((0 if key[0] == 0 else 9) if disc else 1 + key[0],) + key[1:]
            if best is None or key < best[0]:
                best = (key, ux, uy, t)
        if obstacles is not None and footprints:
            reach = max_from_object_m if math.isfinite(max_from_object_m) else max(
                (math.hypot(v.pose.x - ox, v.pose.y - oy) for v in vs), default=0.0)
            ring = ring_goal((ox, oy), [v.pose for v in vs if v.obstacles is not None], footprints, obstacles, body,
                             reach, disc, [v.floor for v in vs if v.floor is not None])
            if ring is not None:
                (ux, uy), t = ring
                rank = goal_rank(t, True, max_from_object_m)
                key = ((0 if rank == 0 else 9) if disc else 1 + rank, t, math.inf)
                if best is None or key < best[0]:
                    best = (key, ux, uy, t)
        if best is not None and best[0][0] == 0:
            break  # a disc-clear goal within reach: no centre-only candidate (ranked 1 and up) beats it
    if best is None:
        return Pose.from_xy_yaw(ox, oy, 0.0, frame_id)
    _, ux, uy, s = best
    return Pose.from_xy_yaw(ox + ux * s, oy + uy * s, math.atan2(-uy, -ux), frame_id)


def _line_candidates(obj_xy: tuple[float, float], radius_m: float, vs: list[View], margin: float,
                     obstacles: np.ndarray | None, body: float, footprints: tuple[Footprint, ...], disc: bool,
                     max_from_object_m: float = math.inf):
    """(rank key, ux, uy, stand-off) per candidate on the views' lines (``standoff_goal``), each line's
    stand-off moved back until the robot's disc (``body``) clears the obstacles and lies outside
    ``footprints`` (``disc``: the disc, off their boxes, ``Footprint.clear``; else its centre, off
    the measured extent), the near side's stand-off kept as the line's blocked one."""
    fp_m = body if disc else 0.0
    ox, oy = obj_xy
    nearest_clear = math.inf
    for v in vs:
        dx, dy = v.pose.x - ox, v.pose.y - oy
        d = math.hypot(dx, dy)
        if d <= 1e-3:
            continue
        if v.front_m is not None and d - v.front_m >= -FRONT_BEYOND_M:  # the near surface measured along this line
            s = max(d - v.front_m, MIN_FOOTPRINT_RADIUS_M) + margin
        else:
            h = along_half_extent(obj_xy, vs, math.atan2(-dy, -dx))
            s = (radius_m if h is None else h) + margin
        u = (dx / d, dy / d)
        s_near = s  # the near side's stand-off: the line's blocked candidate (sent within reach)
        if footprints:  # off the measured footprints along this line, too
            s = max(s, max(f.standoff(np.array([ox, oy]), np.array(u), f.clear(fp_m), disc) for f in footprints))
        cands = [(u, min(s, d), True)]  # (direction, stand-off, clear)
        if obstacles is not None:
            t = clear_standoff((ox, oy), u, s, d, obstacles, body)
            cands = [(u, t, True)]
            if v.obstacles is not None and s < t and s < nearest_clear:
                # blocked along the line (and a turned line could beat the nearest clear goal so far): turn it where
                # this view saw
                cands += [(w, ft, True) for w, ft in fan_standoff(
                    (ox, oy), v.pose, s, min(t, nearest_clear), obstacles, body, v.floor)]
        if cands[0][1] > s_near:
            cands.append((u, s_near, False))
        for (ux, uy), t, clear in cands:
            clear = clear and _clear_of(footprints, (ox + ux * t, oy + uy * t), fp_m, disc)
            if clear:
                nearest_clear = min(nearest_clear, t)
            yield (goal_rank(t, clear, max_from_object_m), t, abs(d - s)), ux, uy, t


def _clear_of(footprints: tuple[Footprint, ...], xy: tuple[float, float], clearance_m: float,
              box: bool = False) -> bool:
    """``xy`` lies at least ``clearance_m`` (the robot's disc; ``Footprint.clear``) outside every
    footprint (``box``: ``Footprint.gap``)."""
    p = np.array([xy], dtype=float)
    return all(float(f.gap(p, box)[0]) >= f.clear(clearance_m) for f in footprints)


def ring_goal(obj_xy: tuple[float, float], cameras: list[Pose], footprints: tuple[Footprint, ...],
              obstacles: np.ndarray, clearance_m: float, reach_m: float, disc: bool = True,
              sights: list["FloorSight"] = ()) -> tuple[tuple[float, float], float] | None:
    """The nearest candidate goal all round the object: on directions every RING_DEG from its
    centre, stand-offs STEP_M apart up to ``reach_m``, the robot's disc (``clearance_m``) outside every
    footprint's box (``Footprint.clear``; without ``disc``, its centre outside the measured octagon),
    from where each direction leaves them (``Footprint.standoff``: a bed's long side gives a goal
    half its width plus the disc off, not one off its end), and clear of what depth saw (as
    ``clear_standoff``), and SEEN free by one of ``cameras`` (depth views; as ``fan_standoff``) or
    ``sights`` (where their depth read the floor, ``depth.FloorSight``: the 2D test takes a sofa
    beside the line of sight for what hides the floor in front of it). (direction, stand-off), or None. Checked nearest first, RING_CHUNK at a time: the first one
    that passes ends it."""
    o = np.asarray(obj_xy, dtype=float)
    if not cameras or not footprints or reach_m <= 0.0:
        return None
    fp_m = clearance_m if disc else 0.0
    dirs, ts = [], []
    for a in np.radians(np.arange(0.0, 360.0, RING_DEG)):
        u = np.array([math.cos(a), math.sin(a)])
        t = np.arange(max(f.standoff(o, u, f.clear(fp_m), disc) for f in footprints), reach_m + 1e-9, STEP_M)
        dirs += [u] * t.size
        ts.append(t)
    if not dirs:
        return None
    us, t = np.array(dirs), np.concatenate(ts)
    order = np.argsort(t, kind="stable")
    us, t = us[order], t[order]
    pts = o[None, :] + t[:, None] * us
    keep = np.all([f.gap(pts, disc) >= f.clear(fp_m) - 1e-9 for f in footprints], axis=0)
    us, t, pts = us[keep], t[keep], pts[keep]
    near = np.concatenate([obstacles, *(f.hidden() for f in footprints)])  # what was seen, and where it may be unseen
    near = near[np.linalg.norm(near - o, axis=1) < reach_m + clearance_m]
    lanes = [(np.array([c.x, c.y]), c) for c in cameras]
    lanes = [(xy, c, obstacles[np.linalg.norm(obstacles - xy, axis=1) < SEEN_RANGE_M]) for xy, c in lanes]
    for lo in range(0, t.size, RING_CHUNK):
        idx = np.arange(lo, min(lo + RING_CHUNK, t.size))
        if near.size:
            idx = idx[_disc_hits(pts[idx], near, clearance_m) < MIN_OBSTACLE_POINTS]
        seen = np.zeros(idx.size, dtype=bool)
        for c_xy, cam, lane in lanes:
            look = ~seen & in_view(cam, pts[idx])
            if look.any():
                seen[look] = corridor_free(c_xy, pts[idx[look]], lane)
        seen |= floor_seen(sights, pts[idx], obj_xy, clearance_m, ~seen)
        if seen.any():
            i = idx[int(np.argmax(seen))]
            return (float(us[i, 0]), float(us[i, 1])), float(t[i])
    return None


def goal_rank(standoff_m: float, clear: bool, max_from_object_m: float) -> int:
    """A candidate goal's rank (lower wins): 0 the robot's disc is clear there and it is within
    ``max_from_object_m`` of the object's centre, 1 blocked but within it, 2 clear beyond it,
    3 neither. A goal has to be both a place to stand and near enough to see and reach the
    object; between the two, near wins (docs/DEPTH.md: measured)."""
    return (0 if standoff_m <= max_from_object_m else 2) + (0 if clear else 1)


def clear_standoff(obj_xy: tuple[float, float], u: tuple[float, float], s: float, d: float,
                   obstacles: np.ndarray, clearance_m: float) -> float:
    """The smallest stand-off from ``s`` up to the camera's distance ``d`` (STEP_M apart) whose point
    on the line ``obj_xy + t * u`` has fewer than MIN_OBSTACLE_POINTS obstacle points within
    ``clearance_m`` (a lone noisy reading blocks nothing); ``d`` (the camera's own pose: it stood
    there) when none has."""
    if s >= d or obstacles.size == 0:
        return s
    o, u = np.asarray(obj_xy, dtype=float), np.asarray(u, dtype=float)
    rel = obstacles - o
    along = rel @ u
    across = np.abs(rel @ np.array([-u[1], u[0]]))
    near = obstacles[(across < clearance_m) & (along > s - clearance_m) & (along < d + clearance_m)]
    if near.size == 0:
        return s
    ts = np.append(np.arange(s, d, STEP_M), d)
    clear = _disc_hits(o[None, :] + ts[:, None] * u[None, :], near, clearance_m) < MIN_OBSTACLE_POINTS
    return float(ts[int(np.argmax(clear))]) if clear.any() else d


def fan_standoff(obj_xy: tuple[float, float], camera: Pose, s: float, t_max: float, obstacles: np.ndarray,
                 clearance_m: float, sight: "FloorSight | None" = None) -> list[tuple[tuple[float, float], float]]:
    """Where the line of sight from ``camera`` is blocked before ``t_max``: the same line turned
    about the object's centre by +-FAN_DEG, on each the nearest stand-off from ``s`` (below
    ``t_max``) whose robot disc is clear of ``obstacles`` (as ``clear_standoff``) and that the
    camera SAW free: within SEEN_HALF_ANGLE_DEG of its heading and SEEN_RANGE_M, no reading
    within SEEN_CORRIDOR_M of the segment to it, or where its depth read the floor (``sight``,
    ``depth.FloorSight``). (direction, stand-off) per turned line that has one."""
    o = np.asarray(obj_xy, dtype=float)
    c = np.array([camera.x, camera.y])
    base = math.atan2(c[1] - o[1], c[0] - o[0])
    ts = np.arange(s, t_max, STEP_M)
    if ts.size == 0:
        return []
    near = obstacles[np.linalg.norm(obstacles - o, axis=1) < t_max + clearance_m]
    rel = near - o
    lane = obstacles[np.linalg.norm(obstacles - c, axis=1) < SEEN_RANGE_M]
    out = []
    for turn in (sign * math.radians(a) for a in FAN_DEG for sign in (1.0, -1.0)):
        u = np.array([math.cos(base + turn), math.sin(base + turn)])
        pts = o[None, :] + ts[:, None] * u[None, :]
        ok = in_view(camera, pts)
        if not ok.any() and sight is None:
            continue
        idx = np.arange(ts.size) if sight is not None else np.flatnonzero(ok)
        band = near[(np.abs(rel @ np.array([-u[1], u[0]])) < clearance_m) & (rel @ u > s - clearance_m)]
        idx = idx[_disc_hits(pts[idx], band, clearance_m) < MIN_OBSTACLE_POINTS]
        if idx.size == 0:
            continue
        free = np.zeros(idx.size, dtype=bool)
        if ok[idx].any():
            free[ok[idx]] = corridor_free(c, pts[idx[ok[idx]]], lane)
        free |= floor_seen([sight] if sight is not None else [], pts[idx], obj_xy, clearance_m, ~free)
        if free.any():  # nearest first: the first the camera saw free wins
            out.append(((float(u[0]), float(u[1])), float(ts[idx[int(np.argmax(free))]])))
    return out


def corridor_free(camera_xy: np.ndarray, points: np.ndarray, lane: np.ndarray) -> np.ndarray:
    """Per point of ``points`` (K, 2): fewer than MIN_OBSTACLE_POINTS of the camera's readings
    ``lane`` (M, 2) lie within SEEN_CORRIDOR_M of the segment from ``camera_xy`` to it (nothing
    hid the floor there from the camera)."""
    c = np.asarray(camera_xy, dtype=float)
    to = points - c
    rng2 = np.maximum(np.sum(to ** 2, axis=1), 1e-9)
    lo, hi = np.minimum(c, points.min(axis=0)) - SEEN_CORRIDOR_M, np.maximum(c, points.max(axis=0)) + SEEN_CORRIDOR_M
    r = lane[np.all((lane >= lo) & (lane <= hi), axis=1)] - c  # per point, each reading's distance to
    # the segment camera -> point
    along = np.clip((r @ to.T) / rng2[None, :], 0.0, 1.0)  # (M, K)
    gap = np.hypot(r[:, :1] - along * to[:, 0][None, :], r[:, 1:] - along * to[:, 1][None, :])
    return np.sum(gap < SEEN_CORRIDOR_M, axis=0) < MIN_OBSTACLE_POINTS


def floor_seen(sights: list["FloorSight"], points: np.ndarray, centre: tuple[float, float], clearance_m: float,
               ask: np.ndarray | None = None) -> np.ndarray:
    """Per candidate goal of ``points`` (K, 2) (those ``ask`` marks; the rest False): did one of
    ``sights`` (``depth.FloorSight``) read the floor where the robot would stand? There, and at its
    disc's edge toward the object's ``centre`` (``clearance_m`` off), moved away from that camera
    by what the floor test cannot tell from the floor (``FloorSight.blur_m``: 0.3 m at 3.6 m, where
    a fridge's base 0.1 m before the floor point read as floor and the disc stood on the fridge).
    No sights: none (the 2D test alone decides, ``corridor_free``)."""
    out = np.zeros(len(points), dtype=bool)
    todo = np.ones(len(points), dtype=bool) if ask is None else np.asarray(ask, dtype=bool).copy()
    if not sights or not todo.any():
        return out
    to = np.asarray(centre, dtype=float)[None, :] - points
    rim = points + clearance_m * to / np.maximum(np.linalg.norm(to, axis=1, keepdims=True), 1e-9)
    for sight in sights:
        idx = np.flatnonzero(todo)
        if idx.size == 0:
            break
        ray = rim[idx] - np.array([sight.pose.x, sight.pose.y])
        dist = np.maximum(np.linalg.norm(ray, axis=1), 1e-9)
        edge = rim[idx] + (sight.blur_m(dist) / dist)[:, None] * ray
        hit = sight.seen(points[idx], SEEN_RANGE_M) & sight.seen(edge, SEEN_RANGE_M)
        out[idx[hit]], todo[idx[hit]] = True, False
    return out


def in_view(camera: Pose, points: np.ndarray) -> np.ndarray:
    """Per point of ``points`` (K, 2): within SEEN_HALF_ANGLE_DEG of the camera's heading and
    SEEN_RANGE_M of it (where its depth reads the floor)."""
    to = points - np.array([camera.x, camera.y])
    heading = np.abs(np.remainder(np.arctan2(to[:, 1], to[:, 0]) - camera.yaw + math.pi, 2 * math.pi) - math.pi)
    return (np.linalg.norm(to, axis=1) <= SEEN_RANGE_M) & (heading <= math.radians(SEEN_HALF_ANGLE_DEG))


def _disc_hits(points: np.ndarray, obstacles: np.ndarray, clearance_m: float) -> np.ndarray:
    """Per point of ``points`` (K, 2): how many ``obstacles`` (M, 2) lie within ``clearance_m`` of it."""
    return np.sum(np.linalg.norm(points[:, None, :] - obstacles[None, :, :], axis=2) < clearance_m, axis=1)


def stood_free(points: np.ndarray, poses: list[Pose], radius_m: float) -> np.ndarray:
    """``points`` (N, 2) less those within ``radius_m`` (the robot's) of a pose where the robot
    stood: nothing stood there then, so a reading there is another view's misregistered surface or
    gone (three such readings a view from another room put 0.1-0.3 m in front of a bedroom
    camera blocked every ring goal that camera saw, and a bed's goal went 1.9 m off)."""
    if points.size == 0 or not poses:
        return points
    xy = np.array([[p.x, p.y] for p in poses], dtype=float)
    near = np.zeros(len(points), dtype=bool)
    for c in xy:
        near |= np.sum((points - c) ** 2, axis=1) < radius_m ** 2
    return points[~near]


def thin_obstacles(points: np.ndarray, cell_m: float = STEP_M) -> np.ndarray:
    """At most MIN_OBSTACLE_POINTS of ``points`` (N, 2) per ``cell_m`` square: as many as ever
    decide whether a place is blocked, from views that saw the same surface many times over."""
    keys = np.floor(points / cell_m).astype(np.int64)
    order = np.lexsort((keys[:, 1], keys[:, 0]))
    k = keys[order]
    start = np.ones(len(k), dtype=bool)
    start[1:] = np.any(k[1:] != k[:-1], axis=1)
    first = np.maximum.accumulate(np.where(start, np.arange(len(k)), 0))
    return points[order[np.arange(len(k)) - first < MIN_OBSTACLE_POINTS]]


def near_surface(points_xy: np.ndarray, view: Pose, toward: tuple[float, float]) -> float:
    """Distance (m) from ``view`` to the object's near surface along the line toward ``toward``:
    the FRONT_PERCENTILE-th of its points' (map plane, (N, 2)) projections on that line."""
    u = np.array([toward[0] - view.x, toward[1] - view.y], dtype=float)
    u /= max(float(np.linalg.norm(u)), 1e-9)
    return float(np.percentile((points_xy - np.array([view.x, view.y])) @ u, FRONT_PERCENTILE))


def camera_heights(floors: list[float | None], fallback: float | None = None) -> list[float | None]:
    """The camera height to read each view's depth with, from the heights its floor gave
    (``KeyframeDepths.camera_height``; None: no floor seen, or no depth): one robot's camera
    stands at one height, so a view whose floor lies more than FLOOR_AGREE_M off the views'
    median (a table top taken for the floor: 0.18 m for a 1.0 m camera, and the floor 2-3 m
    ahead read as a wall of obstacles) and a view that saw no floor take the median; where none
    saw one, ``fallback`` (the height nearby keyframes' floors gave: ``_nearby_camera_height``)."""
    known = [h for h in floors if h]
    if not known:
        return [fallback] * len(floors) if fallback else list(floors)
    med = float(np.median(known))
    return [h if h and abs(h - med) <= FLOOR_AGREE_M else med for h in floors]


def object_views(memory: "Memory", node: ObjectNode, max_views: int = MAX_VIEWS) -> list[View]:
    """Camera poses of keyframes that saw the object, with the object's width (m) in each view
    (box width over the focal length times the distance) and, where the keyframe has depth, the
    distance to its near surface toward its centre (``near_surface``); neither for boxes cut by
    the image's left or right border (the object goes on beyond it), no near surface for those
    cut by its bottom (the object's base, maybe its nearest part, is out of the image)."""
    from .depth import FloorSight, KeyframeDepths, object_points, obstacle_points, optical_to_map

    obs = sorted(node.observations, key=lambda o: o.stamp_ns)
    if len(obs) > max_views:
        step = len(obs) / max_views
        obs = [obs[int(i * step)] for i in range(max_views)]
    cameras: dict[str, CameraModel | None] = {}
    depths = KeyframeDepths(memory.frames) if memory.cfg.depth.enabled and node.position is not None else None
    noise = memory.cfg.depth.noise()
    pitch = math.radians(memory.cfg.capture.camera_pitch_deg)
    seen = []  # (pose, camera, box, depth or None, the camera height that depth's floor gave)
    obs_seen = []  # the observation of each of seen
    for ob in obs:
        kf = memory.graph.get_keyframe(ob.tour_id, ob.stamp_ns)
        if kf is None or kf.pose is None:
            continue
        obs_seen.append(ob)
        if ob.tour_id not in cameras:
            raw = memory.graph.get_meta(f"camera:{ob.tour_id}")
            cameras[ob.tour_id] = CameraModel(**json.loads(raw)) if raw else None
        cam = cameras[ob.tour_id] or CameraModel.from_hfov(kf.width, kf.height, memory.cfg.capture.camera_hfov_deg)
        if node.position is None or cut_by_border(ob.bbox, cam):
            seen.append((kf.pose, cam, None, None, None))
            continue
        depth = depths.get(ob.tour_id, ob.stamp_ns) if depths is not None else None
        seen.append((kf.pose, cam, ob.bbox, depth, depths.camera_height(ob.tour_id, ob.stamp_ns, cam)
                     if depth is not None else None))
    heights = camera_heights([h for *_, h in seen])
    if any(view[3] is not None and not h for view, h in zip(seen, heights)):  # depth, no floor
        heights = camera_heights([h for *_, h in seen], _nearby_camera_height(memory, depths, obs_seen, seen))
    others = _other_boxes(memory, node, obs) if any(d is not None for _, _, _, d, _ in seen) else {}
    views = []
    for ob, (pose, cam, bbox, depth, _), height in zip(obs_seen, seen, heights):
        if bbox is None:
            views.append(View(pose))
            continue
        dist = math.hypot(pose.x - node.position[0], pose.y - node.position[1])
        front = obstacles = floor = None
        if depth is not None:
            # a box cut by the image's bottom hides the object's base, which may be its nearest part
            pts = object_points(depth, bbox, cam, noise, height, others.get((ob.tour_id, ob.stamp_ns), ())
                                ) if bbox[3] < cam.height - BORDER_PX else None
            if pts is not None:
                front = near_surface(optical_to_map(pts, pose, pitch), pose, node.position)
            if height:
                obstacles = optical_to_map(obstacle_points(depth, cam, height, pitch), pose, pitch)
                floor = FloorSight(depth, cam, pose, height, pitch, noise)
        views.append(View(pose, (bbox[2] - bbox[0]) / cam.fx * dist, front, obstacles, floor))
    return views


NEARBY_FLOORS = 6  # keyframes nearest in time whose floors give the camera height where no view of the object saw one


def _nearby_camera_height(memory: "Memory", depths, obs: list, seen: list) -> float | None:
    """Where no view of the object saw the floor (a sink seen once, close, over a toilet): the
    median camera height the floors of the tour's NEARBY_FLOORS keyframes nearest in time to its
    views gave (one robot's camera stands at one height), so the readings around still keep the
    goal off what stood there (without them the sink's goal stood on the toilet); None without."""
    tour = obs[0].tour_id
    stamps = [ob.stamp_ns for ob in obs if ob.tour_id == tour]
    cam = next(c for _, c, *_ in seen)
    near = sorted((kf for kf in memory.graph.keyframes(tour) if kf.stamp_ns not in stamps),
                  key=lambda kf: min(abs(kf.stamp_ns - s) for s in stamps))
    heights = []
    for kf in near[:4 * NEARBY_FLOORS]:
        if len(heights) >= NEARBY_FLOORS:
            break
        if depths.get(tour, kf.stamp_ns) is not None:
            h = depths.camera_height(tour, kf.stamp_ns, cam)
            if h:
                heights.append(h)
    return float(np.median(heights)) if heights else None


def _other_boxes(memory: "Memory", node: ObjectNode, obs: list) -> dict[tuple[str, int], list]:
    """(tour, stamp) -> the boxes of the other objects the memory holds in that keyframe of ``obs``:
    their pixels are not the object's near surface (a toilet in front of a sink is the toilet's,
    as ``depth.object_depth`` leaves them out when it places the object)."""
    frames = memory.graph.objects_in_frames([(ob.tour_id, ob.stamp_ns) for ob in obs])
    ids = sorted({i for found in frames.values() for i in found if i != node.id})
    out: dict[tuple[str, int], list] = {}
    for other in memory.graph.get_objects(ids):
        for ob in other.observations:
            key = (ob.tour_id, ob.stamp_ns)
            if other.id in frames.get(key, ()):
                out.setdefault(key, []).append(ob.bbox)
    return out


def goal_pose(memory: "Memory", sub: "Subgraph", frames: list["RankedFrame"], target_id: str,
              robot_radius_m: float = 0.3, clearance_m: float = 0.35,
              camera_height: Callable[[], float | None] = lambda: None, max_from_object_m: float = math.inf
              ) -> tuple[Pose | None, str, tuple[float, float] | None]:
    """(goal pose, source, the target's pooled position) for the answer's target: ``object_position`` (the stand-off pose of the
    module docstring; the centre itself when no view pose is known), ``frame_pose`` (no object
    position: where it was seen from), or (None, '')."""
    from .ask.answer import (SUPPORT_RELATION_LIMIT, merged_position, placed_on_support, supported_objects,
                             supports_of)

    node = sub.objects.get(target_id)
    view = next((f.pose for f in frames if f.pose and target_id in f.object_ids), None)
    view = view or next((f.pose for f in frames if f.pose), None)
    placed = supported = None
    if node is not None:  # one relation lookup serves both directions
        rels = memory.graph.relations_of([target_id], limit=SUPPORT_RELATION_LIMIT)
        placed = placed_on_support(memory, node, rels, camera_height)
        supported = supported_objects(memory, target_id, rels)
    pooled = merged_position(sub, target_id, supported, placed)
    if node is None or pooled is None:
        return (view, "frame_pose", None) if view is not None else (None, "", None)
    placed_node = ObjectNode(node.id, node.label, observations=node.observations, position=pooled)
    views = object_views(memory, placed_node)
    if view is not None and not views:
        views = [View(view)]
    if not views:
        return Pose.from_xy_yaw(pooled[0], pooled[1], 0.0), "object_position", pooled
    radius = object_radius(node.ray_stats, [v.width_m for v in views if v.width_m is not None])
    footprints = tuple(f for f in [Footprint.of(node.ray_stats, pooled), *(Footprint.of(n.ray_stats, support=True) for n in supports_of(
        memory, rels, placed_node))] if f is not None)
    goal = standoff_goal(pooled, radius, views, robot_radius_m, clearance_m, max_from_object_m=max_from_object_m,
                         footprints=footprints)
    return goal, "object_position", pooled
