"""Synthetic camera views for geometry and capture tests: the box a pinhole camera sees of an
object; a cluttered 360-degree panorama with one red target, and the view a turning camera has of it."""

from __future__ import annotations

import math

import cv2
import numpy as np

from vlkng_ros.core.model import CameraModel, Pose


def floor_box(camera: CameraModel, pose: Pose, target: tuple[float, float], camera_height: float,
              width_m: float = 0.8, height_m: float = 0.9) -> tuple[float, float, float, float]:
    """The box of an object standing on the floor at ``target``, seen from ``pose`` by a camera
    ``camera_height`` above the floor: its bottom edge is the floor contact."""
    dx, dy = target[0] - pose.x, target[1] - pose.y
    depth = dx * math.cos(pose.yaw) + dy * math.sin(pose.yaw)
    lateral = -dx * math.sin(pose.yaw) + dy * math.cos(pose.yaw)
    u = camera.cx - camera.fx * lateral / depth
    half = camera.fx * width_m / 2.0 / depth
    bottom = camera.cy + camera.fy * camera_height / depth
    return (u - half, bottom - camera.fy * height_m / depth, u + half, bottom)


def pitched_floor_point(camera: CameraModel, forward_m: float, lateral_m: float, camera_height: float,
                        pitch_rad: float) -> tuple[float, float]:
    """Pixel (u, v) of a floor point ``forward_m`` ahead and ``lateral_m`` to the left of a camera
    ``camera_height`` above the floor that looks down by ``pitch_rad``."""
    depth = forward_m * math.cos(pitch_rad) + camera_height * math.sin(pitch_rad)
    down = -forward_m * math.sin(pitch_rad) + camera_height * math.cos(pitch_rad)
    return camera.cx - camera.fx * lateral_m / depth, camera.cy + camera.fy * down / depth


# A 90-degree camera turning inside a panorama (test_keyframe_coverage, test_ros_nodes)
PX_PER_DEG = 4
W, H = 90 * PX_PER_DEG, 240  # a 90-degree camera
RED = (230, 20, 20)


def panorama(red_at_deg: float, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pano = np.full((H, 360 * PX_PER_DEG, 3), 200, np.uint8)
    for size in (40, 6):  # grey-blue clutter, large and fine (never red)
        for _ in range(400 if size == 40 else 6000):
            x, y = int(rng.integers(0, pano.shape[1] - size)), int(rng.integers(0, H - size))
            c = int(rng.integers(0, 160))
            cv2.rectangle(pano, (x, y), (x + int(rng.integers(size // 5, size)), y + int(rng.integers(size // 5, size))),
                          (c, c, c + 60), -1)
    x = int(red_at_deg * PX_PER_DEG)
    pano[90:150, x - 12:x + 12] = RED
    return pano


def view(pano: np.ndarray, yaw_deg: float, blur_px: int = 0) -> np.ndarray:
    """The camera image facing ``yaw_deg`` (the image's centre column), with horizontal motion
    blur of ``blur_px`` (a turn during the exposure)."""
    cols = (np.arange(W) + int(round((yaw_deg - 45) * PX_PER_DEG))) % pano.shape[1]
    img = pano[:, cols].copy()
    return cv2.blur(img, (blur_px, 1)) if blur_px >= 3 else img


def shows_red(img: np.ndarray) -> bool:
    red = (img[..., 0] > 170) & (img[..., 1] < 80) & (img[..., 2] < 80)
    return int(red.sum()) >= 200
