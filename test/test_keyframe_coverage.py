"""What the camera saw ends up in a keyframe: the end of a stream, fast (blurred) turns, and no
extra keyframes when nothing new is seen. A 30 Hz camera turns inside a panorama (a textured
360-degree strip, 4 px per degree) that holds one red object; a keyframe "shows" it when its
stored JPEG has the red patch."""

import math

import numpy as np
import pytest

from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.images import decode_image
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.model import Pose
from vlkng_ros.core.pipeline import MemoryBuilder

from helpers_views import H, W, panorama, shows_red, view

NS = 1_000_000_000
HZ = 30
def run(tmp_path, frames, flush: bool = True):
    """Feed (t_s, yaw_deg, image) at the camera's rate; the stream then ends. -> the stored
    keyframes as (t_s, yaw_deg, decoded image)."""
    cfg = VlkngConfig()
    with Memory.open(tmp_path / "mem", cfg) as memory:
        builder = MemoryBuilder(memory, cfg, None)
        for t, yaw, img in frames:
            builder.ingest_frame("tour", int(t * NS), img, Pose.from_xy_yaw(0.0, 0.0, math.radians(yaw)))
        if flush:  # the bag ended / the node stopped
            builder.flush_capture("tour")
        return [(kf.stamp_ns / NS, math.degrees(kf.pose.yaw) % 360, decode_image(memory.frames.get(kf.image_ref)))
                for kf in memory.graph.keyframes("tour")]


def test_an_object_seen_only_in_the_last_moment_of_a_bag_ends_up_in_a_keyframe(tmp_path):
    pano = panorama(red_at_deg=75)
    frames = [(i / HZ, 0.0, view(pano, 0.0)) for i in range(int(4.2 * HZ))]  # parked: keyframes at 0 s, 4 s
    frames += [(4.2 + i / HZ, 40.0 * (i + 1) / 6, view(pano, 40.0 * (i + 1) / 6)) for i in range(6)]  # a quick look left
    frames += [(4.4 + i / HZ, 40.0, view(pano, 40.0)) for i in range(3)]  # the bag ends 0.47 s after a keyframe
    assert not shows_red(frames[0][2]) and shows_red(frames[-1][2])
    kept = run(tmp_path, frames)
    assert any(shows_red(img) for _, _, img in kept), "the last view of the bag is in no keyframe"
    assert [round(t, 1) for t, _, _ in kept[:2]] == [0.0, 4.0]  # the rest unchanged
    assert len(kept) == 3


@pytest.mark.parametrize("hz", [10, 30])  # a bag recorded at a reduced rate, a live camera
def test_a_fast_blurred_turn_keeps_keyframes_all_the_way_round(tmp_path, hz):
    pano = panorama(red_at_deg=200)
    still = [(i / hz, 0.0, view(pano, 0.0)) for i in range(hz)]  # 1 s sharp, facing 0 deg
    rate = math.degrees(1.5)  # a 1.5 rad/s spin: every frame smeared over 16 px
    spin_s = 360 / rate
    n = int(spin_s * hz)
    spin = [(1 + i / hz, rate * i / hz, view(pano, rate * i / hz, blur_px=16)) for i in range(1, n)]
    after = [(1 + spin_s + i / hz, 0.0, view(pano, 0.0)) for i in range(hz)]  # back at 0 deg, sharp
    assert not any(shows_red(img) for _, _, img in still + after)
    kept = run(tmp_path, still + spin + after)
    assert any(shows_red(img) for _, _, img in kept), "the object passed in the turn is in no keyframe"
    yaws = [yaw for t, yaw, _ in kept if t <= 1 + spin_s] + [360.0]
    gaps = np.diff(yaws)
    # every direction of the turn lies within 30 deg of a keyframe's centre: within its middle
    assert gaps.max() <= 60, f"a {gaps.max():.0f} deg stretch of the turn is in no keyframe: {yaws}"
    # ... and the turn is not flooded: about one keyframe per blur_max_turn_deg
    assert len(kept) <= 360 / VlkngConfig().capture.blur_max_turn_deg + 4


def test_no_extra_keyframes_when_nothing_new_is_seen(tmp_path):
    pano = panorama(red_at_deg=200)
    rng = np.random.default_rng(3)
    frames = []
    for i in range(20 * HZ):  # a parked robot, 20 s of one view with sensor noise, then the bag ends
        img = view(pano, 0.0).astype(np.int16) + rng.integers(-4, 5, (H, W, 3))
        frames.append((i / HZ, 0.0, np.clip(img, 0, 255).astype(np.uint8)))
    kept = run(tmp_path, frames)
    assert [round(t) for t, _, _ in kept] == [0, 4, 8, 12, 16]  # max_interval_s only; the end adds none


def test_a_robot_that_stops_at_the_end_gets_no_extra_keyframe(tmp_path):
    pano = panorama(red_at_deg=200)
    turn = [(i / HZ, 30.0 * i / HZ, view(pano, 30.0 * i / HZ)) for i in range(3 * HZ)]  # a slow turn to 90 deg
    stop = [(3 + i / HZ, 90.0, view(pano, 90.0)) for i in range(2 * HZ)]  # then parked 2 s: the bag ends
    with_flush, without = run(tmp_path / "a", turn + stop), run(tmp_path / "b", turn + stop, flush=False)
    assert [t for t, _, _ in with_flush] == [t for t, _, _ in without]
    assert with_flush[-1][1] == pytest.approx(90.0)  # the final view is already a keyframe


def test_a_covered_lens_gives_no_keyframes_even_when_the_robot_moves(tmp_path):
    dark = np.full((H, W, 3), 3, np.uint8)  # nothing to see: not a candidate, not a last view
    frames = [(i / HZ, 60.0 * i / HZ, dark) for i in range(3 * HZ)]  # turning, 3 s
    assert run(tmp_path, frames) == []
