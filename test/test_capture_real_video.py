"""Keyframe selection on a REAL egocentric video (OpenEQA's HM3D demo walk, 1280x720, 10 fps;
read from ../shared/data, never copied here): what a robot's camera gives, not rendered boxes."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from helpers_data import shared_data_dir
from vlkng_ros.core.capture import KeyframeSelector
from vlkng_ros.core.images import decode_image, encode_jpeg
from vlkng_ros.core.config import CaptureConfig

NS = 1_000_000_000


DATA = shared_data_dir("openeqa/open-eqa-hm3d-demo.mp4")
VIDEO = DATA / "openeqa" / "open-eqa-hm3d-demo.mp4" if DATA else None
pytestmark = pytest.mark.skipif(VIDEO is None, reason="the shared demo video is not on this machine")


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    cap = cv2.VideoCapture(str(VIDEO))
    out = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        out.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    cap.release()
    if not out:
        pytest.skip("this OpenCV build cannot decode mp4")
    return out


def stamp(i: int, fps: float = 10.0) -> int:
    return int(i * NS / fps)


def test_a_real_walk_gives_spread_keyframes_and_no_false_blur(frames):
    cfg = CaptureConfig()
    sel = KeyframeSelector(cfg)
    decisions = [sel.consider(stamp(i), f, None) for i, f in enumerate(frames)]
    kept = [i for i, d in enumerate(decisions) if d.keep]
    assert not [d for d in decisions if d.reason == "blurred"]  # a sharp camera is never "blurred"
    duration_s = len(frames) / 10.0
    assert duration_s / cfg.max_interval_s <= len(kept) <= duration_s / cfg.min_interval_s + 1
    gaps = np.diff([stamp(i) for i in kept]) / NS
    assert gaps.min() >= cfg.min_interval_s - 1e-9 and gaps.max() <= cfg.max_interval_s + 0.1


def test_motion_blur_on_a_real_frame_is_rejected_and_the_sharp_one_kept(frames):
    sel = KeyframeSelector(CaptureConfig())
    for i, f in enumerate(frames[:60]):
        sel.consider(stamp(i), f, None)
    kernel = np.zeros((1, 31), np.float32)
    kernel[0, :] = 1.0 / 31  # horizontal motion blur, as when the robot turns fast
    smeared = cv2.filter2D(frames[70], -1, kernel)
    assert sel.consider(stamp(70), smeared, None).reason == "blurred"
    assert sel.consider(stamp(71), frames[71], None).keep


def test_a_parked_robot_keeps_one_frame_per_max_interval(frames):
    cfg = CaptureConfig()
    sel = KeyframeSelector(cfg)
    still = frames[100]
    kept = [i for i in range(200) if sel.consider(stamp(i), still, None).keep]  # 20 s of the same view
    last_s = 199 / 10.0
    assert len(kept) == 1 + int(last_s // cfg.max_interval_s)  # the first frame, then every max_interval_s


def test_real_frame_survives_the_stored_jpeg(frames):
    rgb = frames[40]
    back = decode_image(encode_jpeg(rgb, CaptureConfig().jpeg_quality))
    assert back.shape == rgb.shape
    assert float(np.mean(np.abs(back.astype(np.int16) - rgb.astype(np.int16)))) < 4.0
