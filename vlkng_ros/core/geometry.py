"""Where is an object? Triangulation from bearings, without depth.

Each detection gives a ray in the map plane: from the camera position along heading + the
bearing of the box centre. The object position is the least-squares point closest to all rays,
regularised by a weak prior that the object is ``prior_range_m`` ahead along each ray (so a
single view, or rays from one spot, still give a sensible estimate, and well-spread views
dominate the prior). The variance comes from how well the rays constrain the point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .model import BBox, CameraModel, Pose

PRIOR_RANGE_M = 2.5
PRIOR_WEIGHT = 0.08
MIN_RANGE_M = 0.3
MAX_RANGE_M = 12.0


@dataclass
class Ray:
    origin: tuple[float, float]
    angle: float  # map-frame direction (rad)


def ray_for(pose: Pose, bbox: BBox, camera: CameraModel) -> Ray:
    u = (bbox[0] + bbox[2]) / 2.0
    return Ray((pose.x, pose.y), pose.yaw + camera.bearing(u))


def triangulate(rays: list[Ray], prior_range_m: float = PRIOR_RANGE_M) -> tuple[tuple[float, float], float] | None:
    """Least-squares intersection of rays; returns ((x, y), variance m^2) or None without rays."""
    if not rays:
        return None
    a = np.zeros((2, 2))
    b = np.zeros(2)
    prior_a = np.zeros((2, 2))
    prior_b = np.zeros(2)
    for ray in rays:
        d = np.array([math.cos(ray.angle), math.sin(ray.angle)])
        p = np.array(ray.origin)
        proj = np.eye(2) - np.outer(d, d)  # distance-to-line metric
        a += proj
        b += proj @ p
        prior_a += np.eye(2)
        prior_b += p + prior_range_m * d
    w = PRIOR_WEIGHT
    xy = np.linalg.solve(a + w * prior_a, b + w * prior_b)
    # Keep the point in front of the cameras and within a plausible range of each of them.
    for ray in rays:
        d = np.array([math.cos(ray.angle), math.sin(ray.angle)])
        along = float((xy - np.array(ray.origin)) @ d)
        if along < MIN_RANGE_M or along > MAX_RANGE_M:
            return _fallback(rays, prior_range_m)
    # Perpendicular error per ray ~0.1 m (box-centre noise at a few metres); the rays' own
    # constraint (no prior) sets how that spreads along the weakest direction. Near-parallel rays
    # leave only the range prior: ~1 m^2.
    eig = float(np.linalg.eigvalsh(a)[0])
    return (float(xy[0]), float(xy[1])), min(1.0, max(0.02, 0.01 / max(eig, 1e-6)))


def _fallback(rays: list[Ray], prior_range_m: float) -> tuple[tuple[float, float], float]:
    pts = np.array([[r.origin[0] + prior_range_m * math.cos(r.angle),
                     r.origin[1] + prior_range_m * math.sin(r.angle)] for r in rays])
    xy = pts.mean(axis=0)
    return (float(xy[0]), float(xy[1])), 1.5


def fuse(p1: tuple[float, float], v1: float, p2: tuple[float, float], v2: float) -> tuple[tuple[float, float], float]:
    """Inverse-variance fusion of two position estimates."""
    w1, w2 = 1.0 / max(v1, 1e-6), 1.0 / max(v2, 1e-6)
    x = (w1 * p1[0] + w2 * p2[0]) / (w1 + w2)
    y = (w1 * p1[1] + w2 * p2[1]) / (w1 + w2)
    return (x, y), 1.0 / (w1 + w2)
