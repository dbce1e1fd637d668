"""Image encodings, decoded by vlkng's own numpy/OpenCV path, against buffers built by hand from
the encodings' documented layouts (sensor_msgs/image_encodings, REP 118, compressed_depth_image_transport)."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest

from vlkng_ros.core import images as im

RED, GREEN, BLUE = (200, 30, 10), (20, 180, 40), (15, 25, 210)


def _pad(rows: np.ndarray, step: int) -> bytes:
    """Rows of bytes padded to ``step`` (drivers pad rows; the decoder must skip the padding)."""
    h, n = rows.shape
    out = np.zeros((h, step), dtype=np.uint8)
    out[:, :n] = rows
    return out.tobytes()


def _bt601(rgb) -> tuple[int, int, int]:
    """BT.601 'studio range' Y'CbCr of an 8-bit RGB colour (the YUV422 camera encodings)."""
    r, g, b = (c / 255.0 for c in rgb)
    y = 16 + 65.481 * r + 128.553 * g + 24.966 * b
    cb = 128 - 37.797 * r - 74.203 * g + 112.0 * b
    cr = 128 + 112.0 * r - 93.786 * g - 18.214 * b
    return round(y), round(cb), round(cr)


def test_packed_colour_encodings_with_row_padding():
    h, w = 3, 5
    rgb = np.zeros((h, w, 3), dtype=np.uint8)
    rgb[:, :2], rgb[:, 2:4], rgb[:, 4] = RED, GREEN, BLUE
    layouts = {
        "rgb8": rgb, "bgr8": rgb[:, :, ::-1],
        "rgba8": np.dstack([rgb, np.full((h, w), 7, np.uint8)]),
        "bgra8": np.dstack([rgb[:, :, ::-1], np.full((h, w), 7, np.uint8)]),
        "8UC3": rgb[:, :, ::-1],  # generic 3 channels are OpenCV's BGR
    }
    for enc, pix in layouts.items():
        n = w * pix.shape[2]
        data = _pad(pix.reshape(h, n), n + 3)
        out = im.decode_raw(enc, w, h, n + 3, data)
        assert out.shape == (h, w, 3) and out.dtype == np.uint8, enc
        assert (out == rgb).all(), enc


def test_mono_and_sixteen_bit_encodings_both_byte_orders():
    h, w = 2, 4
    grey = np.array([[0, 60, 120, 255], [10, 20, 30, 40]], dtype=np.uint8)
    out = im.decode_raw("mono8", w, h, w, grey.tobytes())
    assert (out == grey[:, :, None]).all()
    mono16 = grey.astype(np.uint16) * 257  # full-scale 16-bit of the same grey
    for big in (False, True):
        data = mono16.astype(">u2" if big else "<u2").tobytes()
        out = im.decode_raw("mono16", w, h, w * 2, data, is_bigendian=big)
        assert (out[:, :, 0] == grey).all() and (out[:, :, 1] == grey).all()
    rgb16 = np.zeros((h, w, 3), dtype=np.uint16)
    rgb16[..., 0] = 65535
    out = im.decode_raw("rgb16", w, h, w * 6, rgb16.astype("<u2").tobytes())
    assert (out[..., 0] == 255).all() and (out[..., 1:] == 0).all()


@pytest.mark.parametrize("enc,order", [("yuv422", "uyvy"), ("UYVY", "uyvy"), ("yuv422_yuy2", "yuyv")])
def test_yuv422_layouts(enc, order):
    """Two pixels share one U and one V; UYVY is U Y0 V Y1, YUY2 is Y0 U Y1 V."""
    h, w = 2, 6
    colours = [RED, GREEN, BLUE]  # one colour per 2-pixel group
    row = []
    for c in colours:
        y, u, v = _bt601(c)
        row += [u, y, v, y] if order == "uyvy" else [y, u, y, v]
    data = _pad(np.array([row] * h, dtype=np.uint8), w * 2 + 4)
    out = im.decode_raw(enc, w, h, w * 2 + 4, data)
    for k, c in enumerate(colours):
        for x in (2 * k, 2 * k + 1):
            assert np.abs(out[1, x].astype(int) - np.array(c)).max() <= 4, (enc, x, out[1, x], c)


@pytest.mark.parametrize("pattern", ["rggb", "bggr", "gbrg", "grbg"])
def test_bayer_patterns(pattern):
    """A uniform colour seen through the mosaic: each pixel keeps only the channel its cell names
    (pattern letters read row by row from pixel (0, 0)); demosaicing must give the colour back."""
    h, w = 8, 10
    colour = {"r": 180, "g": 90, "b": 40}
    mosaic = np.zeros((h, w), dtype=np.uint8)
    for dy in range(2):
        for dx in range(2):
            mosaic[dy::2, dx::2] = colour[pattern[2 * dy + dx]]
    out = im.decode_raw(f"bayer_{pattern}8", w, h, w, mosaic.tobytes())
    inner = out[2:-2, 2:-2].reshape(-1, 3).astype(int)
    assert np.abs(inner - np.array([180, 90, 40])).max() <= 2, (pattern, inner[:3])


def test_depth_encodings():
    h, w = 2, 3
    mm = np.array([[0, 1000, 2500], [65535, 12, 800]], dtype=np.uint16)
    for enc in ("16UC1", "mono16"):
        for big in (False, True):
            d = im.decode_depth(enc, w, h, w * 2 + 2, _pad(mm.astype(">u2" if big else "<u2").view(np.uint8).reshape(h, -1), w * 2 + 2),
                                is_bigendian=big)
            assert d.dtype == np.float32 and np.isnan(d[0, 0])
            assert d[0, 1] == pytest.approx(1.0) and d[0, 2] == pytest.approx(2.5) and d[1, 1] == pytest.approx(0.012)
    metres = np.array([[np.nan, 1.25, 0.0], [np.inf, 3.5, -1.0]], dtype=np.float32)
    d = im.decode_depth("32FC1", w, h, w * 4, metres.tobytes())
    assert d[0, 1] == pytest.approx(1.25) and d[1, 1] == pytest.approx(3.5)
    assert np.isnan(d[[0, 0, 1, 1], [0, 2, 0, 2]]).all()  # NaN, 0, inf and negative: no reading
    with pytest.raises(ValueError, match="not a depth encoding"):
        im.decode_depth("rgb8", w, h, w * 3, bytes(w * h * 3))
    # a depth image is no colour image (as in cv_bridge); shown as grey it is near bright, none black
    with pytest.raises(ValueError, match="'16UC1' is a depth image"):
        im.decode_raw("16UC1", w, h, w * 2, mm.tobytes())
    grey = im.depth_to_grey(im.decode_depth("16UC1", w, h, w * 2, mm.tobytes()))
    assert grey.shape == (h, w) and grey[0, 0] == 0 and grey[1, 1] > grey[0, 2] > 0


def test_depth_png_round_trip_is_lossless_at_one_millimetre():
    rng = np.random.default_rng(3)
    d = rng.uniform(0.3, 9.0, (48, 64)).astype(np.float32)
    d[5:9, 5:9] = np.nan
    png = im.encode_depth_png(d)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    back = im.decode_depth_png(png)
    assert np.isnan(back[5:9, 5:9]).all()
    ok = np.isfinite(d)
    assert np.abs(back[ok] - d[ok]).max() <= 0.0005 + 1e-6
    raw = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    assert raw.dtype == np.uint16 and raw[0, 0] == round(float(d[0, 0]) * 1000)
    with pytest.raises(ValueError, match="corrupt depth PNG"):
        im.decode_depth_png(png[:40])
    with pytest.raises(ValueError, match="16-bit"):
        im.decode_depth_png(cv2.imencode(".png", np.zeros((4, 4), np.uint8))[1].tobytes())


def test_compressed_depth_both_payloads():
    mm = np.array([[0, 1500], [2000, 4000]], dtype=np.uint16)
    header = struct.pack("<iff", 0, 0.0, 0.0)
    msg = header + cv2.imencode(".png", mm)[1].tobytes()
    d = im.decode_compressed_depth(msg, "16UC1; compressedDepth png")
    assert np.isnan(d[0, 0]) and d[0, 1] == pytest.approx(1.5) and d[1, 1] == pytest.approx(4.0)
    # 32FC1: quantised inverse depth q = A / d + B, stored as 16-bit PNG
    a, b = 100.0, -5.0
    metres = np.array([[np.nan, 1.0], [2.0, 5.0]], dtype=np.float32)
    q = np.where(np.isfinite(metres), np.rint(a / np.nan_to_num(metres, nan=1.0) + b), 0).astype(np.uint16)
    msg = struct.pack("<iff", 0, a, b) + cv2.imencode(".png", q)[1].tobytes()
    d = im.decode_compressed_depth(msg, "32FC1; compressedDepth png")
    assert np.isnan(d[0, 0])
    assert d[0, 1] == pytest.approx(1.0, rel=0.01) and d[1, 1] == pytest.approx(5.0, rel=0.01)
    assert im.is_compressed_depth("16UC1; compressedDepth") and not im.is_compressed_depth("jpeg")
    with pytest.raises(ValueError, match="truncated"):
        im.decode_compressed_depth(header, "16UC1; compressedDepth")
    with pytest.raises(ValueError, match="depth image, not a colour one"):
        im.decode_compressed(msg, "16UC1; compressedDepth png")


def test_compressed_colour_and_the_one_jpeg_encoder():
    rgb = np.zeros((40, 60, 3), dtype=np.uint8)
    rgb[:, :30] = RED
    rgb[:, 30:] = BLUE
    jpeg = im.encode_jpeg(rgb, 95)
    back = im.decode_compressed(jpeg, "jpeg")
    assert np.abs(back[20, 10].astype(int) - RED).max() <= 6 and np.abs(back[20, 50].astype(int) - BLUE).max() <= 6
    small = im.decode_compressed(im.encode_jpeg(rgb, 90, max_side=30), "")
    assert small.shape == (20, 30, 3)
    png = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))[1].tobytes()
    assert (im.decode_compressed(png, "png") == rgb).all()
    assert im.decode_compressed(jpeg, "jpeg", reduce=2).shape == (20, 30, 3)
    with pytest.raises(ValueError, match="corrupt JPEG"):
        im.decode_compressed(jpeg[:50], "jpeg")
    with pytest.raises(ValueError, match="unsupported CompressedImage format"):
        im.decode_compressed(jpeg, "tiff")


@pytest.mark.parametrize("args,match", [
    (("yuv420", 4, 2, 8, bytes(16)), "unknown encoding 'yuv420'"),
    (("rgb8", 4, 2, 12, bytes(10)), "truncated"),
    (("rgb8", 4, 2, 8, bytes(64)), "inconsistent"),
    (("mono16", 2, 2, 4, bytes(6)), "truncated"),
    (("32FC1", 2, 2, 8, bytes(16)), "depth image, not a colour one"),
])
def test_bad_buffers_say_what_is_wrong(args, match):
    with pytest.raises(ValueError, match=match):
        im.decode_raw(*args)
