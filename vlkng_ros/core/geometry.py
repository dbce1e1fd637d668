"""Where is an object? Triangulation from bearings, floor contact and, where the robot has it, depth.

Each detection gives a ray in the map plane: from the camera position along heading + the
bearing of the box centre. The object position is the weighted least-squares point closest to
all rays, regularised by a weak prior that the object is ``PRIOR_RANGE_M`` ahead along each ray
(so a single view, or rays from one spot, still give a sensible estimate, and well-spread views
dominate the prior). The sums of the normal equations are kept (``RayAccumulator``) so an
object's estimate improves with every chunk it is seen in, at constant cost and storage.
Boxes cut by the image border have a biased centre and get a low weight.

Bearings seen from one spot (the robot turning) or along the robot's path (driving toward the
object) carry no range, and the least-squares point slides toward the cameras: big furniture
ended up metres too close. Floor contact gives the range: an object standing on the floor
touches it at its box's bottom edge, and that edge's angle below the optical axis with the
camera's height above the floor gives the distance (the flat-floor model of monocular ranging).
Each such ray adds a range term, kept as sums that do not depend on the camera height, so the
height can be given later or estimated from the tour (``implied_camera_height``) and every
object re-solved. The cue holds only when the bottom edge is the floor contact: not for a box cut
by the image bottom, nor one whose bottom is hidden by or rests on another box
(``bottom_hidden``); the caller also leaves out what perception calls small or puts on something.

Depth (an aligned depth image or a projected point cloud, see ``depth.py``) measures the range
directly: each fix is a point in the map plane with a covariance (range noise along the view,
lateral noise across it), added to the same normal equations as information, so bearings, floor
contact and depth all count and more evidence always helps. A fix also carries the object's
footprint (width across the view, extent along it), summed so the mean footprint survives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .model import BBox, CameraModel, Pose

PRIOR_RANGE_M = 2.5  # typical distance of a detected object from an indoor robot camera
PRIOR_WEIGHT = 0.003  # weak: the prior only regularises rays that carry no range (one viewpoint)
MIN_RANGE_M = 0.3  # nothing is seen nearer than this in front of the lens
MAX_POSITION_VAR = 2.0  # m^2: what a position estimate's variance is capped at (a guess)
BORDER_PX = 2.0  # a box edge this close to the image edge is cut by it
BORDER_WEIGHT = 0.15  # a cut box's centre is not the object's: its bearing counts this much
MIN_PERP_VAR = 0.01  # ~0.1 m perpendicular error per ray at a few metres
MIN_DEPTH_VAR = 0.004  # m^2: what depth-placed positions are trusted to at best (pose error, shape)
CROSSING_MIN_RAYS = 6  # bearings this many or more take over from depth ...
CROSSING_SPREAD = 0.25  # ... in a direction with this much bearing information per ray (0: the rays run
# along it, from one side; 1: they all cross it) ...
CROSSING_DEPTH_FLOOR = 0.1  # ... down to this share of the depth fixes' information there
HULL_AXES = 4  # directions (0, 45, 90, 135 deg) along which an object's measured surface points' extent is kept
HULL_FACE_COS = 0.5  # a view looking within 60 deg of an axis direction sees the object's face across it
HULL_PERCENTILE = 2.0  # a view's points' extent along an axis: this percentile from either end (noise)
HULL_NOISE_SIGMAS = 2.05  # the HULL_PERCENTILE-th percentile of normal noise lies this many sigmas from its mean
HULL_ROUNDS = 8  # alternating projections onto the axes' bounds
HULL_MIN_WIDTH_M = 0.45  # narrower (mean measured width): the unseen-depth guess (0.375 w) is off by less than the
# points' cross-view registration error (pose error, stray readings of a thin object's background)
HULL_DIRS = np.stack([np.cos(np.arange(HULL_AXES) * math.pi / HULL_AXES),
                      np.sin(np.arange(HULL_AXES) * math.pi / HULL_AXES)], axis=1)  # the hull axes' unit vectors
HULL_DIRS.flags.writeable = False
HULL_END_COS = math.cos(math.pi / (2 * HULL_AXES)) - 1e-9  # the hull axis nearest a direction lies within this cos
DEPTH_SHAPE_SHARE = 0.15  # a depth-placed centre is uncertain by this share of the object's footprint
MIN_FLOOR_DEPRESSION = 0.03  # tan of the box bottom's angle below the axis: nearer the horizon the range is too uncertain
FLOOR_RANGE_REL_SIGMA = 0.15  # relative error of a floor-contact range (box jitter, uneven floor, camera pitch)
BEARING_PERP_VAR = 0.03  # m^2: the perpendicular error one bearing term stands for, the floor terms' unit
MIN_FLOOR_VAR = 0.02  # m^2
FLOOR_OVERLAP = 0.3  # share of a box's width another box must cover to hide its bottom edge
BOTTOM_SLACK_PX = 3.0  # ... reaching up to this (plus a share of the box's height) below that edge
BOTTOM_SLACK_SHARE = 0.1  # ... (the share of the box height, for box jitter)


@dataclass
class Ray:
    origin: tuple[float, float]
    angle: float  # map-frame direction (rad)
    weight: float = 1.0
    floor: float = 0.0  # range along the ray per metre of camera height if the box bottom is floor contact, else 0


def cut_by_border(bbox: BBox, camera: CameraModel) -> bool:
    """The box touches the left or right image border: the object goes on beyond it."""
    return bbox[0] <= BORDER_PX or bbox[2] >= camera.width - BORDER_PX


def floor_range_factor(bbox: BBox, camera: CameraModel, pitch_rad: float = 0.0) -> float:
    """Map-plane distance to the box's bottom centre per metre of camera height, if that edge
    touches a flat floor (level camera: forward depth fy * height / (v - cy), the ray longer by
    1 / cos(bearing)). ``pitch_rad``: the camera looks down by this much. 0.0 where it cannot be
    floor contact: the bottom is cut by the image, or it lies at or above the horizon (or so near
    it that the range is meaningless)."""
    if bbox[3] >= camera.height - BORDER_PX:
        return 0.0
    down = (bbox[3] - camera.cy) / camera.fy  # the pixel ray (x, down, 1) in the camera frame
    lateral = ((bbox[0] + bbox[2]) / 2.0 - camera.cx) / camera.fx
    # the ray in the level frame: forward and downward components per unit of optical depth
    forward = math.cos(pitch_rad) - down * math.sin(pitch_rad)
    depression = math.sin(pitch_rad) + down * math.cos(pitch_rad)
    if depression < MIN_FLOOR_DEPRESSION or forward <= 0.0:
        return 0.0
    return math.hypot(forward, lateral) / depression


def bottom_hidden(bbox: BBox, others: list[BBox]) -> bool:
    """Another box of the same image covers this box's bottom edge and reaches lower: a nearer
    object hides the floor contact, or this object stands on that one (a mug on a table).
    Detector edges wander by a few per cent of the box size, so "covers" has that much slack:
    a floor range from a hidden bottom is metres too long, one lost is only a bearing."""
    width = max(1.0, bbox[2] - bbox[0])
    tol_px = BOTTOM_SLACK_PX + BOTTOM_SLACK_SHARE * max(0.0, bbox[3] - bbox[1])
    for o in others:
        if tuple(o) == tuple(bbox):
            continue
        overlap = min(bbox[2], o[2]) - max(bbox[0], o[0])
        if overlap > FLOOR_OVERLAP * width and o[1] <= bbox[3] + tol_px and o[3] > bbox[3] + tol_px:
            return True
    return False


def ray_for(pose: Pose, bbox: BBox, camera: CameraModel, on_floor: bool = False, pitch_rad: float = 0.0) -> Ray:
    """The bearing ray of a box; ``on_floor``: the caller knows nothing rules out that the box
    bottom is the object's floor contact, so it also carries a range (``floor_range_factor``).
    The bearing takes the camera as level (a pitch of a few degrees moves it very little)."""
    u = (bbox[0] + bbox[2]) / 2.0
    return Ray((pose.x, pose.y), pose.yaw + camera.bearing(u), BORDER_WEIGHT if cut_by_border(bbox, camera) else 1.0,
               floor_range_factor(bbox, camera, pitch_rad) if on_floor else 0.0)


class RayAccumulator:
    """Weighted normal equations of the ray least squares: bearing sums A, b, c (residual), prior
    sums, and the floor-range sums (each kept without the camera height, which ``solve`` takes).

    A floor ray i (direction d, origin p, range H * g_i for camera height H) adds the term
    w_i * (d.(X - p) - H g_i)^2 with w_i = c_i / H^2, c_i = weight * BEARING_PERP_VAR /
    (FLOOR_RANGE_REL_SIGMA * g_i)^2 (a relative range error). Its normal-equation share is
    (S_dd / H^2) X = S_dp / H^2 + S_gd / H, with S_dd = sum c dd', S_dp = sum c d (d.p) and
    S_gd = sum c g d. S_gp = sum c g (d.p) and S_gg = sum c g^2 give the height implied at a point.
    S_d = sum w d, S_p = sum w (d.p) and their weight sum give the rays' mean forward distance to a
    point: where rays from one spot all "meet" (at the camera), bearings give no position.
    Depth fixes (``add_depth``): information I_k = BEARING_PERP_VAR * inv(C_k) of each fix q_k with
    covariance C_k (in the bearing terms' units) adds S_I = sum I_k to the matrix and sum I_k q_k to
    the right-hand side; their count and footprint sums (width, extent along the view, over the
    fixes whose box the image border did not cut) follow. In ``solve`` the fixes' information is
    scaled down (to CROSSING_DEPTH_FLOOR at most) in the directions bearings span from several
    sides (CROSSING_*): a fix's range carries a guess of the object's unseen depth, which biases
    every fix from the same side alike; bearings crossing at wide angles do not share it.
    Lists of the older 10-value form read as having no floor rays, those of 10 or 20 values as
    having no forward sums (the check is skipped), those of 24 as having no depth, those of 32
    (the first depth form) as having counted every fix's footprint and measured no more sightings
    than it has fixes, those of 34 as having kept no surface points. Surface points (``add_points``):
    per hull axis, the extent (min, max; joined on merge) of every view's measured points and how
    many views saw the object's face at either end; ``solve`` bounds the centre by it
    (``_hull_adjusted``)."""

    HULL_SIZE = 34 + 4 * HULL_AXES + 1
    SIZE = HULL_SIZE + 2 * HULL_AXES
    DEPTH_SIZE = 34
    BEARING_SIZE = 10
    FLOOR_SIZE = 20
    FORWARD_SIZE = 24

    def __init__(self, values: list[float] | None = None) -> None:
        sizes = (self.BEARING_SIZE, self.FLOOR_SIZE, self.FORWARD_SIZE, 32, 33, self.DEPTH_SIZE, self.HULL_SIZE,
                 self.SIZE)
        v = list(values) if values and len(values) in sizes else []
        v += [0.0] * (self.SIZE - len(v))
        self.a = np.array([[v[0], v[1]], [v[1], v[2]]])
        self.b = np.array([v[3], v[4]])
        self.c = v[5]
        self.prior_w = v[6]
        self.prior_b = np.array([v[7], v[8]])
        self.n = v[9]
        self.floor_dd = np.array([[v[10], v[11]], [v[11], v[12]]])
        self.floor_dp = np.array([v[13], v[14]])
        self.floor_gd = np.array([v[15], v[16]])
        self.floor_gp = v[17]
        self.floor_gg = v[18]
        self.floor_w = v[19]  # sum of the floor rays' weights
        self.forward_d = np.array([v[20], v[21]])  # sum w d over rays counted since these sums exist
        self.forward_p = v[22]  # sum w (d.p) over the same rays
        self.forward_w = v[23]  # sum w over the same rays
        self.depth_info = np.array([[v[24], v[25]], [v[25], v[26]]])  # sum of the fixes' information
        self.depth_rhs = np.array([v[27], v[28]])  # sum I_k q_k
        self.depth_n = v[29]  # depth fixes counted
        self.depth_width = v[30]  # sum of the footprint widths (m) of the fixes that saw the whole width
        self.depth_extent = v[31]  # sum of their footprint extents along the view (m)
        self.depth_fp_n = v[32] if len(values or []) >= 33 else v[29]  # how many fixes those are
        # (a box cut by the image border measures no width)
        self.depth_tried = v[33] if len(values or []) >= 34 else v[29]  # sightings measured in depth, fix or not
        k, h = self.DEPTH_SIZE, HULL_AXES
        # the measured surface points' extent along each hull axis, over every view (min, max), and
        # how many views saw the object's face at either end of the axis
        self.hull_lo = np.array(v[k: k + h])
        self.hull_hi = np.array(v[k + h: k + 2 * h])
        self.hull_seen_lo = np.array(v[k + 2 * h: k + 3 * h])
        self.hull_seen_hi = np.array(v[k + 3 * h: k + 4 * h])
        self.hull_n = v[k + 4 * h]  # views whose points are in the extents
        # how many views cut by the border on one side saw the object's end at either end of the axis
        self.hull_end_lo = np.array(v[k + 4 * h + 1: k + 5 * h + 1])
        self.hull_end_hi = np.array(v[k + 5 * h + 1: k + 6 * h + 1])

    def add(self, ray: Ray) -> None:
        d = np.array([math.cos(ray.angle), math.sin(ray.angle)])
        p = np.array(ray.origin, dtype=float)
        proj = ray.weight * (np.eye(2) - np.outer(d, d))
        self.a += proj
        self.b += proj @ p
        self.c += float(p @ proj @ p)
        self.prior_w += ray.weight
        self.prior_b += ray.weight * (p + PRIOR_RANGE_M * d)
        self.n += 1
        along = float(d @ p)
        self.forward_d += ray.weight * d
        self.forward_p += ray.weight * along
        self.forward_w += ray.weight
        if ray.floor > 0.0:
            c = ray.weight * BEARING_PERP_VAR / (FLOOR_RANGE_REL_SIGMA * ray.floor) ** 2
            self.floor_dd += c * np.outer(d, d)
            self.floor_dp += c * along * d
            self.floor_gd += c * ray.floor * d
            self.floor_gp += c * ray.floor * along
            self.floor_gg += c * ray.floor ** 2
            self.floor_w += ray.weight

    def add_depth(self, xy: tuple[float, float], cov: np.ndarray, width_m: float = 0.0,
                  extent_m: float = 0.0) -> None:
        """A depth fix: the object measured at ``xy`` (map plane) with 2x2 covariance ``cov``;
        ``width_m`` / ``extent_m`` its footprint, 0 when the fix could not see all of it."""
        info = BEARING_PERP_VAR * np.linalg.inv(np.asarray(cov, dtype=float) + 1e-9 * np.eye(2))
        info = 0.5 * (info + info.T)
        self.depth_info += info
        self.depth_rhs += info @ np.asarray(xy, dtype=float)
        self.depth_n += 1
        if width_m > 0.0:
            self.depth_width += float(width_m)
            self.depth_extent += max(0.0, float(extent_m))
            self.depth_fp_n += 1

    def add_points(self, points_xy: np.ndarray, view_yaw: float, whole: bool = True,
                   end_dir: tuple[float, float] | None = None, noise_m: float = 0.0,
                   sight_yaw: float | None = None) -> None:
        """An object's measured surface points (N, 2) in the map plane, seen by a camera looking
        along ``view_yaw``; ``whole``: the view saw all of the object (its box not cut by the
        image border), so the faces it looks at count as seen. ``end_dir``: a view cut by the
        border on one side only saw the object's end on the other side, across its line of
        sight in this (unit) direction: that end counts as seen along the hull axis nearest it
        (the object reaches past the border on the cut side, so what the view measured there,
        and its centre, are no bound)."""
        p = np.asarray(points_xy, dtype=float).reshape(-1, 2)
        if p.shape[0] == 0:
            return
        axes = HULL_DIRS
        proj = p @ axes.T  # (N, HULL_AXES)
        lo = np.percentile(proj, HULL_PERCENTILE, axis=0)
        hi = np.percentile(proj, 100.0 - HULL_PERCENTILE, axis=0)
        if noise_m > 0.0:
            # the readings scatter along the line of sight by the depth noise: their outer
            # percentiles lie HULL_NOISE_SIGMAS of it beyond the surface, not on it
            y = view_yaw if sight_yaw is None else sight_yaw
            trim = HULL_NOISE_SIGMAS * noise_m * np.abs(axes @ np.array([math.cos(y), math.sin(y)]))
            mid = 0.5 * (lo + hi)
            lo, hi = np.minimum(lo + trim, mid), np.maximum(hi - trim, mid)
        if self.hull_n > 0:
            lo, hi = np.minimum(lo, self.hull_lo), np.maximum(hi, self.hull_hi)
        self.hull_lo, self.hull_hi = lo, hi
        self.hull_n += 1
        if whole:
            c = axes @ np.array([math.cos(view_yaw), math.sin(view_yaw)])
            self.hull_seen_lo = self.hull_seen_lo + (c > HULL_FACE_COS)  # looking along +axis: the low face
            self.hull_seen_hi = self.hull_seen_hi + (c < -HULL_FACE_COS)
        if end_dir is not None:
            c = axes @ np.asarray(end_dir, dtype=float)
            self.hull_end_hi = self.hull_end_hi + (c >= HULL_END_COS)  # the end lies toward +axis: the high face
            self.hull_end_lo = self.hull_end_lo + (c <= -HULL_END_COS)

    def hull_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """(axes (HULL_AXES, 2), extent midpoints, closed, side) or None without points: along a
        ``closed`` axis (views saw the faces at both ends) the object's centre is the middle of
        its measured extent; along one seen from one end only (``side`` +1: its low face, -1: its
        high face) the object reaches at least to the far end of what was measured, so its centre
        lies at least that middle away from the seen face; 0: neither face seen."""
        if self.hull_n <= 0:
            return None
        lo, hi = self.hull_seen_lo > 0, self.hull_seen_hi > 0
        # where no whole view saw either face, the ends that cut views saw
        free = ~(lo | hi)
        lo, hi = lo | (free & (self.hull_end_lo > 0)), hi | (free & (self.hull_end_hi > 0))
        return (HULL_DIRS, 0.5 * (self.hull_lo + self.hull_hi), lo & hi,
                np.where(lo & ~hi, 1, np.where(hi & ~lo, -1, 0)))

    @property
    def has_depth(self) -> bool:
        return self.depth_n > 0

    def footprint(self) -> tuple[float, float] | None:
        """Mean (width across the view, extent along it) in metres of the depth fixes that saw the
        whole object; None without."""
        if self.depth_fp_n <= 0:
            return None
        return self.depth_width / self.depth_fp_n, self.depth_extent / self.depth_fp_n

    def merged(self, other: "RayAccumulator") -> "RayAccumulator":
        out = RayAccumulator([x + y for x, y in zip(self._values(), other._values())])
        if self.hull_n > 0 and other.hull_n > 0:  # extents join, they do not add
            out.hull_lo = np.minimum(self.hull_lo, other.hull_lo)
            out.hull_hi = np.maximum(self.hull_hi, other.hull_hi)
        return out

    def to_list(self) -> list[float]:
        """The sums as stored with an object; without depth fixes the 24-value form of before
        (a memory built without depth is byte for byte what it was)."""
        v = self._values()
        return v if (self.has_depth or self.depth_tried) else v[: self.FORWARD_SIZE]

    def _values(self) -> list[float]:
        return [float(self.a[0, 0]), float(self.a[0, 1]), float(self.a[1, 1]), float(self.b[0]),
                float(self.b[1]), float(self.c), float(self.prior_w), float(self.prior_b[0]),
                float(self.prior_b[1]), float(self.n), float(self.floor_dd[0, 0]), float(self.floor_dd[0, 1]),
                float(self.floor_dd[1, 1]), float(self.floor_dp[0]), float(self.floor_dp[1]),
                float(self.floor_gd[0]), float(self.floor_gd[1]), float(self.floor_gp), float(self.floor_gg),
                float(self.floor_w), float(self.forward_d[0]), float(self.forward_d[1]), float(self.forward_p),
                float(self.forward_w), float(self.depth_info[0, 0]), float(self.depth_info[0, 1]),
                float(self.depth_info[1, 1]), float(self.depth_rhs[0]), float(self.depth_rhs[1]),
                float(self.depth_n), float(self.depth_width), float(self.depth_extent), float(self.depth_fp_n),
                float(self.depth_tried)] + [float(x) for x in (*self.hull_lo, *self.hull_hi, *self.hull_seen_lo,
                                                                 *self.hull_seen_hi, self.hull_n,
                                                                 *self.hull_end_lo, *self.hull_end_hi)]

    @property
    def has_floor(self) -> bool:
        return self.floor_w > 0.0

    def residual_at(self, xy: tuple[float, float]) -> float:
        """Weighted mean squared perpendicular distance (m^2) from ``xy`` to the rays: how well
        a point agrees with these bearings, whatever the (often poorly known) range."""
        if self.n == 0:
            return float("nan")
        x = np.asarray(xy, dtype=float)
        return max(0.0, float(x @ self.a @ x - 2 * self.b @ x + self.c)) / max(self.prior_w, 1e-9)

    def bearing_conditioning(self) -> float:
        """Smallest eigenvalue of the bearing information per ray: ~0.5 for well-spread views,
        ~0 for parallel rays (no range from bearings alone)."""
        return float(np.linalg.eigvalsh(self.a)[0]) / max(self.prior_w, 1e-9) if self.n else 0.0

    def implied_camera_height(self, xy: tuple[float, float]) -> float | None:
        """The camera height at which the floor rays would put the object at ``xy`` (least
        squares on relative range errors); None without floor rays."""
        if self.floor_gg <= 0.0:
            return None
        return float((self.floor_gd @ np.asarray(xy, dtype=float) - self.floor_gp) / self.floor_gg)

    def solve(self, camera_height: float | None = None,
              anchor: tuple[tuple[float, float], float] | None = None) -> tuple[tuple[float, float], float] | None:
        """((x, y), variance m^2) or None without rays. ``camera_height`` (m) turns the floor
        rays' ranges on; without it only bearings and the prior count. ``anchor`` ((x, y),
        variance): a place the object is known to be near (the table it stands on), which gives
        the range instead of the prior."""
        if self.n == 0 and not self.has_depth:
            return None
        floor = bool(camera_height and camera_height > 0.0 and self.has_floor)
        depth = self.has_depth
        if floor:  # floor contact gives the range the prior stands in for
            h = float(camera_height)  # type: ignore[arg-type]
            a = self.a + self.floor_dd / h ** 2
            rhs = self.b + self.floor_dp / h ** 2 + self.floor_gd / h
        elif depth:  # so does depth
            a, rhs = self.a, self.b
        elif anchor is None:
            a = self.a + PRIOR_WEIGHT * self.prior_w * np.eye(2)
            rhs = self.b + PRIOR_WEIGHT * self.prior_b
        else:
            a, rhs = self.a, self.b
        if anchor is not None:
            k = BEARING_PERP_VAR / max(anchor[1], MIN_PERP_VAR)
            a = a + k * np.eye(2)
            rhs = rhs + k * np.asarray(anchor[0], dtype=float)
        if depth:
            # bearings that cross at wide angles fix the position in the directions they span;
            # depth (whose range part carries the unseen-depth guess) counts where they do not
            info, centre = self.depth_info, np.linalg.solve(self.depth_info + 1e-12 * np.eye(2), self.depth_rhs)
            if self.n >= CROSSING_MIN_RAYS:
                lam, vec = np.linalg.eigh(self.a / max(self.prior_w, 1e-9))  # per ray: 0 along, 1 across rays
                s_half = vec @ np.diag(np.sqrt(np.clip(1.0 - lam / CROSSING_SPREAD, CROSSING_DEPTH_FLOOR, 1.0))) @ vec.T
                info = s_half @ info @ s_half
            a = a + info
            rhs = rhs + info @ centre
        xy = np.linalg.solve(a, rhs)
        if depth:
            xy = self._hull_adjusted(xy)
            return (float(xy[0]), float(xy[1])), self._depth_var(xy, floor, camera_height)
        if not floor and anchor is None and self.seen_from_where_it_lies((float(xy[0]), float(xy[1]))):
            # rays from one spot (the robot turning in place) all cross at the camera: their
            # crossing is no position, and their agreement there no accuracy. The prior's guess
            # along the bearings, as loose as a position can be.
            prior = self.prior_b / max(self.prior_w, 1e-9)
            return (float(prior[0]), float(prior[1])), MAX_POSITION_VAR
        # weighted mean squared perpendicular residual of the rays at the solution
        resid = self.residual_at((float(xy[0]), float(xy[1])))
        eig = self.bearing_conditioning()
        var = max(MIN_PERP_VAR, resid) / max(eig, 1e-3) / max(self.prior_w, 1.0) ** 0.5
        # rays of boxes cut by the border agree with each other yet miss the object (their
        # centres move with the cut): their consistency vouches for less
        var *= self.n / max(self.prior_w, 1e-9)
        if floor:
            # the floor ranges' own error, (FLOOR_RANGE_REL_SIGMA * range)^2 on the harmonic mean
            # over the floor rays; not shrunk by their number (one pitch or floor error moves them all)
            info = float(np.trace(self.floor_dd)) / h ** 2
            var = min(var, max(MIN_FLOOR_VAR, BEARING_PERP_VAR * self.floor_w / max(info, 1e-9)))
        return (float(xy[0]), float(xy[1])), float(min(MAX_POSITION_VAR, max(0.02, var)))

    def _hull_adjusted(self, xy: np.ndarray) -> np.ndarray:
        """``xy`` moved onto the middle of the measured extent along the closed hull axes (least
        squares over them when they fix both coordinates), else (alternating projections) onto
        that middle along the one closed axis and, along the axes seen from one end, at least as
        far from the seen face as that middle. The fixes' centres carry a guess of the unseen
        depth; the surface measured across views bounds it. An object no view saw whole (every
        box cut by the border) has no footprint: its points' widest extent is its width's lower bound."""
        hull = self.hull_bounds()
        fp = self.footprint()
        width = fp[0] if fp is not None else (float(np.max(self.hull_hi - self.hull_lo)) if self.hull_n > 0 else 0.0)
        if hull is None or width < HULL_MIN_WIDTH_M:
            return xy
        axes, mid, closed, side = hull
        if closed.any():
            m = axes[closed].T @ axes[closed]
            if np.linalg.eigvalsh(m)[0] >= 0.1:
                return np.linalg.solve(m, axes[closed].T @ mid[closed])
        x = np.array(xy, dtype=float)
        for _ in range(HULL_ROUNDS if (side != 0).any() else 1):
            for u, c, s in zip(axes, mid, side):
                if s and s * (float(u @ x) - c) < 0.0:
                    x = x + (c - float(u @ x)) * u
            for u, c in zip(axes[closed], mid[closed]):
                x = x + (c - float(u @ x)) * u
        return x

    def _depth_var(self, xy: np.ndarray, floor: bool, camera_height: float | None) -> float:
        """Variance of a depth-placed position: the fixes' own covariance (inverse information),
        shrinking with their number only as its square root (a pose or shape error moves them all
        alike), and never below how far the fixes scatter about the solution."""
        cov = BEARING_PERP_VAR * np.linalg.inv(self.depth_info + 1e-12 * np.eye(2))
        var = 0.5 * float(np.trace(cov)) * self.depth_n ** 0.5
        centre = np.linalg.solve(self.depth_info + 1e-12 * np.eye(2), self.depth_rhs)
        var = max(var, 0.5 * float(np.sum((centre - xy) ** 2)))
        # the object's unseen side: where its centre lies within its footprint is a guess
        width, extent = self.footprint() or (0.0, 0.0)
        var = max(var, (DEPTH_SHAPE_SHARE * max(width, extent)) ** 2)
        return float(min(MAX_POSITION_VAR, max(MIN_DEPTH_VAR, var)))

    def seen_from_where_it_lies(self, xy: tuple[float, float]) -> bool:
        """Is ``xy`` on average less than MIN_RANGE_M in front of the cameras that saw it (False
        when the sums predate this check)?"""
        if self.forward_w <= 0.0:
            return False
        forward = (float(self.forward_d @ np.asarray(xy, dtype=float)) - self.forward_p) / self.forward_w
        return forward < MIN_RANGE_M


def triangulate(rays: list[Ray], camera_height: float | None = None) -> tuple[tuple[float, float], float] | None:
    """Least-squares intersection of rays; ((x, y), variance m^2) or None without rays."""
    acc = RayAccumulator()
    for r in rays:
        acc.add(r)
    return acc.solve(camera_height)


def fuse(p1: tuple[float, float], v1: float, p2: tuple[float, float], v2: float) -> tuple[tuple[float, float], float]:
    """Inverse-variance fusion of two position estimates."""
    w1, w2 = 1.0 / max(v1, 1e-6), 1.0 / max(v2, 1e-6)
    x = (w1 * p1[0] + w2 * p2[0]) / (w1 + w2)
    y = (w1 * p1[1] + w2 * p2[1]) / (w1 + w2)
    return (x, y), 1.0 / (w1 + w2)


def object_footprint(ray_stats: list[float]) -> tuple[float, float] | None:
    """An object's footprint measured by depth, (width across the views, extent along them) in
    metres, from its stored sums (``ObjectNode.ray_stats``); None when depth never saw all of
    it. For the goal stand-off: a robot sent to a 2 m sofa stops outside it, not 0.15 m from its
    centre."""
    return RayAccumulator(ray_stats).footprint() if ray_stats else None
