"""The tour reader on good, damaged and unusual bags."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from vlkng_ros.eval.sim import generate_tour
from vlkng_ros.core.tour import Tour

TS = get_typestore(Stores.ROS2_HUMBLE)
T0 = 1_700_000_000_000_000_000


def _header(stamp_ns: int, frame_id: str = "camera"):
    Header, Time = TS.types["std_msgs/msg/Header"], TS.types["builtin_interfaces/msg/Time"]
    return Header(stamp=Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id=frame_id)


def _write_bag(tour: Path, topic: str, msgtype: str, msgs: list[tuple[int, object]],
               storage: StoragePlugin = StoragePlugin.MCAP) -> None:
    with Writer(tour / "bag", version=9, storage_plugin=storage) as w:
        conn = w.add_connection(topic, msgtype, typestore=TS)
        for i, (_stamp, msg) in enumerate(msgs):  # log (receive) time is monotonic, header stamps may not be
            w.write(conn, T0 + i * 10**7 + 10**6, TS.serialize_cdr(msg, msgtype))


def _jpeg(color_rgb: tuple[int, int, int], w: int = 32, h: int = 24) -> np.ndarray:
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = color_rgb[::-1]  # BGR for OpenCV
    return np.frombuffer(cv2.imencode(".jpg", img)[1].tobytes(), np.uint8)


def _compressed(stamp: int, data: np.ndarray, fmt: str = "jpeg"):
    return TS.types["sensor_msgs/msg/CompressedImage"](header=_header(stamp), format=fmt, data=data)


def _raw(stamp: int, enc: str, pixel: tuple[int, ...], w: int = 4, h: int = 3):
    chans = len(pixel)
    data = np.tile(np.array(pixel, np.uint8), w * h)
    return TS.types["sensor_msgs/msg/Image"](header=_header(stamp), height=h, width=w, encoding=enc,
                                             is_bigendian=0, step=w * chans, data=data)


@pytest.fixture(scope="module")
def sim_tour(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tour") / "t"
    generate_tour(out, minutes=0.3, seed=4, log_progress=False)
    return out


def test_missing_or_wrong_paths_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Tour.open(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no bag/ folder"):
        Tour.open(tmp_path / "empty")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ValueError, match="not a tour folder"):
        Tour.open(tmp_path / "file.txt")
    (tmp_path / "junk" / "bag").mkdir(parents=True)
    with pytest.raises(ValueError, match="not a readable rosbag2"):
        Tour.open(tmp_path / "junk")


def test_truncated_bag_yields_what_is_readable(sim_tour, tmp_path, caplog):
    cut = tmp_path / "cut"
    shutil.copytree(sim_tour, cut)
    mcap = next((cut / "bag").glob("*.mcap"))
    data = mcap.read_bytes()
    mcap.write_bytes(data[: int(len(data) * 0.6)])
    full = Tour.open(sim_tour).frame_count()
    with caplog.at_level(logging.ERROR, logger="vlkng.tour"):
        tour = Tour.open(cut)
        frames = list(tour.frames())
    assert 0.3 * full < len(frames) < full
    assert all(f.rgb is not None for f in frames)
    stamps = [f.stamp_ns for f in frames]
    assert all(a < b for a, b in zip(stamps, stamps[1:]))
    assert set(stamps) <= set(tour.annotations)  # the frames that survive are the tour's own
    assert tour.poses()  # poses before the cut are still there
    assert any("truncated" in e for e in tour.read_errors())
    assert any("truncated" in r.getMessage() for r in caplog.records)


def test_corrupt_jpeg_is_reported_and_the_rest_decoded(tmp_path, caplog):
    good = _jpeg((200, 20, 20))
    broken = good.copy()
    broken[len(broken) // 3:] = 0
    msgs = [(T0 + i * 10**8, _compressed(T0 + i * 10**8, broken if i == 1 else good)) for i in range(3)]
    msgs.append((T0 + 4 * 10**8, _compressed(T0 + 4 * 10**8, np.frombuffer(b"not an image", np.uint8))))
    _write_bag(tmp_path / "t", "/camera/image_raw/compressed", "sensor_msgs/msg/CompressedImage", msgs)
    with caplog.at_level(logging.WARNING, logger="vlkng.tour"):
        tour = Tour.open(tmp_path / "t")
        frames = list(tour.frames())
    assert [f.stamp_ns for f in frames] == [s for s, _ in msgs]
    assert frames[0].rgb is not None and frames[0].rgb.shape == (24, 32, 3)
    assert abs(int(frames[0].rgb[5, 5, 0]) - 200) < 20 and frames[0].rgb[5, 5, 2] < 60  # RGB order
    assert (frames[1].rgb is None) == (frames[1].error is not None)  # libjpeg may still decode a damaged tail
    assert frames[3].rgb is None and frames[3].error == "corrupt JPEG"
    assert any("corrupt JPEG" in e for e in tour.read_errors())
    assert tour.poses() == []  # no /pose topic: no poses, no crash
    cam = tour.camera_model(90.0)
    assert (cam.width, cam.height, cam.fx) == (32, 24, pytest.approx(16.0))


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3])
def test_raw_image_encodings(tmp_path, storage):
    msgs = [(T0, _raw(T0, "rgb8", (250, 10, 20))), (T0 + 1, _raw(T0 + 1, "bgr8", (20, 10, 250))),
            (T0 + 2, _raw(T0 + 2, "mono8", (128,))), (T0 + 3, _raw(T0 + 3, "nv21", (1, 2)))]
    _write_bag(tmp_path / "t", "/front/image", "sensor_msgs/msg/Image", msgs, storage)
    tour = Tour.open(tmp_path / "t")  # image topic auto-detected
    assert tour.image_topic == "/front/image"
    f = list(tour.frames())
    assert tour.frame_count() == 4
    assert f[0].rgb[0, 0].tolist() == [250, 10, 20]
    assert f[1].rgb[0, 0].tolist() == [250, 10, 20]
    assert f[2].rgb[0, 0].tolist() == [128, 128, 128] and f[2].rgb.shape == (3, 4, 3)
    assert f[3].rgb is None and f[3].error == "unknown encoding 'nv21'"
    assert (f[3].width, f[3].height) == (4, 3)


def test_clock_jump_frames_are_skipped(tmp_path, caplog):
    order = [0, 1, 1, 2, 5, 3, 6]  # a repeated stamp and a jump back
    msgs = [(T0 + k * 10**8, _compressed(T0 + k * 10**8, _jpeg((0, 0, 255)))) for k in order]
    _write_bag(tmp_path / "t", "/cam", "sensor_msgs/msg/CompressedImage", msgs)
    with caplog.at_level(logging.WARNING, logger="vlkng.tour"):
        stamps = [f.stamp_ns for f in Tour.open(tmp_path / "t").frames()]
    assert stamps == [T0 + k * 10**8 for k in (0, 1, 2, 5, 6)]
    assert sum("clock jump" in r.getMessage() for r in caplog.records) == 2


def test_bad_annotation_and_question_lines_are_skipped(sim_tour, tmp_path, caplog):
    t = tmp_path / "t"
    shutil.copytree(sim_tour, t)
    lines = (t / "annotations.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["objects"].append({"gt_track": "x-1", "label": "x", "bbox": [1, 2, "three", 4]})
    lines[0] = json.dumps(first)
    lines[1] = "{not json"
    lines[2] = json.dumps({"objects": []})
    (t / "annotations.jsonl").write_text("\n".join(lines) + "\n")
    qs = json.loads((t / "questions.json").read_text())
    qs["questions"][0]["answer"] = "Z" if qs["questions"][0]["options"] else None
    qs["questions"][0]["options"] = qs["questions"][0]["options"] or ["A. x"]
    qs["questions"].append({"id": "bad", "type": "temporal", "question": "?", "frames": [[5, 1]]})
    (t / "questions.json").write_text(json.dumps(qs))
    (t / "world.json").write_text("[1, 2")
    with caplog.at_level(logging.WARNING, logger="vlkng.tour"):
        tour = Tour.open(t)
    good = Tour.open(sim_tour)
    assert len(tour.annotations) == len(good.annotations) - 2
    assert all(o["gt_track"] != "x-1" for a in tour.annotations.values() for o in a["objects"])
    assert len(tour.questions) == len(good.questions) - 1
    assert tour.world is None
    assert len(tour.read_errors()) >= 6 and len(caplog.records) >= 6
    assert tour.frame_count() == good.frame_count()  # the bag itself is untouched


def test_named_topics_must_exist(sim_tour):
    with pytest.raises(ValueError, match="not in the bag"):
        Tour.open(sim_tour, image_topic="/nope")
    with pytest.raises(ValueError, match="not an image type"):
        Tour.open(sim_tour, image_topic="/pose")
    tour = Tour.open(sim_tour, pose_topic="/other_pose")
    assert tour.poses() == []
