"""Image codecs and encodings: the one home (numpy/OpenCV, no ROS).

Every image that enters vlkng goes through here: compressed JPEG/PNG, the raw
``sensor_msgs/Image`` encodings (rgb8, bgr8, mono8, rgba8, bgra8, mono16, yuv422 = UYVY,
yuv422_yuy2 = YUYV, bayer_rggb8/bggr8/gbrg8/grbg8, and the generic 8UC1/8UC3/8UC4/16UC1/32FC1),
depth images (16UC1 millimetres, 32FC1 metres, ``compressedDepth``), and the encoders for what
vlkng stores (JPEG keyframes, 16-bit PNG depth). ``conversions.py`` uses cv_bridge for ROS
messages where it is importable and these functions otherwise; bags (rosbags messages) always use
these.

The layouts follow the encodings' definitions (sensor_msgs/image_encodings.hpp and REP 118):
rows of ``step`` bytes (possibly padded), multi-byte samples in the byte order ``is_bigendian``
says; UYVY packs two pixels in ``U Y0 V Y1``, YUY2 in ``Y0 U Y1 V``; a Bayer pattern names the
colours of the top-left 2x2 cell row by row (``rggb``: R G / G B). Encoding names are matched
case-insensitively. OpenCV's numeric type constants are never used (OpenCV 5 renumbered them).

Every failure is a ValueError whose text says what is wrong ("corrupt JPEG", "unknown encoding
'yuv420'", "… truncated"), so callers can log it and carry on.
"""

from __future__ import annotations

import struct

import cv2
import numpy as np

# encoding -> (channels, bytes per sample); how the raw buffer is laid out
_LAYOUT = {
    "rgb8": (3, 1), "bgr8": (3, 1), "mono8": (1, 1), "rgba8": (4, 1), "bgra8": (4, 1),
    "mono16": (1, 2), "rgb16": (3, 2), "bgr16": (3, 2), "rgba16": (4, 2), "bgra16": (4, 2),
    "8uc1": (1, 1), "8uc3": (3, 1), "8uc4": (4, 1), "16uc1": (1, 2), "32fc1": (1, 4),
    "yuv422": (2, 1), "uyvy": (2, 1), "yuv422_yuy2": (2, 1), "yuyv": (2, 1),
    "bayer_rggb8": (1, 1), "bayer_bggr8": (1, 1), "bayer_gbrg8": (1, 1), "bayer_grbg8": (1, 1),
}
COLOR_ENCODINGS = tuple(_LAYOUT)  # everything decode_raw turns into RGB
DEPTH_ENCODINGS = ("16uc1", "mono16", "32fc1")
# OpenCV names a Bayer pattern by the 2x2 cell starting at pixel (1, 1), ROS by the one at (0, 0):
# ROS rggb is OpenCV's BG. Checked against hand-built mosaics in test/test_images.py.
_BAYER = {"bayer_rggb8": cv2.COLOR_BayerBG2RGB, "bayer_bggr8": cv2.COLOR_BayerRG2RGB,
          "bayer_gbrg8": cv2.COLOR_BayerGR2RGB, "bayer_grbg8": cv2.COLOR_BayerGB2RGB}
_YUV = {"yuv422": cv2.COLOR_YUV2RGB_UYVY, "uyvy": cv2.COLOR_YUV2RGB_UYVY,
        "yuv422_yuy2": cv2.COLOR_YUV2RGB_YUY2, "yuyv": cv2.COLOR_YUV2RGB_YUY2}
_REDUCED = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
            8: cv2.IMREAD_REDUCED_COLOR_8}
COMPRESSED_DEPTH_HEADER = 12  # compressed_depth_image_transport: int32 format, float32 quant A, B


def _as_bytes(data: bytes | np.ndarray | memoryview) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return data.reshape(-1).view(np.uint8) if data.dtype != np.uint8 else data.reshape(-1)
    return np.frombuffer(bytes(data), dtype=np.uint8)


# --- compressed ----------------------------------------------------------------------------
def compressed_kind(fmt: str) -> str | None:
    """'JPEG', 'PNG', or None for a format string that names neither (e.g. 'tiff')."""
    f = (fmt or "").lower()
    return "PNG" if "png" in f else ("JPEG" if ("jpeg" in f or "jpg" in f) else None)


def is_compressed_depth(fmt: str) -> bool:
    """A CompressedImage ``format`` of compressed_depth_image_transport ('16UC1; compressedDepth png')."""
    return "compresseddepth" in (fmt or "").replace(" ", "").lower()


def decode_compressed(data: bytes | np.ndarray, fmt: str = "", reduce: int = 1) -> np.ndarray:
    """JPEG/PNG bytes -> RGB. ``reduce`` (1, 2, 4, 8) decodes at 1/reduce size (much cheaper).
    An empty ``fmt`` means 'whatever the bytes are'."""
    kind = compressed_kind(fmt)
    if fmt and kind is None:
        raise ValueError(f"unsupported CompressedImage format {fmt!r} (jpeg or png)")
    if is_compressed_depth(fmt):
        raise ValueError(f"format {fmt!r} is a depth image, not a colour one")
    buf = _as_bytes(data)
    bgr = cv2.imdecode(buf, _REDUCED.get(reduce, cv2.IMREAD_COLOR)) if buf.size else None
    if bgr is None:
        raise ValueError(f"corrupt {kind}" if kind else f"corrupt or unsupported image data ({buf.size} bytes)")
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def decode_image(data: bytes | np.ndarray) -> np.ndarray:
    """A stored keyframe (JPEG/PNG bytes) -> RGB uint8. ValueError on corrupt or truncated data."""
    return decode_compressed(data)


def encode_jpeg(rgb: np.ndarray, quality: int = 90, max_side: int = 0) -> bytes:
    """RGB (or grey) uint8 -> JPEG bytes; ``max_side`` > 0 shrinks the longer side to it first."""
    img = np.asarray(rgb)
    if img.dtype != np.uint8:
        raise ValueError(f"expected a uint8 image, got {img.dtype}")
    if not (img.ndim == 2 or (img.ndim == 3 and img.shape[2] == 3)):
        raise ValueError(f"expected HxWx3 or HxW, got shape {img.shape}")
    if max_side and max(img.shape[:2]) > max_side:
        scale = max_side / max(img.shape[:2])
        img = cv2.resize(img, (max(1, round(img.shape[1] * scale)), max(1, round(img.shape[0] * scale))),
                         interpolation=cv2.INTER_AREA)
    if img.ndim == 3 and img.shape[2] == 3:
        img = cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
    ok, buf = cv2.imencode(".jpg", img, [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return buf.tobytes()


# --- raw -----------------------------------------------------------------------------------
def _samples(encoding: str, width: int, height: int, step: int, data: bytes | np.ndarray,
             is_bigendian: bool) -> tuple[str, np.ndarray]:
    """The buffer as an (H, W, C) array of the encoding's sample type (native byte order)."""
    enc = str(encoding).lower()
    layout = _LAYOUT.get(enc)
    if layout is None:
        raise ValueError(f"unknown encoding {encoding!r}")
    channels, size = layout
    buf = _as_bytes(data)
    row = width * channels * size
    if width <= 0 or height <= 0 or step < row or buf.size < step * (height - 1) + row:
        raise ValueError(f"{encoding} image {width}x{height} with step {step} has {buf.size} bytes: "
                         "inconsistent or truncated")
    if buf.size < step * height:  # the last row's padding may be missing
        buf = np.concatenate([buf, np.zeros(step * height - buf.size, dtype=np.uint8)])
    rows = buf[: step * height].reshape(height, step)[:, :row]
    if size == 1:
        return enc, rows.reshape(height, width, channels)
    kind = "f" if enc == "32fc1" else "u"
    dtype = np.dtype(f"{'>' if is_bigendian else '<'}{kind}{size}")
    arr = np.ascontiguousarray(rows).view(dtype).reshape(height, width, channels)
    return enc, arr.astype(dtype.newbyteorder("="), copy=False)


def decode_raw(encoding: str, width: int, height: int, step: int, data: bytes | np.ndarray,
               reduce: int = 1, is_bigendian: bool = False) -> np.ndarray:
    """A sensor_msgs/Image buffer -> RGB uint8 HxWx3 (16-bit colour and mono16 scaled to 8 bits).
    The depth encodings 16UC1 and 32FC1 are no colour image (as in cv_bridge): ValueError naming
    them (``decode_depth`` reads them; ``depth_to_grey`` shows one)."""
    if str(encoding).lower() in ("16uc1", "32fc1"):
        raise ValueError(f"encoding {encoding!r} is a depth image, not a colour one")
    enc, img = _samples(encoding, width, height, step, data, is_bigendian)
    if enc in _YUV:
        rgb = cv2.cvtColor(np.ascontiguousarray(img), _YUV[enc])
    elif enc in _BAYER:
        rgb = cv2.cvtColor(np.ascontiguousarray(img[:, :, 0]), _BAYER[enc])
    else:
        if img.dtype == np.uint16:
            img = (img // 257).astype(np.uint8)
        if img.shape[2] == 1:
            rgb = cv2.cvtColor(np.ascontiguousarray(img[:, :, 0]), cv2.COLOR_GRAY2RGB)
        elif enc.startswith("bgr") or enc in ("8uc3", "8uc4"):  # generic colour is OpenCV's BGR(A)
            rgb = np.ascontiguousarray(img[:, :, 2::-1])
        else:  # a copy: the message buffer is read-only and may be reused
            rgb = np.ascontiguousarray(img[:, :, :3]).copy()
    if reduce > 1:
        rgb = cv2.resize(rgb, (max(1, width // reduce), max(1, height // reduce)), interpolation=cv2.INTER_AREA)
    return rgb


# --- depth ---------------------------------------------------------------------------------
def decode_depth(encoding: str, width: int, height: int, step: int, data: bytes | np.ndarray,
                 is_bigendian: bool = False) -> np.ndarray:
    """A depth sensor_msgs/Image -> float32 metres HxW, NaN where there is no reading.
    16UC1 (and mono16) are millimetres with 0 = none; 32FC1 metres with 0, NaN or inf = none."""
    enc = str(encoding).lower()
    if enc not in DEPTH_ENCODINGS:
        raise ValueError(f"encoding {encoding!r} is not a depth encoding (16UC1 mm or 32FC1 m)")
    _, img = _samples(encoding, width, height, step, data, is_bigendian)
    return depth_from_array(img[:, :, 0])


def depth_from_array(arr: np.ndarray) -> np.ndarray:
    """uint16 millimetres or float metres -> float32 metres with NaN for no reading."""
    a = np.asarray(arr)
    if a.dtype == np.uint16:
        out = a.astype(np.float32) * np.float32(0.001)
        out[a == 0] = np.nan
        return out
    if a.dtype.kind != "f":
        raise ValueError(f"depth array of type {a.dtype}: expected uint16 millimetres or float metres")
    out = a.astype(np.float32, copy=True)
    out[~np.isfinite(out) | (out <= 0.0)] = np.nan
    return out


def depth_to_mm(depth_m: np.ndarray) -> np.ndarray:
    """float metres (NaN = none) -> uint16 millimetres (0 = none; beyond 65.535 m = none)."""
    d = np.asarray(depth_m, dtype=np.float32)
    mm = np.rint(np.where(np.isfinite(d), d, 0.0) * 1000.0)
    mm[(mm < 0) | (mm > 65535)] = 0
    return mm.astype(np.uint16)


def encode_depth_png(depth_m: np.ndarray) -> bytes:
    """float metres -> 16-bit single-channel PNG of millimetres (lossless at 1 mm; 0 = none)."""
    ok, buf = cv2.imencode(".png", depth_to_mm(depth_m), [int(cv2.IMWRITE_PNG_COMPRESSION), 1])
    if not ok:
        raise ValueError("PNG encoding of a depth image failed")
    return buf.tobytes()


def decode_depth_png(data: bytes | np.ndarray) -> np.ndarray:
    """A 16-bit PNG of millimetres (as ``encode_depth_png`` writes) -> float32 metres, NaN = none."""
    buf = _as_bytes(data)
    img = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED) if buf.size else None
    if img is None:
        raise ValueError("corrupt depth PNG")
    if img.ndim != 2 or img.dtype != np.uint16:
        raise ValueError(f"depth PNG is {img.dtype} with shape {img.shape}: expected 16-bit single channel")
    return depth_from_array(img)


def decode_compressed_depth(data: bytes | np.ndarray, fmt: str) -> np.ndarray:
    """A compressed_depth_image_transport message -> float32 metres (NaN = none).

    Layout: a 12-byte header (int32 compression format, float32 depthQuantA, depthQuantB, little
    endian) then a PNG (or RVL, not supported). '16UC1' payloads are millimetres; '32FC1'
    payloads are quantised inverse depth q = A / d + B, so d = A / (q - B), q = 0 = none."""
    buf = _as_bytes(data)
    f = (fmt or "").lower()
    if "rvl" in f:
        raise ValueError("compressedDepth with RVL compression is not supported (use png)")
    if buf.size <= COMPRESSED_DEPTH_HEADER:
        raise ValueError(f"compressedDepth message of {buf.size} bytes: truncated")
    _, quant_a, quant_b = struct.unpack_from("<iff", buf.tobytes()[:COMPRESSED_DEPTH_HEADER])
    img = cv2.imdecode(buf[COMPRESSED_DEPTH_HEADER:], cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim != 2 or img.dtype != np.uint16:
        raise ValueError("corrupt compressedDepth PNG")
    if "32fc1" in f:
        q = img.astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.float32(quant_a) / (q - np.float32(quant_b))
        d[img == 0] = np.nan
        return depth_from_array(d)
    return depth_from_array(img)


def depth_to_grey(depth_m: np.ndarray, max_m: float = 8.0) -> np.ndarray:
    """Depth shown as grey uint8 (near bright, no reading black): for viewing a depth stream."""
    d = np.nan_to_num(np.asarray(depth_m, dtype=np.float32), nan=np.inf)
    return np.where(np.isfinite(d), 255.0 - np.clip(d / max_m, 0.0, 1.0) * 235.0, 0.0).astype(np.uint8)
