"""Depth where the robot has it: an object's position from the depth inside its box.

Inputs are depth images registered to the colour image (same size and intrinsics), as float32
metres with NaN for no reading (``images.decode_depth``), either from an RGB-D camera's aligned
depth topic or made from a point cloud (``cloud_to_depth``: points moved into the camera frame and
projected with the camera model, nearest point per pixel). A depth image in another camera's frame
(an unaligned RGB-D driver) is made into such points first (``depth_to_points``) and registered the
same way (``register_depth``).

``object_depth`` measures one detection robustly:

- only the central part of the box is used for the range (its border is where the background and
  neighbours show, and where depth has "flying pixels" between surfaces); pixels next to a depth
  jump are dropped, and so are dropouts (no reading) and readings outside the sensor's range;
- the range is the *near mode* of what is left: a histogram of depths whose bins grow with the
  depth noise; the nearest bin holding a good share of the peak starts the object's cluster (a
  wall or floor seen through a chair's legs is farther, and smaller inside the central region),
  which grows over neighbouring bins;
- the cluster's median is the visible surface; the object's centre lies behind it by half its
  extent along the view (what the cluster spans, or a share of its width when seen face on);
- the variance comes from the depth noise model (RealSense-like: sigma = a + b z^2) and the
  uncertainty of that half extent; the footprint (width across, extent along the view) from the
  cluster's points over the whole box.

Pure numpy; no ROS. Costs well under a millisecond per box (the box is sampled on a grid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from .geometry import BORDER_PX, HULL_MIN_WIDTH_M, HULL_NOISE_SIGMAS, HULL_PERCENTILE
from .model import BBox, CameraModel, Pose
from .tf import Transform, is_optical_frame

if TYPE_CHECKING:
    from .config import DepthConfig

CENTRAL_SHARE = 0.6  # the middle share of the box's width and height used for the range
MAX_SAMPLES = 1600  # pixels sampled per box region (a grid stride keeps it cheap)
MIN_POINTS = 8  # fewer valid readings than this: no depth fix (dropouts)
MIN_VALID_SHARE = 0.08  # ... or fewer than this share of the sampled central pixels
NEAR_MODE_SHARE = 0.35  # a nearer bin with this share of the peak's count starts the cluster
GROW_SHARE = 0.08  # neighbouring bins with at least this share of the start bin join it
TOP_MIN_DROP_M = 0.09  # the camera this far above an object's top sees the top recede (``_top_surface``)
TOP_END_PERCENTILE = 90.0  # ... its far edge: this percentile of where the columns that saw it recede saw it end
TOP_BAND_M = 0.1  # ... only from columns whose topmost reading is this near the object's top (90th percentile of
# the columns'): lower, the column sees a leg, the floor under a glass top or what stands in front, not the top
TOP_MAX_ROW_STEP_M = 0.3  # ... and where a level top there steps at most this far between sampled rows (far off,
# one row spans most of a table: a row or two of the box above its far edge put it 0.6-0.8 m beyond)
JUMP_M = 0.06  # a depth step bigger than this (plus 3 sigma) between neighbours is an edge
BEHIND_WIDTH_SHARE = 0.75  # unseen extent along the view, as a share of the width, when seen face on
BEHIND_SIGMA_SHARE = 0.3  # the unseen half extent behind the visible surface is a guess to this share (1 sigma)
MAX_EXTENT_M = 2.5
FLOOR_BAND_M = 0.04  # readings this near the floor plane are floor, not the object
FLOOR_AGREE_M = 0.15  # the floor a depth image shows, this near the camera height given (an estimate from floor
# contacts, up to ~0.1 m off), is the floor (a bed or table top taken for it lies 0.25 m or more off)
FLOOR_SIGMAS = 2.0  # ... or nearer than this many sigmas of the height error their depth noise makes
NEAR_PERCENTILE = 15.0  # the object's front: this percentile of its readings' depths (not a bin edge: noise-biased)
CUT_VAR_M2 = 0.5  # added to both variances of a fix whose box the image border cuts
OUTLINE_SHARE = 0.05  # readings at either end of the outline (by bearing) that locate its corners
OUTLINE_DEPTH_PERCENTILE = 75.0  # ... the corner's depth: this percentile of theirs
ROW_THIN = 4  # widths and extents sample every column and (stride^2 / this)-th row (a table top seen from
# the side spans few rows)
KEEP_SHARE = 0.25  # other objects' boxes are left out of a box only if this share of its readings remains
EDGE_MARGIN_SHARE = 0.05  # a box edge within this share of the image width of its border may be a cut box's
# edge where the detector's box stopped short: it is cut when the object's depth reaches the border ...
MIN_SPAN_SHARE = 0.25  # readings spanning less of the box's angle than this are something in front of the
# object (a chair before a table, a thing no box was detected for), not the object: no fix
MIN_CONSENSUS = 3  # fixes of one object in a chunk from which one that disagrees with the rest is left out ...
OUTLIER_SIGMAS = 3.0  # ... when farther from their median than this many of its own and their spread's sigmas
OCCLUDED_SHARE = 0.5  # readings beyond the object's depths that outnumber its own in the box's middle: the
# near mode may have taken a thing in front of the object (something 0.5 m before the camera inside a bed's
# box gave a fix 2.8 m short with sigma 0.05 m); its surface points then stay out of the object's extents
# (whatever the share, the range variance covers the gap to them with that share's odds: ``_fix``)
EDGE_ROW_SHARE = 0.3  # ... in the image's outermost columns in at least this share of the box's rows
BACK_STRIP_SHARE = 0.2  # the strips just outside a box (either side, above) read for a surface behind the object,
# as a share of the box's width (sides) and height (above)
BACK_COVER_SHARE = 0.4  # a strip shows that surface when this share of its lines (rows / columns) reach it
BACK_AGREE_M = 0.12  # ... and two strips see it (plus 3 sigma) at the same depth along the view: a wall the
# object stands against, whose depth bounds the object's far side


@dataclass(frozen=True)
class DepthNoise:
    """Depth noise of a stereo/ToF RGB-D camera: sigma(z) = base_m + quadratic * z^2 (metres).
    The defaults are a RealSense D435-class camera at 640 px (about 1 % at 2 m, 4 % at 5 m)."""

    base_m: float = 0.003
    quadratic: float = 0.006
    min_m: float = 0.2
    max_m: float = 8.0

    def sigma(self, z: float | np.ndarray) -> float | np.ndarray:
        return self.base_m + self.quadratic * np.square(z)


@dataclass(frozen=True)
class DepthFix:
    """One detection measured with depth, in the camera's optical frame (x right, z forward)."""

    x_m: float  # lateral offset of the object's centre (right positive)
    z_m: float  # optical depth of the object's centre (its visible surface plus half its extent)
    surface_m: float  # median depth of the visible surface
    var_z: float  # m^2 along the view
    var_x: float  # m^2 across it
    width_m: float  # footprint across the view
    extent_m: float  # footprint along the view (visible spread, or a share of the width)
    points: int  # valid readings the range came from
    y_m: float = 0.0  # vertical offset of the centre (down positive), for a pitched camera
    spread_m: float = 0.0  # depth spread (10th to 90th percentile) of the visible surface
    cut: bool = False  # the object goes on beyond the image's left or right border
    bearing_rad: float = 0.0  # the line of sight's angle right of the optical axis: var_z lies along it
    cut_side: int = 0  # +1: it goes on beyond the right border only (its left end is seen), -1: the left only
    occluded: bool = False  # more of the box's middle lies beyond these readings than on them (OCCLUDED_SHARE)
    beyond_var: float = 0.0  # m^2 of var_z that is the doubt whether the readings are the object's (a thing in front)

    def in_map(self, pose: Pose, pitch_rad: float = 0.0) -> tuple[tuple[float, float], np.ndarray]:
        """The fix in the map plane: ((x, y), 2x2 covariance). ``pose`` is the camera's pose
        (x, y, yaw) as keyframes carry it; ``pitch_rad``: the camera looks down by this much."""
        xy = optical_to_map(np.array([[self.x_m, self.y_m, self.z_m]]), pose, pitch_rad)[0]
        yaw = pose.yaw - self.bearing_rad
        fwd = np.array([math.cos(yaw), math.sin(yaw)])
        left = np.array([-math.sin(yaw), math.cos(yaw)])
        cov = self.var_z * np.outer(fwd, fwd) + self.var_x * np.outer(left, left)
        return (float(xy[0]), float(xy[1])), cov


def optical_to_map(points: np.ndarray, pose: Pose, pitch_rad: float = 0.0) -> np.ndarray:
    """(N, 3) optical-frame points (x right, y down, z forward; m) of a camera at ``pose`` (x, y,
    yaw), looking down by ``pitch_rad``, as (N, 2) points on the map plane."""
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    forward = p[:, 2] * math.cos(pitch_rad) - p[:, 1] * math.sin(pitch_rad)
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    # right of the view is -left: (sin yaw, -cos yaw)
    return np.stack([pose.x + forward * c + p[:, 0] * s, pose.y + forward * s - p[:, 0] * c], axis=1)


def _grid(x1: int, y1: int, x2: int, y2: int) -> tuple[slice, slice]:
    area = max(1, (x2 - x1) * (y2 - y1))
    stride = max(1, int(math.ceil(math.sqrt(area / MAX_SAMPLES))))
    return slice(y1, y2, stride), slice(x1, x2, stride)


@dataclass(frozen=True)
class _Readings:
    """A box's object readings: the near-mode cluster of its central part, the depth interval it
    grew to over the whole box, and the readings in that interval (depth, image column, image row)."""

    cluster: np.ndarray
    lo: float
    hi: float
    zs: np.ndarray
    us: np.ndarray
    vs: np.ndarray
    cut: bool = False  # the object goes on beyond the image's left or right border
    backs: tuple[np.ndarray, ...] = ()  # per strip around the box (``_backdrop``), (N, 2) optical (x, z) readings
    cut_side: int = 0  # +1: it goes on beyond the right border only, -1: the left only (0: neither or both)
    beyond_share: float = 0.0  # of the central part's readings in or beyond the object's depths, those beyond
    beyond_gap_m: float = 0.0  # how far beyond the cluster's median those lie (their median)
    grown_hi: float | None = None  # the far end of the depth interval before its top seen receding extended it


def _object_readings(depth: np.ndarray, bbox: BBox, camera: CameraModel, noise: DepthNoise,
                     camera_height_m: float | None, others: Sequence[BBox]) -> _Readings | None:
    """The readings of the object in ``bbox`` (``object_depth``'s selection); None when too few."""
    h, w = depth.shape[:2]
    sx, sy = w / float(camera.width), h / float(camera.height)  # depth may be stored smaller
    bx1, by1 = max(0, int(bbox[0] * sx)), max(0, int(bbox[1] * sy))
    bx2, by2 = min(w, int(math.ceil(bbox[2] * sx))), min(h, int(math.ceil(bbox[3] * sy)))
    if bx2 - bx1 < 2 or by2 - by1 < 2:
        return None
    mx = (bx2 - bx1) * (1.0 - CENTRAL_SHARE) / 2.0
    my = (by2 - by1) * (1.0 - CENTRAL_SHARE) / 2.0
    cx1, cx2 = int(bx1 + mx), max(int(bx1 + mx) + 2, int(math.ceil(bx2 - mx)))
    cy1, cy2 = int(by1 + my), max(int(by1 + my) + 2, int(math.ceil(by2 - my)))
    central, ccols, crows = _sample(depth, cx1, cy1, min(w, cx2), min(h, cy2), noise)
    central = _without_others(central, crows, ccols, others, sx, sy)
    if central.size == 0:
        return None
    valid = np.isfinite(central)
    keep = valid & ~_flying(central, noise)
    z = central[keep]
    if z.size < max(MIN_POINTS, MIN_VALID_SHARE * central.size):
        keep = valid
        z = central[valid]  # a thin object may be all edge at this stride: use every reading
        if z.size < max(MIN_POINTS, MIN_VALID_SHARE * central.size):
            return None
    lo, hi = _near_mode(z, noise)
    cluster = z[(z >= lo) & (z <= hi)]
    # the object's readings over the whole box: the central cluster grown over neighbouring depths
    # (a table top seen from above reaches back to the table's far edge), the floor left out
    full, us, frows = _sample(depth, bx1, by1, bx2, by2, noise, every_column=True)
    full = _without_others(full, frows, us, others, sx, sy)
    if camera_height_m:
        full = _without_floor(full, frows, sy, camera, camera_height_m, noise)
    lo2, hi2 = _grow(full[np.isfinite(full)], lo, hi, noise)
    inside = np.isfinite(full) & (full >= lo2) & (full <= hi2)
    left, right = _reaches_border(depth, bx1, by1, bx2, by2, lo2, hi2, noise, sy, camera, camera_height_m)
    left, right = left or bbox[0] <= BORDER_PX, right or bbox[2] >= camera.width - BORDER_PX
    cut, grown_hi = left or right, None
    median = float(np.median(cluster))
    backs = () if cut else _backdrop(depth, (bx1, by1, bx2, by2), median, noise, camera, camera_height_m, others)
    wall = _wall_behind(backs, 1.0, 0.0, noise)  # (optical depth, as the readings')
    # a cut view's top runs on along the object past the border (no depth there); a small thing's top
    # is short, and the rows above it are what it stands on, or in front of (a counter's top behind a kettle);
    # a box reaching above the image's middle row is of a thing as high as the camera: its top is not seen
    if camera_height_m and not cut and bbox[1] > camera.cy and _box_angle(bbox, camera) * median >= HULL_MIN_WIDTH_M:
        far = lo2 + MAX_EXTENT_M
        if wall is not None:  # the top ends before a wall seen around the box (the wall shows above it)
            far = min(far, wall - JUMP_M - float(noise.sigma(wall)))
        top = _top_surface(full, inside, frows, sy, camera, camera_height_m, noise, far)
        if top.any():  # the object's top seen receding beyond what the depth interval grew over: its far
            # edge where the columns saw it end (a few rows of the box show it: not all reach the far edge)
            ends = np.nanmax(np.where(top, full, np.nan)[:, top.any(axis=0)], axis=0)
            grown_hi, inside, hi2 = hi2, inside | top, max(hi2, float(np.percentile(ends, TOP_END_PERCENTILE)))
    ucols = np.broadcast_to(((us + 0.5) / sx)[None, :], full.shape)[inside]
    vrows = np.broadcast_to(((frows + 0.5) / sy)[:, None], full.shape)[inside]
    share, gap = _beyond(np.where(keep, central, np.nan), crows, sy, camera, camera_height_m, noise, lo2, hi2,
                         median, wall)
    return _Readings(cluster, lo2, hi2, full[inside], ucols, vrows, cut, backs, int(right) - int(left), share, gap,
                     grown_hi)


def _beyond(central: np.ndarray, rows: np.ndarray, sy: float, camera: CameraModel, camera_height_m: float | None,
            noise: DepthNoise, lo: float, hi: float, surface: float, wall: float | None) -> tuple[float, float]:
    """Of the box's central readings (the floor left out) that lie in the object's depth interval
    [lo, hi] or beyond it, the share beyond, and their median's depth beyond ``surface``. Readings
    as deep as ``wall``, a wall seen around the box (``_wall_behind``), less a depth jump, are that
    wall seen through the object (between a chair's slats), not something inside the box behind
    the readings."""
    if camera_height_m:
        central = _without_floor(central, rows, sy, camera, camera_height_m, noise)
    z = central[np.isfinite(central)]
    back = wall - JUMP_M - 3.0 * float(noise.sigma(wall)) if wall is not None else np.inf
    far = z[(z > hi) & (z < back)]
    own = int(((z >= lo) & (z <= hi)).sum())
    if far.size == 0:
        return 0.0, 0.0
    return far.size / float(far.size + own), max(0.0, float(np.median(far)) - surface)


def _backdrop(depth: np.ndarray, box: tuple[int, int, int, int], surface: float, noise: DepthNoise,
              camera: CameraModel, camera_height_m: float | None, others: Sequence[BBox]) -> tuple[np.ndarray, ...]:
    """What shows just outside the box beyond the object's visible surface (deeper than
    ``surface`` by a depth jump plus one sigma): in a strip either side (the box's upper half of
    rows: the floor shows low) and one above it (its middle columns), other boxes and the floor
    left out. Per strip, those readings as (N, 2) optical (x, z); a strip where fewer than
    BACK_COVER_SHARE of its lines across (rows beside, columns above) reach beyond gives an
    empty array. A wall the object stands against shows in all of them at the depth of its back
    (far away, where the noise merges the two, inside the object's own depth interval too)."""
    h, w = depth.shape[:2]
    sx, sy = w / float(camera.width), h / float(camera.height)
    bx1, by1, bx2, by2 = box
    dw, dh = max(2, int(BACK_STRIP_SHARE * (bx2 - bx1))), max(2, int(BACK_STRIP_SHARE * (by2 - by1)))
    gap = max(1, dw // 4)  # a detector's box is a little loose: skip the columns next to it
    mid = (by1 + by2) // 2
    mx = (bx2 - bx1) // 4
    strips = ((max(0, bx1 - gap - dw), by1, max(0, bx1 - gap), mid, 1),
              (min(w, bx2 + gap), by1, min(w, bx2 + gap + dw), mid, 1),
              (bx1 + mx, max(0, by1 - gap - dh), bx2 - mx, max(0, by1 - gap), 0))
    tol = JUMP_M + float(noise.sigma(surface))
    out = []
    for x1, y1, x2, y2, across_rows in strips:
        if x2 - x1 < 2 or y2 - y1 < 2:
            out.append(np.zeros((0, 2)))
            continue
        region, cols, rows = _sample(depth, x1, y1, x2, y2, noise)
        region = _without_others(region, rows, cols, others, sx, sy)
        if camera_height_m:
            region = _without_floor(region, rows, sy, camera, camera_height_m, noise)
        with np.errstate(invalid="ignore"):
            beyond = np.where(region > surface + tol, region, np.inf)
        ok = np.isfinite(beyond)
        lines = ok.any(axis=across_rows)
        if lines.sum() < max(2, BACK_COVER_SHARE * lines.size):
            out.append(np.zeros((0, 2)))
            continue
        z = beyond[ok].astype(float)
        u = np.broadcast_to(cols[None, :] + 0.5, beyond.shape)[ok]
        out.append(np.stack([(u / sx - camera.cx) / camera.fx * z, z], axis=1))
    return tuple(out)


def _wall_behind(backs: tuple[np.ndarray, ...], cb: float, sb: float, noise: DepthNoise) -> float | None:
    """The depth along the line of sight (cos, sin of its bearing) of a surface seen behind the
    object just outside its box (``_backdrop``): the median depth of each strip that shows one;
    where two or more agree (within BACK_AGREE_M plus 3 sigma; either side and above of a wall
    turned to the view: above, the middle of the two sides), the one above the object (its own
    columns), else the sides' mean. None where fewer than two strips see it or they disagree (a
    chair behind a table, the room beyond a doorway)."""
    d = [float(np.median(b[:, 0] * sb + b[:, 1] * cb)) if b.size else None for b in backs]
    if len(d) != 3:
        return None
    seen = [x for x in d if x is not None]
    if len(seen) < 2:
        return None
    left, right, above = d
    sides = [x for x in (left, right) if x is not None]
    tol = BACK_AGREE_M + 3.0 * float(noise.sigma(min(seen)))
    if above is not None and sides:
        return above if abs(above - float(np.mean(sides))) <= tol else None
    if len(sides) == 2 and abs(left - right) <= tol:
        return 0.5 * (left + right)
    return None


def _reaches_border(depth: np.ndarray, bx1: int, by1: int, bx2: int, by2: int, lo: float, hi: float,
                    noise: DepthNoise, sy: float, camera: CameraModel,
                    camera_height_m: float | None) -> tuple[bool, bool]:
    """Does the object whose readings lie in [lo, hi] go on to the image's (left, right) border
    although its box stops short of it (by less than EDGE_MARGIN_SHARE of the width: a detector's
    box jitters by a few pixels)? Its surface then shows in the outermost columns, in its depth
    interval (widened by the noise), in EDGE_ROW_SHARE of the box's rows."""
    h, w = depth.shape[:2]
    margin = EDGE_MARGIN_SHARE * w
    tol = JUMP_M + 3.0 * float(noise.sigma(hi))
    out = []
    for near_border, cols in ((bx1 <= margin, slice(0, 2)), (w - bx2 <= margin, slice(w - 2, w))):
        out.append(False)
        if not near_border:
            continue
        strip = depth[by1:by2, cols].astype(np.float32, copy=True)
        if camera_height_m:
            strip = _without_floor(strip, np.arange(by1, by2), sy, camera, camera_height_m, noise)
        with np.errstate(invalid="ignore"):
            hit = ((strip >= lo - tol) & (strip <= hi + tol)).any(axis=1)
        out[-1] = bool(hit.sum() >= EDGE_ROW_SHARE * max(1, by2 - by1))
    return out[0], out[1]


def object_points(depth: np.ndarray, bbox: BBox, camera: CameraModel, noise: DepthNoise = DepthNoise(),
                  camera_height_m: float | None = None, others: Sequence[BBox] = ()) -> np.ndarray | None:
    """The object's readings in ``bbox`` as points in the camera's optical frame, an (N, 3) array of
    (x right, y down, z forward) metres (the readings ``object_depth`` measures the object from);
    None when there are fewer than MIN_POINTS."""
    r = _object_readings(depth, bbox, camera, noise, camera_height_m, others)
    return _optical_points(r, camera)


def _optical_points(r: _Readings | None, camera: CameraModel) -> np.ndarray | None:
    if r is None or r.zs.size < MIN_POINTS:
        return None
    return np.stack([(r.us - camera.cx) / camera.fx * r.zs, (r.vs - camera.cy) / camera.fy * r.zs, r.zs], axis=1)


def object_depth(depth: np.ndarray, bbox: BBox, camera: CameraModel, noise: DepthNoise = DepthNoise(),
                 camera_height_m: float | None = None, others: Sequence[BBox] = ()) -> DepthFix | None:
    """The object in ``bbox`` measured from ``depth`` (float32 metres, NaN = none, registered to
    the image the box is in); None when the box has too few valid readings. With
    ``camera_height_m`` (a level camera that high above a flat floor) floor readings in the box
    are left out of the object's extent. ``others``: the boxes of the other objects detected in
    the same image; their pixels are left out (a chair in front of a counter is the chair's),
    unless too few of the box's readings would remain (the object is inside the other box: a
    kettle on a counter)."""
    return _fix(_object_readings(depth, bbox, camera, noise, camera_height_m, others), bbox, camera, noise)


def _fix(r: _Readings | None, bbox: BBox, camera: CameraModel, noise: DepthNoise) -> DepthFix | None:
    """``object_depth`` of the readings ``r``."""
    if r is None:
        return None
    cluster, lo2, hi2, zs, ucols = r.cluster, r.lo, r.hi, r.zs, r.us
    surface = float(np.median(cluster))
    found = zs.size > 0
    if zs.size < MIN_POINTS:
        zs, ucols = cluster, np.full(cluster.shape, (bbox[0] + bbox[2]) / 2.0)
    xs = (ucols - camera.cx) / camera.fx * zs
    # across and along the line of sight, not the optical axis: an object near the image's side
    # is seen at up to half the field of view off the axis, where its face toward the camera
    # spans little of the optical x and much of z (a 1 m armchair 40 deg off the axis measured
    # 0.2 m wide); readings rotated by the bearing of their middle
    bearing = math.atan2(float(np.median(xs)), float(np.median(zs))) if zs.size >= MIN_POINTS else 0.0
    cb, sb = math.cos(bearing), math.sin(bearing)
    ls, ds = xs * cb - zs * sb, xs * sb + zs * cb
    x_lo, x_hi = np.percentile(ls, [5, 95]) if zs.size >= MIN_POINTS else (
        (bbox[0] - camera.cx) / camera.fx * surface, (bbox[2] - camera.cx) / camera.fx * surface)
    # the extent from the populated histogram bins: a top seen from above thins out toward its
    # far edge (fewer pixels per metre), which percentiles would cut short
    near, far = (lo2, hi2) if zs.size >= MIN_POINTS and found else (float(zs.min()), float(zs.max()))
    spread = far - near
    z_span = float(np.subtract(*np.percentile(zs, [98, 2]))) if bearing else 0.0
    if z_span > 0.0:  # ... along the line of sight
        spread *= float(np.subtract(*np.percentile(ds, [98, 2]))) / z_span
    width = float(max(0.02, x_hi - x_lo))
    x_mid = 0.5 * (x_lo + x_hi)
    if zs.size >= MIN_POINTS and width < MIN_SPAN_SHARE * _box_angle(bbox, camera) * float(np.median(ds)):
        return None
    # seen from above or at an angle, the readings reach from the object's near side to its far
    # side; face on, only its front shows, and its depth is taken as half its width
    # what the readings span less the noise's own spread (its 2nd-98th percentile either end: far
    # off, sigma 0.2-0.3 m, the interval grew a metre over a 0.4 m deep sideboard); a far end where
    # its top was seen to end (``_top_surface``) is the object's edge, not the noise's tail
    ends = 1.0 if r.grown_hi is not None else 2.0
    seen = max(0.0, spread - ends * HULL_NOISE_SIGMAS * float(noise.sigma(surface)))
    face_on = BEHIND_WIDTH_SHARE * width / 2.0
    behind = min(MAX_EXTENT_M / 2.0, max(0.5 * seen, face_on))
    # ... but the noise hides where the object ends as much as it did: the variance's guess at the
    # unseen half keeps the whole span (trimmed, far fixes grew surer while their objects' depth was
    # no better known: fresh varied big objects within 2 sigma 0.90 -> 0.80; variedvar)
    loose = min(MAX_EXTENT_M / 2.0, max(0.5 * spread, face_on))
    front = near
    if zs.size >= MIN_POINTS:
        # the outline's two ends (the readings at the smallest and largest bearing): seen at an
        # angle, they are the corners either side of the near one, and a box's centre is their
        # midpoint (the hidden corner completes the parallelogram); face on, the front face's ends
        front = float(np.percentile(ds, NEAR_PERCENTILE))
        mid_x, mid_z = _outline_mid(ls, ds)
        if mid_z - front > behind:
            behind, x_mid = min(MAX_EXTENT_M / 2.0, mid_z - front), mid_x
        loose = max(loose, min(MAX_EXTENT_M / 2.0, mid_z - front))
        wall = _wall_behind(r.backs, cb, sb, noise)
        if wall is not None:
            # a wall the object stands against shows around it: its far side reaches no farther
            # (the face-on guess, a share of the width, put a shallow shelf's centre beyond it)
            gap, wall_sigma = wall - front, float(noise.sigma(front))

            def bounded(half: float, span: float) -> float:
                return max(0.5 * span, 0.5 * gap, 0.5 * wall_sigma) if JUMP_M + wall_sigma < gap < 2.0 * half else half

            behind, loose = bounded(behind, seen), bounded(loose, spread)
    extent = 2.0 * behind
    # the centre back in the optical frame
    dc = front + behind
    x_mid, zc = x_mid * cb + dc * sb, -x_mid * sb + dc * cb
    v_mid = ((bbox[1] + bbox[3]) / 2.0 - camera.cy) / camera.fy * zc
    sigma = float(noise.sigma(surface))
    n = int(cluster.size)
    # correlated noise (one disparity error moves a whole patch): averaging helps only so much
    # a far side the top was seen to reach is measured, not guessed: it does not loosen the fix
    # beyond what the depth interval before that reach made it (a bed's longer fixes, weighted less, left
    # its centre to the bearings of views from one side: 0.43 -> 2.07 m off)
    guess = loose if r.grown_hi is None else min(loose, max(0.5 * (r.grown_hi - lo2), face_on))
    var_z = sigma ** 2 / min(n, 16) + sigma ** 2 * 0.25 + (BEHIND_SIGMA_SHARE * guess) ** 2
    var_x = (2.0 * dc / camera.fx) ** 2 + (0.15 * width) ** 2 + (0.1 * sigma) ** 2
    # part of the box's middle lies beyond these readings: they may be a thing in front of the
    # object (the box is drawn around the object), not the object, and the range is then off by
    # the gap to what lies beyond, with that share's odds (its mean square error). At any share:
    # a third of a tv stand's box beyond a thing 2.3 m before it gave a fix 2.8 m short with sigma
    # 0.12 m that, with one other fix in its chunk (no outlier test), drew the stand's centre 0.85 m off
    beyond_var = r.beyond_share * r.beyond_gap_m ** 2
    var_z += beyond_var
    occluded = r.beyond_share > OCCLUDED_SHARE
    if r.cut:
        # cut by the image border: the object goes on beyond it, its middle is not the box's
        # (by as much as the widest furniture): both its middle and its depth are loose
        var_x += (0.6 * width) ** 2 + CUT_VAR_M2
        var_z += (0.5 * loose) ** 2 + CUT_VAR_M2
    return DepthFix(float(x_mid), float(zc), surface, float(var_z), float(var_x), width, extent, n, float(v_mid),
                    spread, r.cut, bearing, r.cut_side, occluded, float(beyond_var))


def _box_angle(bbox: BBox, camera: CameraModel) -> float:
    """The angle (rad) the box spans across the image."""
    return math.atan((bbox[2] - camera.cx) / camera.fx) - math.atan((bbox[0] - camera.cx) / camera.fx)


def _outline_mid(xs: np.ndarray, zs: np.ndarray) -> tuple[float, float]:
    """Midpoint (x, z) of the object's outline ends: the median reading among the OUTLINE_SHARE
    of readings at the smallest bearing (x / z) and among those at the largest."""
    order = np.argsort(xs / zs)
    k = max(2, int(OUTLINE_SHARE * zs.size))
    lo, hi = order[:k], order[-k:]
    # an end seen at a slant (a side face foreshortened into a few columns) reaches back: its
    # deeper readings, not its median, are the corner
    return (0.5 * float(np.median(xs[lo]) + np.median(xs[hi])),
            0.5 * float(np.percentile(zs[lo], OUTLINE_DEPTH_PERCENTILE) + np.percentile(zs[hi], OUTLINE_DEPTH_PERCENTILE)))


def _sample(depth: np.ndarray, x1: int, y1: int, x2: int, y2: int,
            noise: DepthNoise, every_column: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The region's readings on a grid (NaN outside the sensor's range), the grid's columns and rows;
    at full resolution when the grid catches too few readings (a sparse cloud's depth image).
    ``every_column``: sample rows only (for widths: a column grid aliases with sparse points)."""
    rows, cols = _grid(x1, y1, x2, y2)
    if every_column:
        rows, cols = slice(y1, y2, max(1, (rows.step or 1) ** 2 // ROW_THIN)), slice(x1, x2, 1)
    for rs, cs in ((rows, cols), (slice(y1, y2), slice(x1, x2))):
        region = depth[rs, cs].astype(np.float32, copy=True)
        with np.errstate(invalid="ignore"):
            region[~((region >= noise.min_m) & (region <= noise.max_m))] = np.nan
        if (rs.step in (None, 1) and cs.step in (None, 1)) or np.isfinite(region).sum() >= 4 * MIN_POINTS:
            break
    return (region, np.arange(x1, x2)[::cs.step or 1][: region.shape[1]],
            np.arange(y1, y2)[::rs.step or 1][: region.shape[0]])


def _without_others(region: np.ndarray, rows: np.ndarray, cols: np.ndarray, others: Sequence[BBox],
                    sx: float, sy: float) -> np.ndarray:
    """``region`` with the pixels inside ``others`` (image boxes) set to NaN, when at least
    KEEP_SHARE of its readings (and MIN_POINTS) remain; else as it is."""
    if not others:
        return region
    u, v = (cols + 0.5) / sx, (rows + 0.5) / sy
    covered = np.zeros(region.shape, dtype=bool)
    for b in others:
        covered |= ((v >= b[1]) & (v <= b[3]))[:, None] & ((u >= b[0]) & (u <= b[2]))[None, :]
    valid = np.isfinite(region)
    left = int((valid & ~covered).sum())
    if left < max(MIN_POINTS, KEEP_SHARE * int(valid.sum())):
        return region
    out = region.copy()
    out[covered] = np.nan
    return out


def _flying(region: np.ndarray, noise: DepthNoise) -> np.ndarray:
    """Readings that differ by a depth jump from both neighbours along a row or a column: between
    two surfaces ("flying pixels" at an object's outline), or a lone spike. A reading with a
    neighbour on its own surface is kept."""
    jump = JUMP_M + 3.0 * noise.sigma(np.nan_to_num(region, nan=0.0))
    out = np.zeros(region.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        if region.shape[1] >= 3:
            left = np.abs(region[:, 1:-1] - region[:, :-2]) > jump[:, 1:-1]
            right = np.abs(region[:, 1:-1] - region[:, 2:]) > jump[:, 1:-1]
            out[:, 1:-1] |= left & right
        if region.shape[0] >= 3:
            up = np.abs(region[1:-1, :] - region[:-2, :]) > jump[1:-1, :]
            down = np.abs(region[1:-1, :] - region[2:, :]) > jump[1:-1, :]
            out[1:-1, :] |= up & down
    return out


def floor_band(slope: np.ndarray, depth: np.ndarray, noise: DepthNoise) -> np.ndarray:
    """How far (m) above or below the floor plane a reading may lie and still be floor: FLOOR_BAND_M
    plus FLOOR_SIGMAS of the height error its depth noise makes (a reading ``slope`` = (v - cy) / fy
    below the optical axis at ``depth`` is off in height by slope times the depth's sigma)."""
    return FLOOR_BAND_M + FLOOR_SIGMAS * np.abs(slope) * noise.sigma(depth)


def _without_floor(region: np.ndarray, rows: np.ndarray, sy: float, camera: CameraModel,
                   camera_height_m: float, noise: DepthNoise) -> np.ndarray:
    """``region`` with readings on the floor plane set to NaN: within FLOOR_BAND_M of it plus
    FLOOR_SIGMAS of the height error a reading's depth noise makes (a reading (v - cy) / fy * z
    below the axis is off by (v - cy) / fy * sigma(z): far away, the floor just in front of an
    object, inside its box, scatters over the object's depths)."""
    rows = (np.asarray(rows)[: region.shape[0]] + 0.5) / sy  # the region's rows (depth image rows)
    slope = ((rows - camera.cy) / camera.fy)[:, None]  # tan of each row's angle below the axis
    below = slope * region  # metres below the optical axis
    out = region.copy()
    with np.errstate(invalid="ignore"):
        out[np.abs(below - camera_height_m) < floor_band(slope, region, noise)] = np.nan
    return out


def _top_surface(full: np.ndarray, inside: np.ndarray, rows: np.ndarray, sy: float, camera: CameraModel,
                 camera_height_m: float, noise: DepthNoise, far: float) -> np.ndarray:
    """The readings of ``full`` (rows x columns, top row first) outside ``inside`` that continue the
    object's top surface away from the camera: a camera above an object sees its top recede, row
    by row up the image, to its far edge, and there the readings thin out (a row's depth step
    grows with the square of the range) so the histogram grow stops short (a 2 m bed seen from
    its foot measured 1 m deep, a sofa seen end-on 0.5 m: the centre sat near the seen face).
    Per column, from the object's topmost reading upward: readings at its height (within
    FLOOR_BAND_M plus FLOOR_SIGMAS of the height error their depth noise makes), each farther than the last by at least half the step
    a level surface there makes between the rows (a wall or the object's back rising at that
    height stays at one depth) and at most twice it (plus JUMP_M), give or take 3 sigma (one
    dropout bridged); the first other reading ends it (the floor beyond the far edge, a wall),
    as does the depth ``far`` (MAX_EXTENT_M from the object's near side, or a wall seen around
    the box). None of a column where the camera is not TOP_MIN_DROP_M above its top."""
    out = np.zeros(full.shape, dtype=bool)
    rows = (np.asarray(rows)[: full.shape[0]] + 0.5) / sy
    slope = ((rows - camera.cy) / camera.fy)[:, None]  # tan of each row's angle below the axis
    with np.errstate(invalid="ignore"):
        height = camera_height_m - slope * full
    with np.errstate(invalid="ignore"):
        tol = floor_band(slope, full, noise)
    first = np.where(inside.any(axis=0), np.argmax(inside, axis=0), -1)  # each column's topmost object row
    dv = float(np.median(np.diff(rows))) if rows.size > 1 else 1.0
    cols = np.flatnonzero(first > 0)
    top = height[first[cols], cols]  # the object's top in each column (where the camera sees it)
    drop = camera_height_m - top  # how far the camera looks down on it
    ok = (drop >= TOP_MIN_DROP_M) & (top >= FLOOR_BAND_M)
    if ok.any():  # columns that see the top itself, not a leg or the floor under it
        ok &= top >= float(np.percentile(top[ok], TOP_END_PERCENTILE)) - TOP_BAND_M
    cols, top, drop, first = cols[ok], top[ok], drop[ok], first[cols[ok]]
    z0 = full[first, cols].astype(float)  # ... and near enough for the rows to resolve it
    keep = dv * z0 * z0 / (camera.fy * drop) <= TOP_MAX_ROW_STEP_M
    cols, top, drop, first = cols[keep], top[keep], drop[keep], first[keep]
    prev, miss = full[first, cols].astype(float), np.zeros(cols.size)
    alive = np.ones(cols.size, dtype=bool)
    for i in range(int(first.max(initial=0)) - 1, -1, -1):  # up the image, all columns at once
        act = alive & (i < first)
        if not act.any():
            if not alive.any():
                break
            continue
        z = full[i, cols].astype(float)
        gone = act & ~np.isfinite(z)
        miss[gone] += 1
        alive &= ~(gone & (miss > 1))  # one dropout bridged
        act &= ~gone
        with np.errstate(invalid="ignore"):
            step = (1 + miss) * dv * prev * prev / (camera.fy * drop)
            rise, sigma = z - prev, 3.0 * noise.sigma(z)
            on = (np.abs(height[i, cols] - top) < tol[i, cols]) & (z <= far) & \
                (rise >= 0.5 * step - sigma) & (rise <= 2.0 * step + JUMP_M + sigma)
        alive &= ~(act & ~on)
        take = act & on
        out[i, cols[take]] = ~inside[i, cols[take]]
        prev[take], miss[take] = z[take], 0
    return out


def _grow(z: np.ndarray, lo: float, hi: float, noise: DepthNoise) -> tuple[float, float]:
    """Extend the depth interval [lo, hi] over neighbouring well-populated histogram bins of
    ``z`` (gaps of one bin bridged), at most MAX_EXTENT_M in all."""
    if z.size == 0:
        return lo, hi
    step = max(0.03, 2.0 * float(noise.sigma(0.5 * (lo + hi))))
    zmin, zmax = max(float(z.min()), hi - MAX_EXTENT_M), min(float(z.max()), lo + MAX_EXTENT_M)
    if zmax <= zmin:
        return lo, hi
    nbins = min(400, int(math.ceil((zmax - zmin) / step)) + 1)
    counts, edges = np.histogram(z, bins=nbins, range=(zmin, zmin + nbins * step))
    a = int(np.clip((lo - zmin) // step, 0, nbins - 1))
    b = int(np.clip((hi - zmin) // step, 0, nbins - 1))
    floor = max(2, GROW_SHARE * float(counts[a:b + 1].max(initial=0)))
    while a - 1 >= 0 and (counts[a - 1] >= floor or (a - 2 >= 0 and counts[a - 2] >= floor)):
        a -= 1
    while b + 1 < nbins and (counts[b + 1] >= floor or (b + 2 < nbins and counts[b + 2] >= floor)):
        b += 1
    return min(lo, float(edges[a])), max(hi, float(edges[b + 1]))


def _near_mode(z: np.ndarray, noise: DepthNoise) -> tuple[float, float]:
    """(low, high) depth bounds of the nearest well-populated cluster of readings ``z``."""
    zmin, zmax = float(z.min()), float(z.max())
    step = max(0.03, 2.0 * float(noise.sigma(float(np.median(z)))))
    if zmax - zmin <= step:
        return zmin, zmax
    nbins = min(400, int(math.ceil((zmax - zmin) / step)) + 1)
    counts, edges = np.histogram(z, bins=nbins, range=(zmin, zmin + nbins * step))
    peak = int(counts.max())
    start = int(np.argmax(counts >= max(2, NEAR_MODE_SHARE * peak)))
    # the start bin may sit on the cluster's near flank: move to the local maximum behind it
    while start + 1 < nbins and counts[start + 1] > counts[start]:
        start += 1
    floor = max(1, GROW_SHARE * counts[start])
    lo = hi = start
    gap = 0
    while lo - 1 >= 0 and (counts[lo - 1] >= floor or (gap == 0 and lo - 2 >= 0 and counts[lo - 2] >= floor)):
        gap += counts[lo - 1] < floor
        lo -= 1
    gap = 0
    while hi + 1 < nbins and (counts[hi + 1] >= floor or (gap == 0 and hi + 2 < nbins and counts[hi + 2] >= floor)):
        gap += counts[hi + 1] < floor
        hi += 1
    return float(edges[lo]), float(edges[hi + 1])


def floor_height(depth: np.ndarray, camera: CameraModel, min_share: float = 0.3) -> float | None:
    """The height (m) of a level camera above the floor, from the lower image of its depth: each
    reading there lies (v - cy) / fy * z below the optical axis, and the floor, most of what the
    lower image shows, piles those up at one height. None when no height holds ``min_share`` of
    the readings within 3 cm (the view is all furniture, or the camera is not level)."""
    h = depth.shape[0]
    sy = h / float(camera.height)
    start = int((camera.cy + 0.25 * (camera.height - camera.cy)) * sy)
    rows = slice(start, h, max(1, (h - start) // 40))
    region = depth[rows, :: max(1, depth.shape[1] // 80)]
    v = (np.arange(h)[rows][: region.shape[0]] + 0.5) / sy
    below = ((v - camera.cy) / camera.fy)[:, None] * region
    below = below[np.isfinite(below) & (below > 0.1) & (below < 3.0)]
    if below.size < 50:
        return None
    counts, edges = np.histogram(below, bins=np.arange(0.1, 3.0 + 0.01, 0.01))
    k = int(np.argmax(counts))
    near = np.abs(below - 0.5 * (edges[k] + edges[k + 1])) < 0.03
    if near.sum() < min_share * below.size:
        return None
    return float(np.median(below[near]))


def obstacle_points(depth: np.ndarray, camera: CameraModel, camera_height_m: float, pitch_rad: float = 0.0,
                    min_height_m: float = 0.08, max_height_m: float = 2.0, max_range_m: float = 4.0,
                    samples: int = 6000) -> np.ndarray:
    """What a robot standing there would bump into, as seen in ``depth``: readings (on a grid of
    about ``samples``) between ``min_height_m`` and ``max_height_m`` above the floor of a camera
    ``camera_height_m`` high, looking down by ``pitch_rad``, no farther than ``max_range_m`` (depth
    noise grows with the square of the range); (N, 3) optical-frame points."""
    h, w = depth.shape[:2]
    stride = max(1, int(math.ceil(math.sqrt(h * w / float(samples)))))
    z = depth[::stride, ::stride].astype(np.float64)
    sy, sx = h / float(camera.height), w / float(camera.width)
    v = ((np.arange(h)[::stride] + 0.5) / sy)[:, None]
    u = ((np.arange(w)[::stride] + 0.5) / sx)[None, :]
    y = (v - camera.cy) / camera.fy * z
    x = (u - camera.cx) / camera.fx * z
    with np.errstate(invalid="ignore"):
        height = camera_height_m - (y * math.cos(pitch_rad) + z * math.sin(pitch_rad))
        keep = np.isfinite(z) & (z > 0.0) & (z <= max_range_m) & (height >= min_height_m) & (height <= max_height_m)
    return np.stack([x[keep], y[keep], z[keep]], axis=1)


FLOOR_WINDOW_PX = 1  # a floor point is read from the depth pixels this far around where it projects (3 x 3)


@dataclass(frozen=True)
class FloorSight:
    """One keyframe's depth as a record of where its camera SAW THE FLOOR: a camera ray that ended
    on the floor at a place passed above everything between (a sofa's readings on the 2D line from
    the camera to the floor in front of it do not hide that floor; its seat is not floor). Read
    where it is asked (``seen``), from the depth stored with the keyframe: nothing more is kept."""

    depth: np.ndarray  # float32 metres, NaN = none (``KeyframeDepths.get``)
    camera: CameraModel
    pose: Pose
    camera_height_m: float  # the camera's height above that floor (``floor_height``, ``goals.camera_heights``)
    pitch_rad: float = 0.0
    noise: DepthNoise = DepthNoise()

    def blur_m(self, range_m: float | np.ndarray) -> float | np.ndarray:
        """How far (m) along its ray before a floor point ``range_m`` off a surface may stand and
        still read as that floor (``seen``): the floor band's height over the ray's slope (its
        height over its range) plus FLOOR_SIGMAS of the depth noise."""
        return FLOOR_BAND_M * range_m / max(self.camera_height_m, 1e-3) + FLOOR_SIGMAS * self.noise.sigma(range_m)

    def seen(self, points_xy: np.ndarray, max_range_m: float = 4.0) -> np.ndarray:
        """Per map point of ``points_xy`` (K, 2): did this depth read the floor there? Its floor
        point projects into the image no farther than ``max_range_m`` ahead, and of the valid
        readings within FLOOR_WINDOW_PX of that pixel at least 2, and more than half, lie on the
        floor plane (within FLOOR_BAND_M plus FLOOR_SIGMAS of the height error their depth noise
        makes, as ``_without_floor``): a reading above it is something standing between."""
        p = np.asarray(points_xy, dtype=float).reshape(-1, 2)
        out = np.zeros(len(p), dtype=bool)
        if p.size == 0:
            return out
        c, s = math.cos(self.pose.yaw), math.sin(self.pose.yaw)
        dx, dy = p[:, 0] - self.pose.x, p[:, 1] - self.pose.y
        ahead, right = dx * c + dy * s, dx * s - dy * c  # optical_to_map, inverted, the point on the floor
        cp, sp, hc = math.cos(self.pitch_rad), math.sin(self.pitch_rad), self.camera_height_m
        z, y = ahead * cp + hc * sp, hc * cp - ahead * sp
        ok = (ahead > 0.0) & (ahead <= max_range_m) & (z > self.noise.min_m)
        if not ok.any():
            return out
        h, w = self.depth.shape[:2]
        sx, sy = w / float(self.camera.width), h / float(self.camera.height)
        idx = np.flatnonzero(ok)
        col = np.floor((self.camera.fx * right[idx] / z[idx] + self.camera.cx) * sx).astype(np.int64)
        row = np.floor((self.camera.fy * y[idx] / z[idx] + self.camera.cy) * sy).astype(np.int64)
        inside = (col >= 0) & (col < w) & (row >= 0) & (row < h)
        idx, col, row = idx[inside], col[inside], row[inside]
        if idx.size == 0:
            return out
        k = np.arange(-FLOOR_WINDOW_PX, FLOOR_WINDOW_PX + 1)
        rr = np.broadcast_to(np.clip(row[:, None, None] + k[None, :, None], 0, h - 1), (len(idx), k.size, k.size))
        cc = np.broadcast_to(np.clip(col[:, None, None] + k[None, None, :], 0, w - 1), rr.shape)
        zr = self.depth[rr, cc].astype(np.float64).reshape(len(idx), -1)
        slope = ((rr + 0.5) / sy - self.camera.cy).reshape(len(idx), -1) / self.camera.fy  # y / z of each pixel
        with np.errstate(invalid="ignore"):
            height = hc - zr * (slope * cp + sp)  # above the floor, as obstacle_points reads it
            band = floor_band(slope, zr, self.noise)
            valid = np.isfinite(zr) & (zr > 0.0)
            floor = valid & (np.abs(height) < band)
        n_floor, n_valid = floor.sum(axis=1), valid.sum(axis=1)
        out[idx] = (n_floor >= 2) & (2 * n_floor > n_valid)
        return out



# Line of sight: did a view that faced a thing and did not see it have a clear line to it, or did
# something stand between? Read along the thing's bearing, in the rows where its vertical line shows
# from SIGHT_ABOVE_M above the camera's height down to the floor under it, SIGHT_WINDOW_PX columns
# either side (the median of each row's readings; dropouts ignored). A row whose reading is nearer than the
# thing by SIGHT_MARGIN_M plus SIGHT_SIGMAS of the depth noise there is blocked (a wall, a door
# frame, furniture): the margin is what the thing's front lies before its estimated centre plus
# that estimate's error (a plant's half depth and some tenths of a metre; on read seeds 733 and
# 747 the views that saw them read 0.15 m or less before their centres).
SIGHT_WINDOW_PX = 1
SIGHT_ABOVE_M = 0.5
SIGHT_MARGIN_M = 0.5
SIGHT_SIGMAS = 3.0
SIGHT_MIN_ROWS = 3  # fewer rows with a reading than this: the depth cannot tell (None)
# A wall blocks the whole band, up to the ceiling; furniture before the thing (a counter, a sofa)
# blocks its lower rows only, those at and above the camera's height passing over it: a line is
# clear where at least SIGHT_OPEN_SHARE of the rows reach the thing's range (a thing hidden behind
# a counter is missed for that, not for a wall between rooms; read seed 733: kitchen views over
# the table and counter to the plant 6-8 m off read the kitchen's far wall above them).
SIGHT_OPEN_SHARE = 0.25


def line_of_sight(depth: np.ndarray, camera: CameraModel, pose: Pose, target_xy: tuple[float, float],
                  camera_height_m: float, pitch_rad: float = 0.0, noise: DepthNoise = DepthNoise()) -> bool | None:
    """Whether this depth image (float32 m, NaN = none; any size registered to ``camera``: a
    decimated one reads the same) had a clear line from the camera at ``pose`` (x, y, yaw) to the
    map point ``target_xy``: True when its readings along that bearing reach the point's range,
    False when fewer than SIGHT_OPEN_SHARE of the rows reach it (something nearer stood between) (see above), None
    when the point is behind the camera, outside the image or beyond the sensor's range, or fewer
    than SIGHT_MIN_ROWS rows have a reading (dropouts)."""
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    dx, dy = target_xy[0] - pose.x, target_xy[1] - pose.y
    ahead, right = dx * c + dy * s, dx * s - dy * c  # as FloorSight.seen
    if ahead <= noise.min_m or math.hypot(ahead, right) > noise.max_m or camera_height_m <= 0.0:
        return None  # no reading could reach it: beyond the sensor's range
    h, w = depth.shape[:2]
    sx, sy = w / float(camera.width), h / float(camera.height)
    # the rays' slopes (y / z) from SIGHT_ABOVE_M above the camera's height to the floor under the point
    top = math.tan(math.atan2(-SIGHT_ABOVE_M, ahead) - pitch_rad)
    bottom = math.tan(math.atan2(camera_height_m, ahead) - pitch_rad)
    r0 = max(0, int(math.floor((camera.cy + camera.fy * top) * sy)))
    r1 = min(h - 1, int(math.floor((camera.cy + camera.fy * bottom) * sy)))
    if r1 < r0:
        return None
    rows = np.arange(r0, r1 + 1)
    slope = ((rows + 0.5) / sy - camera.cy) / camera.fy
    cp, sp = math.cos(pitch_rad), math.sin(pitch_rad)
    along = cp - slope * sp  # forward (map) distance per metre of optical depth along each row's ray
    ok = along > 1e-6
    rows, slope, along = rows[ok], slope[ok], along[ok]
    z_obj = ahead / along  # optical depth where each row's ray meets the point's vertical line
    col = np.floor((camera.fx * right / z_obj + camera.cx) * sx).astype(np.int64)
    inside = (col >= 0) & (col < w)
    if inside.sum() < SIGHT_MIN_ROWS:
        return None
    rows, z_obj, col = rows[inside], z_obj[inside], col[inside]
    k = np.arange(-SIGHT_WINDOW_PX, SIGHT_WINDOW_PX + 1)
    cc = np.clip(col[:, None] + k[None, :], 0, w - 1)
    zr = depth[np.broadcast_to(rows[:, None], cc.shape), cc].astype(np.float64)
    zr[~(zr > 0.0)] = np.nan  # dropouts (NaN, or no reading written as 0)
    valid = np.isfinite(zr).any(axis=1)
    if valid.sum() < SIGHT_MIN_ROWS:
        return None
    with np.errstate(invalid="ignore"):
        reading = np.nanmedian(zr[valid], axis=1)
    reach = reading >= z_obj[valid] - SIGHT_MARGIN_M - SIGHT_SIGMAS * noise.sigma(z_obj[valid])
    return bool(reach.mean() >= SIGHT_OPEN_SHARE)


# --- point clouds --------------------------------------------------------------------------
# sensor_msgs/PointField datatypes -> numpy kinds
POINT_FIELD_TYPES = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 8: "f8"}


def cloud_xyz(fields: list[tuple[str, int, int, int]], width: int, height: int, point_step: int,
              row_step: int, data: bytes | np.ndarray, is_bigendian: bool = False) -> np.ndarray:
    """A sensor_msgs/PointCloud2 buffer -> Nx3 float32 (x, y, z), points with a NaN or inf
    coordinate dropped. ``fields``: (name, offset, datatype, count) per PointField. Rows of
    ``row_step`` bytes (possibly padded) of ``width`` points of ``point_step`` bytes."""
    byname = {f[0]: f for f in fields}
    missing = [n for n in ("x", "y", "z") if n not in byname]
    if missing:
        raise ValueError(f"PointCloud2 has no field {missing[0]!r} (fields: {[f[0] for f in fields]})")
    buf = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    width, height = int(width), max(1, int(height))
    if width <= 0:
        return np.zeros((0, 3), dtype=np.float32)
    if point_step <= 0 or row_step < width * point_step or buf.size < row_step * (height - 1) + width * point_step:
        raise ValueError(f"PointCloud2 {width}x{height}, point_step {point_step}, row_step {row_step} "
                         f"has {buf.size} bytes: inconsistent or truncated")
    order = ">" if is_bigendian else "<"
    cols = []
    for name in ("x", "y", "z"):
        _, offset, datatype, _count = byname[name]
        kind = POINT_FIELD_TYPES.get(int(datatype))
        if kind is None:
            raise ValueError(f"PointCloud2 field {name!r} has unknown datatype {datatype}")
        if offset + np.dtype(kind).itemsize > point_step:
            raise ValueError(f"PointCloud2 field {name!r} at offset {offset} lies outside the {point_step}-byte point")
        dt = np.dtype({"names": [name], "formats": [order + kind], "offsets": [int(offset)], "itemsize": int(point_step)})
        rows = [np.frombuffer(buf, dtype=dt, count=width, offset=r * int(row_step))[name] for r in range(height)]
        cols.append(np.concatenate(rows).astype(np.float32))
    pts = np.column_stack(cols)
    return pts[np.isfinite(pts).all(axis=1)]


def transform_points(points: np.ndarray, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """p' = R p + t for Nx3 points (the transform from the cloud's frame to the camera's)."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    # (R p^T)^T: the same product, 10x faster than p @ R^T for a depth image's 400k points
    return (np.asarray(rotation, dtype=np.float64) @ p.T).T + np.asarray(translation, dtype=np.float64)


def quaternion_matrix(qx: float, qy: float, qz: float, qw: float) -> np.ndarray:
    """3x3 rotation matrix of a unit quaternion (normalised here)."""
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw) or 1.0
    x, y, z, w = qx / n, qy / n, qz / n, qw / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


MAX_PATCH_PX = 16  # a registered depth reading covers at most this many colour pixels a side
ALIAS_M, ALIAS_RAD = 1e-3, 1e-3  # a depth frame this close to the colour frame is another name for it

# REP 103 body axes (x forward, y left, z up) -> optical axes (x right, y down, z forward)
BODY_TO_OPTICAL = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])


def optical_from_transform(cloud_in_camera: Transform, camera_frame: str) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) moving points into ``camera_frame``'s optical convention (x right, y down, z forward)
    from the looked-up transform ``camera_frame <- cloud frame``; a camera frame that is not an
    optical one (a REP 103 body frame, x forward) is turned into it."""
    rot, trans = quaternion_matrix(*cloud_in_camera.q), np.array(cloud_in_camera.t, dtype=float)
    if not is_optical_frame(camera_frame):
        rot, trans = BODY_TO_OPTICAL @ rot, BODY_TO_OPTICAL @ trans
    return rot, trans


def cloud_to_camera(depth_cfg: "DepthConfig", camera_frame: str, cloud_frame: str, stamp_ns: int,
                    lookup: Callable[[str, str, int], Transform] | None) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) moving a cloud's points into the camera's optical frame, bags and live alike:
    ``depth.cloud_frame_to_camera`` when set (it wins); else, when the cloud names another frame
    than the image and there is TF (``lookup(target, source, stamp_ns)``, raising ValueError or
    LookupError), ``camera_frame <- cloud_frame`` at the image's stamp; else none (the cloud is
    taken as in the optical frame). Raises ValueError naming the missing transform: the frame is
    then used without depth, never with a made-up one."""
    camera_frame, cloud_frame = camera_frame.lstrip("/"), cloud_frame.lstrip("/")
    if (depth_cfg.cloud_frame_to_camera.strip() or lookup is None or not camera_frame or not cloud_frame
            or cloud_frame == camera_frame):
        return depth_cfg.cloud_transform()
    return _tf_to_camera(camera_frame, cloud_frame, stamp_ns, lookup, "the cloud's")


def _tf_to_camera(camera_frame: str, source_frame: str, stamp_ns: int, lookup: Callable[[str, str, int], Transform],
                  whose: str) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) into the camera's optical frame from TF ``camera_frame <- source_frame`` at the stamp;
    ValueError naming the missing transform."""
    try:
        tr = lookup(camera_frame, source_frame, stamp_ns)
    except (LookupError, ValueError) as e:
        raise ValueError(f"no transform from {whose} frame to the camera: {e}") from e
    return optical_from_transform(tr, camera_frame)


def is_unregistered(depth_frame: str, camera_frame: str) -> bool:
    """A depth image naming another frame than the colour image is not registered to it (an RGB-D
    driver without ``align_depth``: the depth camera sits a few cm beside the colour one). Either
    frame unnamed: taken as registered (nothing says otherwise)."""
    depth_frame, camera_frame = depth_frame.lstrip("/"), camera_frame.lstrip("/")
    return bool(depth_frame and camera_frame and depth_frame != camera_frame)


def depth_to_points(depth: np.ndarray, camera: CameraModel, corners: bool = False):
    """A depth image (m, NaN / 0 / inf = no reading) in the optical frame of the camera that took
    it -> Nx3 points there; pixel (u, v) is the ray through its centre (u + 0.5, v + 0.5). An image
    of another size than ``camera`` (a decimated stream) is scaled by the size ratio. ``corners``:
    also the points at each reading's pixel's four corners, at its depth (the patch it stands for):
    (points, [top-left, top-right, bottom-left, bottom-right])."""
    d = np.asarray(depth, dtype=np.float64)
    if d.ndim != 2:
        raise ValueError(f"depth image has shape {d.shape}, expected rows x columns")
    h, w = d.shape
    sx, sy = w / float(camera.width), h / float(camera.height)
    with np.errstate(invalid="ignore"):
        vs, us = np.nonzero(np.isfinite(d) & (d > 0))
    z = d[vs, us]

    def at(du: float, dv: float) -> np.ndarray:
        out = np.empty((z.size, 3))
        out[:, 0] = ((us + du) / sx - camera.cx) / camera.fx * z
        out[:, 1] = ((vs + dv) / sy - camera.cy) / camera.fy * z
        out[:, 2] = z
        return out

    if not corners:
        return at(0.5, 0.5)
    return at(0.5, 0.5), [at(du, dv) for dv in (0.0, 1.0) for du in (0.0, 1.0)]


def depth_image_to_camera(depth_frame: str, camera_frame: str, stamp_ns: int,
                          lookup: Callable[[str, str, int], Transform] | None) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) moving the optical-frame points of a depth image in ``depth_frame`` into the colour
    camera's optical frame: TF ``camera_frame <- depth_frame`` at the image's stamp (RGB-D drivers
    publish that mount on ``/tf_static`` whether or not they align). Not ``depth.cloud_frame_to_camera``:
    that is the cloud sensor's mount (a robot may carry a LiDAR too). A depth frame that is not an
    optical one (x forward) names the body axes its optical image is turned from. ValueError: no TF."""
    if lookup is None:
        raise ValueError(f"no transform from the depth image's frame {depth_frame!r} to the camera "
                         f"{camera_frame!r}: no TF (the camera driver's mount on /tf_static; live, "
                         f"capture.pose_source auto or tf)")
    rot, trans = _tf_to_camera(camera_frame.lstrip("/"), depth_frame.lstrip("/"), stamp_ns, lookup,
                               f"the depth image's {depth_frame.lstrip('/')!r}")
    if not is_optical_frame(depth_frame):
        rot = rot @ BODY_TO_OPTICAL.T  # its optical points -> its body axes, then as TF says
    return rot, trans


def register_depth(depth: np.ndarray, depth_camera: CameraModel, rotation: np.ndarray, translation: np.ndarray,
                   camera: CameraModel, noise: DepthNoise = DepthNoise()) -> np.ndarray:
    """A depth image taken by ``depth_camera`` -> depth registered to ``camera`` (float32 m, NaN =
    none): each reading back-projected (``depth_to_points``), moved by (R, t) into the colour
    camera's optical frame and projected there, nearest per pixel (``cloud_to_depth``), covering
    the colour pixels its own pixel's patch covers, so a coarser depth camera leaves no holes."""
    pts, corners = depth_to_points(depth, depth_camera, corners=True)
    return cloud_to_depth(transform_points(pts, rotation, translation), camera, noise,
                          [transform_points(c, rotation, translation) for c in corners])


def registered_depth(depth: np.ndarray, depth_frame: str, depth_camera: CameraModel | None, camera: CameraModel,
                     camera_frame: str, stamp_ns: int, lookup: Callable[[str, str, int], Transform] | None,
                     noise: DepthNoise = DepthNoise(), depth_topic: str = "") -> np.ndarray:
    """A decoded depth image as depth registered to the colour image, bags and live alike: as it
    is when it names the colour image's frame (or either names none, or TF says the two are one:
    ``depth_frame_is_colour``); else registered with the
    depth camera's intrinsics and TF (``register_depth``). ValueError saying what to set when the
    depth camera's CameraInfo or the transform is missing: never a mis-registered depth."""
    if not is_unregistered(depth_frame, camera_frame):
        return depth
    try:  # one TF lookup: it says both whether the frames are one and how to move between them
        rot, trans = depth_image_to_camera(depth_frame, camera_frame, stamp_ns, lookup)
    except ValueError:
        if depth_camera is None:
            raise ValueError(unregistered_hint(depth_frame, camera_frame, depth_topic)) from None
        raise
    if _same_camera(rot, trans):
        return depth
    if depth_camera is None:
        raise ValueError(unregistered_hint(depth_frame, camera_frame, depth_topic))
    return register_depth(depth, depth_camera, rot, trans, camera, noise)


def depth_frame_is_colour(depth_frame: str, camera_frame: str, stamp_ns: int,
                          lookup: Callable[[str, str, int], Transform] | None) -> bool:
    """The depth image names the colour image's frame, or another name for it: TF puts the two
    within ``ALIAS_M`` and ``ALIAS_RAD`` of each other (a driver that aligns but names its own
    frame; two cameras never stand in one place), so it is aligned and used as it is."""
    if not is_unregistered(depth_frame, camera_frame):
        return True
    try:
        rot, trans = depth_image_to_camera(depth_frame, camera_frame, stamp_ns, lookup)
    except ValueError:
        return False
    return _same_camera(rot, trans)


def _same_camera(rot: np.ndarray, trans: np.ndarray) -> bool:
    """(R, t) between two optical frames within ``ALIAS_M`` and ``ALIAS_RAD``: one camera."""
    return bool(np.abs(trans).max() <= ALIAS_M and np.abs(rot - np.eye(3)).max() <= ALIAS_RAD)


def unregistered_hint(depth_frame: str, camera_frame: str, depth_topic: str = "") -> str:
    """The one-line message for a depth image in another frame than the colour image without its
    camera's CameraInfo (what to set)."""
    base = depth_topic.strip().rstrip("/")
    if base.lower().endswith("compresseddepth"):
        base = base.rsplit("/", 1)[0]
    example = (base.rsplit("/", 1)[0] + "/camera_info") if "/" in base else "camera/depth/camera_info"
    return (f"depth image in {depth_frame.lstrip('/')!r}, not the colour image's {camera_frame.lstrip('/')!r} "
            f"(not aligned): set depth.camera_info_topic to the depth camera's CameraInfo (e.g. {example}) "
            f"to register it, or align it in the driver (align_depth.enable:=true); no depth until then")


def cloud_to_depth(points_cam: np.ndarray, camera: CameraModel, noise: DepthNoise = DepthNoise(),
                   patches: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """Points in the camera's optical frame -> a depth image registered to it (float32 m, NaN
    where no point falls), keeping the nearest point per pixel. A sparse cloud (LiDAR) fills few
    pixels; ``object_depth`` needs only a few inside a box. ``patches`` (Nx3 corner points, one
    array per corner, for a depth image's readings): each point covers the pixels whose centres lie
    in the box around its corners' projections (at least its own pixel; ``MAX_PATCH_PX`` a side
    at most)."""
    depth = np.full((camera.height, camera.width), np.inf, dtype=np.float32)
    p = np.asarray(points_cam, dtype=np.float64).reshape(-1, 3)
    keep = (p[:, 2] >= noise.min_m) & (p[:, 2] <= noise.max_m)
    p = p[keep]
    if p.size:
        uv = camera.project(p)
        u, v = np.floor(uv[:, 0]), np.floor(uv[:, 1])
        nu = nv = np.ones(len(p))
        if patches is not None:
            corners = np.stack([camera.project(np.asarray(c, dtype=np.float64).reshape(-1, 3)[keep]) for c in patches])
            with np.errstate(invalid="ignore"):
                lo, hi = corners.min(axis=0), corners.max(axis=0)  # NaN where a corner is behind the camera
            (u, nu), (v, nv) = (_centres_between(lo[:, i], hi[:, i], c) for i, c in ((0, u), (1, v)))
        ok = np.isfinite(u) & np.isfinite(v) & (u + nu > 0) & (u < camera.width) & (v + nv > 0) & (v < camera.height)
        u, v, nu, nv = (x[ok].astype(np.int64) for x in (u, v, nu, nv))
        z = p[ok, 2].astype(np.float32)
        for du in range(int(nu.max(initial=0))):
            for dv in range(int(nv.max(initial=0))):
                sel = (du < nu) & (dv < nv) & (u + du >= 0) & (u + du < camera.width) & (v + dv >= 0) & (v + dv < camera.height)
                np.minimum.at(depth, (v[sel] + dv, u[sel] + du), z[sel])
    depth[~np.isfinite(depth)] = np.nan
    return depth


def _centres_between(lo: np.ndarray, hi: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first pixel, how many) whose centres (i + 0.5) lie in [lo, hi); ``own`` pixel where none does."""
    first = np.ceil(lo - 0.5)
    with np.errstate(invalid="ignore"):
        n = np.minimum(np.ceil(hi - 0.5) - first, MAX_PATCH_PX)
        none = ~(n >= 1)  # also a NaN (a corner at or behind the camera)
    return np.where(none, own, first), np.where(none, 1.0, n)


# --- keyframe depth in a memory ------------------------------------------------------------
def stored_depth(frames, tour_id: str, stamp_ns: int) -> np.ndarray | None:
    """The keyframe's stored depth (frame store ``get_depth``), decoded (float32 m, NaN = none);
    None when it stored none or its file is damaged (a reader then does without it)."""
    from .images import decode_depth_png

    try:
        png = frames.get_depth(tour_id, stamp_ns)
        return decode_depth_png(png) if png else None
    except (OSError, ValueError):
        return None


class KeyframeDepths:
    """A memory's stored keyframe depth (frame store ``get_depth``), decoded once: the few
    keyframes of a chunk are asked for once per box."""

    def __init__(self, frames, capacity: int = 48) -> None:
        self.frames = frames
        self.capacity = capacity
        self._cache: dict[tuple[str, int], np.ndarray] = {}
        self._heights: dict[tuple[str, int], float | None] = {}

    def get(self, tour_id: str, stamp_ns: int) -> np.ndarray | None:
        key = (tour_id, int(stamp_ns))
        if key in self._cache:
            return self._cache[key]
        depth = stored_depth(self.frames, tour_id, stamp_ns)  # None: the object is placed without it
        if depth is not None:  # a keyframe without depth is asked again: its depth may come later
            if len(self._cache) >= self.capacity:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = depth
        return depth

    def camera_height(self, tour_id: str, stamp_ns: int, camera: CameraModel) -> float | None:
        """The camera's height above the floor seen in this keyframe's depth (``floor_height``)."""
        key = (tour_id, int(stamp_ns))
        if key not in self._heights:
            depth = self.get(tour_id, stamp_ns)
            if depth is None:
                return None
            self._heights[key] = floor_height(depth, camera)
            if len(self._heights) > 4 * self.capacity:
                self._heights.pop(next(iter(self._heights)))
        return self._heights[key]

    def has(self, tour_id: str, stamp_ns: int) -> bool:
        return (tour_id, int(stamp_ns)) in self._cache or self.frames.has_depth(tour_id, stamp_ns)


def add_depth_fix(acc, depths: KeyframeDepths, tour_id: str, stamp_ns: int, pose: Pose, bbox: BBox,
                  camera: CameraModel, noise: DepthNoise, pitch_rad: float = 0.0,
                  camera_height_m: float | None = None, others: Sequence[BBox] = ()) -> DepthFix | None:
    """Measure ``bbox`` in the keyframe's stored depth and add the fix to ``acc`` (a
    geometry.RayAccumulator); the fix, or None when the keyframe has no (usable) depth there."""
    m = _measure(acc, depths, tour_id, stamp_ns, pose, bbox, camera, noise, pitch_rad, camera_height_m, others)
    if m is not None:
        _add_measured(acc, m)
    return m.fix if m is not None else None


@dataclass(frozen=True)
class _Measured:
    fix: DepthFix
    xy: tuple[float, float]
    cov: np.ndarray
    points: np.ndarray | None  # (N, 2) map-plane surface points
    yaw: float
    noise_m: float = 0.0  # the depth noise (sigma) at the object's surface
    origin: tuple[float, float] = (0.0, 0.0)  # the camera's position in the map plane


def _measure(acc, depths: KeyframeDepths, tour_id: str, stamp_ns: int, pose: Pose, bbox: BBox,
             camera: CameraModel, noise: DepthNoise, pitch_rad: float, camera_height_m: float | None,
             others: Sequence[BBox]) -> _Measured | None:
    depth = depths.get(tour_id, stamp_ns)
    if depth is None:
        return None
    acc.depth_tried += 1  # measured, whatever comes of it: a re-solve need not measure it again
    seen = depths.camera_height(tour_id, stamp_ns, camera)  # the floor this very depth image shows
    # that floor where it agrees with the height given (an estimate from the tour's floor contacts,
    # centimetres off: floor readings then passed for the object's), else the height given
    if seen and (not camera_height_m or abs(seen - camera_height_m) <= FLOOR_AGREE_M):
        camera_height_m = seen
    r = _object_readings(depth, bbox, camera, noise, camera_height_m, others)
    fix = _fix(r, bbox, camera, noise)
    if fix is None:
        return None
    xy, cov = fix.in_map(pose, pitch_rad)
    pts = _before_wall(_optical_points(r, camera), r, fix, noise)
    return _Measured(fix, xy, cov, optical_to_map(pts, pose, pitch_rad) if pts is not None else None, pose.yaw,
                     float(noise.sigma(fix.surface_m)), (pose.x, pose.y))


def _before_wall(pts: np.ndarray | None, r: _Readings, fix: DepthFix, noise: DepthNoise) -> np.ndarray | None:
    """The object's surface points (optical (N, 3)) without the readings at or beyond a wall seen
    around its box (``_wall_behind``): the wall shows through and above the object inside its box
    within the depths its readings grew over (a chair's back against the wall), and made the
    surface measured across views deeper than the object (foot1). Kept as they are where no wall
    shows, or fewer than MIN_POINTS would remain."""
    if pts is None or not r.backs:
        return pts
    cb, sb = math.cos(fix.bearing_rad), math.sin(fix.bearing_rad)
    wall = _wall_behind(r.backs, cb, sb, noise)
    along = pts[:, 0] * sb + pts[:, 2] * cb
    front = float(np.percentile(along, NEAR_PERCENTILE))
    if wall is None or wall - front <= JUMP_M + float(noise.sigma(front)):
        return pts
    keep = along < wall - JUMP_M - float(noise.sigma(wall))
    return pts[keep] if int(keep.sum()) >= MIN_POINTS else pts


def _add_measured(acc, m: _Measured, points: bool = True) -> None:
    cut = m.fix.cut
    acc.add_depth(m.xy, m.cov, 0.0 if cut else m.fix.width_m, 0.0 if cut else m.fix.extent_m)
    # the surface it measured, kept across views (geometry: hull extents); not where a whole view's may be a
    # thing in front of the object (the extents are a union: one such view would grow them for good; a cut
    # view's join only near where the whole views put the object, ``_reach_whole``)
    if points and m.points is not None and not (m.fix.occluded and not cut):
        # cut on one side only, the view still saw the object's end on the other side: the
        # outline's end there (the readings' outermost bearing) is its extreme across that ray
        end = None
        if m.fix.cut_side:
            ray = np.arctan2(m.points[:, 1] - m.origin[1], m.points[:, 0] - m.origin[0])
            ray = m.yaw + np.angle(np.exp(1j * (ray - m.yaw)))  # unwrapped about the camera's heading
            sight = float(np.percentile(ray, 100.0 - HULL_PERCENTILE if m.fix.cut_side > 0 else HULL_PERCENTILE))
            end = (-m.fix.cut_side * math.sin(sight), m.fix.cut_side * math.cos(sight))
        acc.add_points(m.points, m.yaw, whole=not cut, end_dir=end, noise_m=m.noise_m,
                       sight_yaw=m.yaw - m.fix.bearing_rad)


def add_depth_fixes(acc, depths: KeyframeDepths, sightings, noise: DepthNoise, pitch_rad: float = 0.0,
                    camera_height_m: float | None = None) -> int:
    """``add_depth_fix`` for each of one object's ``sightings`` ((tour_id, stamp_ns, pose, bbox,
    camera, other boxes in that image)), leaving out the fixes that disagree with the others:
    with MIN_CONSENSUS or more, a fix farther from their median position than OUTLIER_SIGMAS
    times its own spread (its covariance's largest axis and the fixes' robust scatter about the
    median) measured something else (a thing in front no box covers, the wrong surface), and
    being near and small it is trusted most. Its own spread here leaves out the doubt that its
    readings are a thing in front (``DepthFix.beyond_var``): the others settle that doubt.
    Returns how many fixes were added."""
    ms = [m for t, s, pose, bbox, cam, others in sightings
          if (m := _measure(acc, depths, t, s, pose, bbox, cam, noise, pitch_rad, camera_height_m, others)) is not None]
    keep = np.ones(len(ms), dtype=bool)
    if len(ms) >= MIN_CONSENSUS:
        p = np.array([m.xy for m in ms])
        d = np.linalg.norm(p - np.median(p, axis=0), axis=1)
        scatter = 1.4826 * float(np.median(d))  # the median absolute deviation as a sigma
        own = np.array([float(np.linalg.eigvalsh(_measured_cov(m))[-1]) for m in ms])
        keep = d <= OUTLIER_SIGMAS * np.sqrt(own + scatter ** 2)
    reach = _reach_whole(ms)
    for m, k, r in zip(ms, keep, reach):
        if k:
            _add_measured(acc, m, points=bool(r))
    return int(keep.sum())


def _measured_cov(m: _Measured) -> np.ndarray:
    """The fix's map-plane covariance without the doubt that its readings are a thing in front."""
    yaw = m.yaw - m.fix.bearing_rad
    fwd = np.array([math.cos(yaw), math.sin(yaw)])
    return m.cov - m.fix.beyond_var * np.outer(fwd, fwd)


def _reach_whole(ms: list[_Measured]) -> np.ndarray:
    """Per measured view: may its surface points join the object's extents? A view cut by the
    image border has a loose fix (its variance is inflated, so it barely moves the object and
    the outlier test keeps it), but its points join the extents by min / max like any view's: a
    thing in front that no box was detected for (a coffee table before an armchair), taken by the
    near mode, grew the armchair's footprint by a metre (foot1). So a cut view's points join only
    where they come within the object's half size of where the uncut views put it (their fixes'
    median): half the largest side they measured (their median), plus OUTLIER_SIGMAS of their
    fixes' own spread and of the cut view's depth noise. Its own points, also a cut end of a long
    sofa, lie within that. Uncut views, and cut ones where no view is uncut, always join."""
    whole = [m for m in ms if not m.fix.cut]
    out = np.ones(len(ms), dtype=bool)
    if not whole:
        return out
    centre = np.median(np.array([m.xy for m in whole]), axis=0)
    half = 0.5 * float(np.median([max(m.fix.width_m, m.fix.extent_m) for m in whole]))
    spread = math.sqrt(float(np.median([np.linalg.eigvalsh(m.cov)[-1] for m in whole])))
    for i, m in enumerate(ms):
        if m.fix.cut and m.points is not None and m.points.size:
            near = float(np.percentile(np.linalg.norm(m.points - centre, axis=1), HULL_PERCENTILE))
            out[i] = near <= half + OUTLIER_SIGMAS * math.hypot(spread, m.noise_m)
    return out


def depth_pending(ray_stats: list[float], sightings: list[tuple[str, int]], depths: KeyframeDepths) -> bool:
    """Do more of an object's sightings ((tour_id, stamp_ns)) have stored depth than its sums
    measured? (Depth that arrived after the object was placed: ``redo_depth`` then.)"""
    from .geometry import RayAccumulator

    tried = RayAccumulator(ray_stats).depth_tried
    return sum(1 for t, s in sightings if depths.has(t, s)) > tried


def redo_depth(ray_stats: list[float], sightings, depths: KeyframeDepths, noise: DepthNoise,
               pitch_rad: float = 0.0, camera_height_m: float | None = None):
    """An object's sums with their depth part recomputed from every sighting that has depth now:
    ``sightings`` are (tour_id, stamp_ns, pose, bbox, camera). Returns the new
    geometry.RayAccumulator, or None when no more sightings have depth than were measured
    (nothing to re-solve). Bearing and floor sums are kept as they are."""
    from .geometry import RayAccumulator

    old = RayAccumulator(ray_stats)
    sightings = [s for s in sightings if s[2] is not None and depths.has(s[0], s[1])]
    if len(sightings) <= old.depth_tried:
        return None
    acc = RayAccumulator(old.to_list()[: RayAccumulator.FORWARD_SIZE])
    add_depth_fixes(acc, depths, [(*x, ()) for x in sightings], noise, pitch_rad, camera_height_m)
    return acc
