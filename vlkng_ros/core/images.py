"""Image decoding shared by the tour reader (rosbags messages), the ROS message conversion and
capture: compressed (JPEG/PNG) and raw (rgb8, bgr8, mono8, rgba8, bgra8) to RGB uint8.

Every failure is a ValueError whose text says what is wrong ("corrupt JPEG",
"unknown encoding 'yuv422'", "… truncated"), so callers can log it and carry on.
"""

from __future__ import annotations

import cv2
import numpy as np

RAW_CHANNELS = {"rgb8": 3, "bgr8": 3, "mono8": 1, "rgba8": 4, "bgra8": 4, "8uc1": 1, "8uc3": 3}
_REDUCED = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
            8: cv2.IMREAD_REDUCED_COLOR_8}


def compressed_kind(fmt: str) -> str | None:
    """'JPEG', 'PNG', or None for a format string that names neither (e.g. 'tiff')."""
    f = (fmt or "").lower()
    return "PNG" if "png" in f else ("JPEG" if ("jpeg" in f or "jpg" in f) else None)


def decode_compressed(data: bytes | np.ndarray, fmt: str = "", reduce: int = 1) -> np.ndarray:
    """JPEG/PNG bytes -> RGB. ``reduce`` (1, 2, 4, 8) decodes at 1/reduce size (much cheaper).
    An empty ``fmt`` means 'whatever the bytes are'."""
    kind = compressed_kind(fmt)
    if fmt and kind is None:
        raise ValueError(f"unsupported CompressedImage format {fmt!r} (jpeg or png)")
    buf = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data.astype(np.uint8, copy=False)
    bgr = cv2.imdecode(buf, _REDUCED.get(reduce, cv2.IMREAD_COLOR)) if buf.size else None
    if bgr is None:
        raise ValueError(f"corrupt {kind}" if kind else f"corrupt or unsupported image data ({buf.size} bytes)")
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def decode_raw(encoding: str, width: int, height: int, step: int, data: bytes | np.ndarray,
               reduce: int = 1) -> np.ndarray:
    """A sensor_msgs/Image buffer (rows of ``step`` bytes, possibly padded) -> RGB."""
    enc = str(encoding).lower()
    channels = RAW_CHANNELS.get(enc)
    if channels is None:
        raise ValueError(f"unknown encoding {encoding!r}")
    buf = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data.astype(np.uint8, copy=False)
    if width <= 0 or height <= 0 or step < width * channels or buf.size < step * height:
        raise ValueError(f"{encoding} image {width}x{height} with step {step} has {buf.size} bytes: "
                         "inconsistent or truncated")
    img = buf[: step * height].reshape(height, step)[:, : width * channels].reshape(height, width, channels)
    if channels == 1:
        rgb = cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)
    elif enc in ("bgr8", "8uc3"):
        rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    elif enc == "rgba8":
        rgb = cv2.cvtColor(img, cv2.COLOR_RGBA2RGB)
    elif enc == "bgra8":
        rgb = cv2.cvtColor(img, cv2.COLOR_BGRA2RGB)
    else:
        rgb = img.copy()  # the message buffer is read-only and may be reused
    if reduce > 1:
        rgb = cv2.resize(rgb, (max(1, width // reduce), max(1, height // reduce)), interpolation=cv2.INTER_AREA)
    return rgb
