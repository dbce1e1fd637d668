"""The robot's walk: room to room through doors, with in-place turns, look-arounds and stops.

The ground truth is sampled densely (``DT``); the camera and ``/pose`` sample it at their own,
unsynchronised rates. ``/pose`` carries SLAM-like error: a slow bounded drift plus jitter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vlkng_ros.eval.sim.world import World

DT = 0.02  # s, ground-truth sampling step


@dataclass
class Trajectory:
    t: np.ndarray  # s from the tour start
    x: np.ndarray
    y: np.ndarray
    yaw: np.ndarray  # unwrapped, rad
    omega: np.ndarray  # rad/s, yaw rate

    def at(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, yaw, omega) interpolated at ``times`` (s)."""
        return (np.interp(times, self.t, self.x), np.interp(times, self.t, self.y),
                np.interp(times, self.t, self.yaw), np.interp(times, self.t, self.omega))


class _Walker:
    def __init__(self, world: World, rng: np.random.Generator, start: tuple[float, float, float]):
        self.world = world
        self.rng = rng
        self.x, self.y, self.yaw = start
        self.t = 0.0
        self.samples: list[np.ndarray] = [np.array([[0.0, self.x, self.y, self.yaw, 0.0]])]

    def _emit(self, n: int, xs: np.ndarray, ys: np.ndarray, yaws: np.ndarray, omega: float) -> None:
        ts = self.t + DT * np.arange(1, n + 1)
        self.samples.append(np.column_stack([ts, xs, ys, yaws, np.full(n, omega)]))
        self.t, self.x, self.y, self.yaw = float(ts[-1]), float(xs[-1]), float(ys[-1]), float(yaws[-1])

    def turn_by(self, angle: float, rate: float) -> None:
        if abs(angle) < 1e-3:
            return
        n = max(1, int(math.ceil(abs(angle) / rate / DT)))
        yaws = self.yaw + angle * np.arange(1, n + 1) / n
        self._emit(n, np.full(n, self.x), np.full(n, self.y), yaws, angle / (n * DT))

    def turn_to(self, heading: float) -> None:
        delta = (heading - self.yaw + math.pi) % (2 * math.pi) - math.pi
        self.turn_by(delta, float(self.rng.uniform(0.5, 1.5)))

    def drive_to(self, x: float, y: float) -> None:
        dist = math.hypot(x - self.x, y - self.y)
        if dist < 0.02:
            return
        self.turn_to(math.atan2(y - self.y, x - self.x))
        speed = float(self.rng.uniform(0.35, 0.6))
        n = max(1, int(math.ceil(dist / speed / DT)))
        f = np.arange(1, n + 1) / n
        self._emit(n, self.x + (x - self.x) * f, self.y + (y - self.y) * f, np.full(n, self.yaw), 0.0)

    def pause(self, seconds: float) -> None:
        n = max(1, int(seconds / DT))
        self._emit(n, np.full(n, self.x), np.full(n, self.y), np.full(n, self.yaw), 0.0)

    def trajectory(self) -> Trajectory:
        a = np.concatenate(self.samples)
        return Trajectory(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4])


def _free_point(world: World, room_index: int, rng: np.random.Generator,
                visible_from: tuple[float, float] | None = None, tries: int = 200) -> tuple[float, float] | None:
    r = world.rooms[room_index]
    for _ in range(tries):
        p = (float(rng.uniform(r.x0 + 0.4, r.x1 - 0.4)), float(rng.uniform(r.y0 + 0.4, r.y1 - 0.4)))
        if world.is_free(*p) and (visible_from is None or world.segment_free(visible_from, p)):
            return p
    return None


def _route(world: World, a: tuple[float, float], b: tuple[float, float], room_index: int,
           rng: np.random.Generator) -> list[tuple[float, float]]:
    """Points from a (exclusive) to b (inclusive) inside one room, avoiding furniture."""
    if world.segment_free(a, b):
        return [b]
    r = world.rooms[room_index]
    for _ in range(300):
        p = (float(rng.uniform(r.x0 + 0.4, r.x1 - 0.4)), float(rng.uniform(r.y0 + 0.4, r.y1 - 0.4)))
        if world.is_free(*p) and world.segment_free(a, p) and world.segment_free(p, b):
            return [p, b]
    return [b]  # no clean route found: drive straight (rare; renders as brushing past furniture)


def walk(world: World, duration_s: float, seed: int) -> Trajectory:
    """A walk of at least ``duration_s`` seconds through ``world``."""
    rng = np.random.default_rng([int(seed), 0x3A1C])
    rooms = [r.index for r in world.rooms if r.kind != "hallway"]
    hallway = next(r.index for r in world.rooms if r.kind == "hallway")
    current = int(rng.choice(rooms))
    start = _free_point(world, current, rng) or world.rooms[current].center
    walker = _Walker(world, rng, (start[0], start[1], float(rng.uniform(-math.pi, math.pi))))
    visits = {current: 1}

    def go(points: list[tuple[float, float]]) -> None:
        for p in points:
            walker.drive_to(*p)

    while walker.t < duration_s:
        # explore the current room: a few waypoints, sometimes a stop or a look-around
        for _ in range(int(rng.integers(2, 5))):
            here = (walker.x, walker.y)
            p = _free_point(world, current, rng, visible_from=here) or _free_point(world, current, rng)
            if p is None:
                break
            go(_route(world, here, p, current, rng))
            roll = rng.random()
            if roll < 0.25:
                walker.pause(float(rng.uniform(1.0, 3.0)))
            elif roll < 0.45:
                walker.turn_by(float(rng.choice([-1, 1]) * rng.uniform(1.5, 2 * math.pi)),
                               float(rng.uniform(0.9, 1.6)))
            if walker.t >= duration_s:
                break
        if walker.t >= duration_s:
            break
        # leave for another room (less-visited rooms first, revisits later), via the hallway
        others = [r for r in rooms if r != current]
        weights = np.array([1.0 / (1 + 2 * visits.get(r, 0)) for r in others])
        nxt = int(rng.choice(others, p=weights / weights.sum()))
        src, dst = world.rooms[current], world.rooms[nxt]
        go(_route(world, (walker.x, walker.y), src.door_in, current, rng))
        go([src.door_out])
        if rng.random() < 0.3:  # wander along the hallway for a bit
            p = _free_point(world, hallway, rng, visible_from=src.door_out)
            if p is not None:
                go([p])
        go(_route(world, (walker.x, walker.y), dst.door_out, hallway, rng))
        go([dst.door_in])
        current = nxt
        visits[current] = visits.get(current, 0) + 1
    return walker.trajectory()


def camera_times(duration_s: float, fps: float, rng: np.random.Generator) -> np.ndarray:
    """Frame times (s): a steady rate with a little capture jitter, strictly increasing."""
    n = max(1, int(duration_s * fps))
    period = 1.0 / fps
    return np.arange(n) * period + 0.05 + rng.uniform(-0.08, 0.08, n) * period


def pose_samples(traj: Trajectory, duration_s: float, rng: np.random.Generator,
                 rate_hz: float = 4.0, error: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(times, x, y, yaw) of ``/pose`` messages: SLAM-like error, not in step with the camera.
    ``error`` scales the drift and the jitter (the same random draws: 1 is the default tours')."""
    period = 1.0 / rate_hz
    n = max(1, int(duration_s * rate_hz))
    times = 0.137 + np.arange(n) * period + rng.uniform(-0.012, 0.012, n)
    x, y, yaw, _ = traj.at(times)
    # slow bounded drift (a few cm, a fraction of a degree) plus white jitter
    drift = np.zeros((3, n))
    for k, amp in enumerate((0.03 * error, 0.03 * error, math.radians(0.6) * error)):
        for _ in range(3):
            period_s = float(rng.uniform(20.0, 90.0))
            drift[k] += amp / 3 * np.sin(2 * math.pi * times / period_s + rng.uniform(0, 2 * math.pi))
    x = x + drift[0] + error * rng.normal(0, 0.008, n)
    y = y + drift[1] + error * rng.normal(0, 0.008, n)
    yaw = yaw + drift[2] + error * rng.normal(0, 0.003, n)
    return times, x, y, yaw
