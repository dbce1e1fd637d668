"""Where is an object? Triangulation from bearings, without depth.

Each detection gives a ray in the map plane: from the camera position along heading + the
bearing of the box centre. The object position is the weighted least-squares point closest to
all rays, regularised by a weak prior that the object is ``PRIOR_RANGE_M`` ahead along each ray
(so a single view, or rays from one spot, still give a sensible estimate, and well-spread views
dominate the prior). The sums of the normal equations are kept (``RayAccumulator``) so an
object's estimate improves with every chunk it is seen in, at constant cost and storage.
Boxes cut by the image border have a biased centre and get a low weight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .model import BBox, CameraModel, Pose

PRIOR_RANGE_M = 2.5
PRIOR_WEIGHT = 0.003
MIN_RANGE_M = 0.3
MAX_RANGE_M = 12.0
BORDER_PX = 2.0
BORDER_WEIGHT = 0.15
MIN_PERP_VAR = 0.01  # ~0.1 m perpendicular error per ray at a few metres


@dataclass
class Ray:
    origin: tuple[float, float]
    angle: float  # map-frame direction (rad)
    weight: float = 1.0


def cut_by_border(bbox: BBox, camera: CameraModel) -> bool:
    """The box touches the left or right image border: the object goes on beyond it."""
    return bbox[0] <= BORDER_PX or bbox[2] >= camera.width - BORDER_PX


def ray_for(pose: Pose, bbox: BBox, camera: CameraModel) -> Ray:
    u = (bbox[0] + bbox[2]) / 2.0
    return Ray((pose.x, pose.y), pose.yaw + camera.bearing(u), BORDER_WEIGHT if cut_by_border(bbox, camera) else 1.0)


class RayAccumulator:
    """Weighted normal equations of the ray least squares: A, b, c (residual), prior sums."""

    SIZE = 10

    def __init__(self, values: list[float] | None = None) -> None:
        v = list(values) if values and len(values) == self.SIZE else [0.0] * self.SIZE
        self.a = np.array([[v[0], v[1]], [v[1], v[2]]])
        self.b = np.array([v[3], v[4]])
        self.c = v[5]
        self.prior_w = v[6]
        self.prior_b = np.array([v[7], v[8]])
        self.n = v[9]

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

    def merged(self, other: "RayAccumulator") -> "RayAccumulator":
        return RayAccumulator([x + y for x, y in zip(self.to_list(), other.to_list())])

    def to_list(self) -> list[float]:
        return [float(self.a[0, 0]), float(self.a[0, 1]), float(self.a[1, 1]), float(self.b[0]),
                float(self.b[1]), float(self.c), float(self.prior_w), float(self.prior_b[0]),
                float(self.prior_b[1]), float(self.n)]

    def residual_at(self, xy: tuple[float, float]) -> float:
        """Weighted mean squared perpendicular distance (m^2) from ``xy`` to the rays: how well
        a point agrees with these bearings, whatever the (often poorly known) range."""
        if self.n == 0:
            return float("nan")
        x = np.asarray(xy, dtype=float)
        return max(0.0, float(x @ self.a @ x - 2 * self.b @ x + self.c)) / max(self.prior_w, 1e-9)

    def solve(self) -> tuple[tuple[float, float], float] | None:
        """((x, y), variance m^2) or None without rays."""
        if self.n == 0:
            return None
        w = PRIOR_WEIGHT
        a = self.a + w * self.prior_w * np.eye(2)
        xy = np.linalg.solve(a, self.b + w * self.prior_b)
        # weighted mean squared perpendicular residual of the rays at the solution
        resid = self.residual_at((float(xy[0]), float(xy[1])))
        eig = float(np.linalg.eigvalsh(self.a)[0]) / max(self.prior_w, 1e-9)
        # eig ~0.5 for well-spread views, ~0 for parallel rays (then only the prior holds it)
        var = max(MIN_PERP_VAR, resid) / max(eig, 1e-3) / max(self.prior_w, 1.0) ** 0.5
        # rays of boxes cut by the border agree with each other yet miss the object (their
        # centres move with the cut): their consistency vouches for less
        var *= self.n / max(self.prior_w, 1e-9)
        return (float(xy[0]), float(xy[1])), float(min(2.0, max(0.02, var)))


def triangulate(rays: list[Ray]) -> tuple[tuple[float, float], float] | None:
    """Least-squares intersection of rays; ((x, y), variance m^2) or None without rays."""
    acc = RayAccumulator()
    for r in rays:
        acc.add(r)
    return acc.solve()


def fuse(p1: tuple[float, float], v1: float, p2: tuple[float, float], v2: float) -> tuple[tuple[float, float], float]:
    """Inverse-variance fusion of two position estimates."""
    w1, w2 = 1.0 / max(v1, 1e-6), 1.0 / max(v2, 1e-6)
    x = (w1 * p1[0] + w2 * p2[0]) / (w1 + w2)
    y = (w1 * p1[1] + w2 * p2[1]) / (w1 + w2)
    return (x, y), 1.0 / (w1 + w2)
