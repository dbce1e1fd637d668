"""Synthetic camera views for geometry tests: the box a pinhole camera sees of an object."""

from __future__ import annotations

import math

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
