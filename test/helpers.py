"""Helpers shared by the test modules (import from here, never from another test file)."""

from __future__ import annotations

import os


def domain_id(base: int) -> int:
    """A ROS domain id for one test module: ``base`` plus ``VLKNG_TEST_DOMAIN_OFFSET`` (default 0),
    so several checkouts testing on one machine at once do not see each other's nodes."""
    return base + int(os.environ.get("VLKNG_TEST_DOMAIN_OFFSET", "0"))


def write_tour(out, frames, poses=(), hfov_deg: float = 90.0, jpeg_quality: int = 85):
    """A tour folder (bag/ only: no annotations) from ``frames`` [(stamp_ns, RGB uint8)] and
    optional ``poses`` [(stamp_ns, x, y, yaw)] on /pose, written with the simulator's bag writer.
    Returns the folder."""
    import math
    from pathlib import Path

    import cv2

    from vlkng_ros.eval.sim.generate import _BagWriter

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    h, w = frames[0][1].shape[:2]
    bag = _BagWriter(out / "bag", w, h, (w / 2) / math.tan(math.radians(hfov_deg) / 2))
    events = [(s, 0, rgb) for s, rgb in frames] + [(p[0], 1, p) for p in poses]
    bag.camera_info(frames[0][0], frames[0][0] - 1)
    for stamp, kind, item in sorted(events, key=lambda e: (e[0], -e[1])):
        if kind == 1:
            bag.pose(stamp, stamp, *item[1:])
        else:
            ok, buf = cv2.imencode(".jpg", cv2.cvtColor(item, cv2.COLOR_RGB2BGR),
                                   [int(cv2.IMWRITE_JPEG_QUALITY), jpeg_quality])
            bag.image(stamp, stamp, buf.tobytes())
    bag.close()
    return out
