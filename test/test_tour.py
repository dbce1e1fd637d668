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


def _cloud_msg(stamp: int, pts: np.ndarray, frame_id: str):
    PointField = TS.types["sensor_msgs/msg/PointField"]
    data = np.frombuffer(np.asarray(pts, "<f4").tobytes(), np.uint8)
    return TS.types["sensor_msgs/msg/PointCloud2"](
        header=_header(stamp, frame_id), height=1, width=len(pts),
        fields=[PointField(name=n, offset=4 * i, datatype=7, count=1) for i, n in enumerate("xyz")],  # 7: FLOAT32
        is_bigendian=False, point_step=12, row_step=12 * len(pts), data=data, is_dense=True)


def _tf_static(stamp: int, edges) -> object:
    g = TS.types
    return g["tf2_msgs/msg/TFMessage"](transforms=[g["geometry_msgs/msg/TransformStamped"](
        header=_header(stamp, parent), child_frame_id=child,
        transform=g["geometry_msgs/msg/Transform"](translation=g["geometry_msgs/msg/Vector3"](x=t[0], y=t[1], z=t[2]),
                                                   rotation=g["geometry_msgs/msg/Quaternion"](x=q[0], y=q[1], z=q[2], w=q[3])))
        for parent, child, t, q in edges])


def test_bag_cloud_in_the_lidar_frame_is_placed_by_the_bags_tf(tmp_path):
    """A bag whose LiDAR cloud (/points, lidar_link: x forward, y left, z up) is mounted on
    /tf_static 0.1 m behind and 0.3 m above the camera: a wall 2.5 m ahead of the LiDAR, left of
    it, is 2.4 m ahead of the camera, left in the image. A cloud in a frame the tree does not reach
    gives no depth (an error naming it); a configured mount is used instead of TF when set."""
    from vlkng_ros.core.config import DepthConfig
    from vlkng_ros.core.model import CameraModel

    w, h = 160, 120
    ys, zs = np.meshgrid(np.linspace(0.1, 0.6, 40), np.linspace(-0.5, -0.1, 30))
    wall = np.column_stack([np.full(ys.size, 2.5), ys.ravel(), zs.ravel()])
    img = np.frombuffer(cv2.imencode(".jpg", np.random.default_rng(0).integers(0, 255, (h, w, 3), np.uint8))[1]
                        .tobytes(), np.uint8)
    with Writer(tmp_path / "t" / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as bag:
        types = {"/tf_static": "tf2_msgs/msg/TFMessage", "/camera/image_raw/compressed": "sensor_msgs/msg/CompressedImage",
                 "/points": "sensor_msgs/msg/PointCloud2"}
        conns = {t: bag.add_connection(t, m, typestore=TS) for t, m in types.items()}

        def write(topic: str, log_ns: int, msg) -> None:
            bag.write(conns[topic], log_ns, TS.serialize_cdr(msg, types[topic]))

        write("/tf_static", T0, _tf_static(T0, [
            ("base_link", "camera_link", (0.2, 0.0, 1.0), (0.0, 0.0, 0.0, 1.0)),
            ("camera_link", "camera_color_optical_frame", (0.0, 0.0, 0.0), (-0.5, 0.5, -0.5, 0.5)),
            ("base_link", "lidar_link", (0.1, 0.0, 1.3), (0.0, 0.0, 0.0, 1.0))]))
        for k, frame in enumerate(("lidar_link", "radar_link")):
            stamp = T0 + (k + 1) * 10**9
            write("/camera/image_raw/compressed", stamp + 10**6,
                  TS.types["sensor_msgs/msg/CompressedImage"](header=_header(stamp, "camera_color_optical_frame"),
                                                              format="jpeg", data=img))
            write("/points", stamp + 2 * 10**6, _cloud_msg(stamp + 10**7, wall, frame))
    cam = CameraModel.from_hfov(w, h, 90.0)
    want = cam.project(np.column_stack([-wall[:, 1], -(wall[:, 2] + 0.3), np.full(len(wall), 2.4)]))
    frames = list(Tour.open(tmp_path / "t", depth=DepthConfig()).frames())
    assert [f.depth is not None for f in frames] == [True, True]  # each frame has a cloud 10 ms off
    d = frames[0].depth()
    vs, us = np.nonzero(np.isfinite(d))
    assert len(us) > 100 and np.nanmedian(d) == pytest.approx(2.4, abs=1e-3)
    assert want[:, 0].min() - 1 <= us.min() and us.max() <= want[:, 0].max() + 1 < w / 2
    assert want[:, 1].min() - 1 <= vs.min() and vs.max() <= want[:, 1].max() + 1
    with pytest.raises(ValueError, match="no transform from the cloud's frame to the camera: .*radar_link"):
        frames[1].depth()
    # a configured mount is used instead of TF: here the LiDAR's turn into the optical frame with
    # the camera 0.5 m further back than TF says, for the cloud in lidar_link and in radar_link alike
    mount = DepthConfig(cloud_frame_to_camera="0 -0.3 0.4 0.5 -0.5 0.5 0.5")
    for f in Tour.open(tmp_path / "t", depth=mount).frames():
        assert np.nanmedian(f.depth()) == pytest.approx(2.9, abs=1e-3)


def _camera_info(stamp: int, frame_id: str, cam) -> object:
    k = np.array([cam.fx, 0.0, cam.cx, 0.0, cam.fy, cam.cy, 0.0, 0.0, 1.0])
    return TS.types["sensor_msgs/msg/CameraInfo"](
        header=_header(stamp, frame_id), height=cam.height, width=cam.width, distortion_model="plumb_bob",
        d=np.zeros(5), k=k, r=np.eye(3).ravel(), p=np.insert(k.reshape(3, 3), 3, 0.0, axis=1).ravel(),
        binning_x=0, binning_y=0, roi=TS.types["sensor_msgs/msg/RegionOfInterest"](
            x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))


def test_bag_depth_in_its_own_frame_is_registered_to_the_colour_image(tmp_path, caplog):
    """A RealSense bag recorded without align_depth: depth (16UC1, 212x120, wider than the 320x240
    colour camera) in camera_depth_optical_frame, 5 cm right of the colour camera (both mounted on
    /tf_static), its own CameraInfo on /camera/depth/camera_info. With depth.camera_info_topic set,
    frames carry depth registered to the colour image: a box 1 m ahead of a wall at 3 m is where the
    colour camera sees it, to a mm. Without it, no frame carries depth (never the image used as if
    aligned) and one warning says what to set."""
    from helpers import BOX_FACE, render_wall_and_box

    from vlkng_ros.core.config import DepthConfig
    from vlkng_ros.core.model import CameraModel

    colour = CameraModel(320, 240, 300.0, 300.0, 160.0, 120.0)
    depth_cam = CameraModel(212, 120, 110.0, 110.0, 106.0, 60.0)
    mm = np.round(render_wall_and_box(depth_cam, (0.05, 0.0, 0.0)) * 1000).astype("<u2")
    img = np.frombuffer(cv2.imencode(".jpg", np.random.default_rng(0).integers(0, 255, (240, 320, 3), np.uint8))[1]
                        .tobytes(), np.uint8)
    optical = (-0.5, 0.5, -0.5, 0.5)
    with Writer(tmp_path / "t" / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as bag:
        types = {"/tf_static": "tf2_msgs/msg/TFMessage", "/camera/image_raw/compressed": "sensor_msgs/msg/CompressedImage",
                 "/camera/camera_info": "sensor_msgs/msg/CameraInfo", "/camera/depth/camera_info": "sensor_msgs/msg/CameraInfo",
                 "/camera/depth/image_rect_raw": "sensor_msgs/msg/Image"}
        conns = {t: bag.add_connection(t, m, typestore=TS) for t, m in types.items()}

        def write(topic: str, log_ns: int, msg) -> None:
            bag.write(conns[topic], log_ns, TS.serialize_cdr(msg, types[topic]))

        write("/tf_static", T0, _tf_static(T0, [
            ("camera_link", "camera_color_optical_frame", (0.0, 0.0, 0.0), optical),
            ("camera_link", "camera_depth_optical_frame", (0.0, -0.05, 0.0), optical)]))  # y left: 5 cm right
        for k in range(2):
            stamp = T0 + (k + 1) * 10**9
            write("/camera/camera_info", stamp, _camera_info(stamp, "camera_color_optical_frame", colour))
            write("/camera/depth/camera_info", stamp, _camera_info(stamp, "camera_depth_optical_frame", depth_cam))
            write("/camera/image_raw/compressed", stamp + 10**6,
                  TS.types["sensor_msgs/msg/CompressedImage"](header=_header(stamp, "camera_color_optical_frame"),
                                                              format="jpeg", data=img))
            write("/camera/depth/image_rect_raw", stamp + 2 * 10**6, TS.types["sensor_msgs/msg/Image"](
                header=_header(stamp + 5 * 10**6, "camera_depth_optical_frame"), height=120, width=212,
                encoding="16UC1", is_bigendian=0, step=424, data=mm.view(np.uint8).ravel()))
    topic = "camera/depth/image_rect_raw"
    frames = list(Tour.open(tmp_path / "t", depth=DepthConfig(topic=topic,
                                                               camera_info_topic="camera/depth/camera_info")).frames())
    assert [f.depth is not None for f in frames] == [True, True]
    ideal = render_wall_and_box(colour)
    x1, _, x2, _, z = BOX_FACE
    u1, u2 = colour.fx * x1 / z + colour.cx, colour.fx * x2 / z + colour.cx
    for f in frames:
        d = f.depth()
        assert d.shape == (240, 320)
        inner = np.isfinite(d) & (np.abs(np.arange(320) - u1) > 3)[None, :] & (np.abs(np.arange(320) - u2) > 3)[None, :]
        inner[40:50] = inner[190:200] = False  # the box's top and bottom edges
        assert np.isfinite(d).mean() > 0.95 and np.abs(d - ideal)[inner].max() < 0.001  # mm readings
        near = np.nonzero(d[120] < 2.0)[0]  # the box's edges where the colour camera sees them
        assert abs(near.min() - u1) <= 1 and abs(near.max() + 1 - u2) <= 1
    # without the depth camera's CameraInfo: no depth, and a warning naming what to set
    with caplog.at_level(logging.WARNING, logger="vlkng.tour"):
        frames = list(Tour.open(tmp_path / "t", depth=DepthConfig(topic=topic)).frames())
    assert [f.depth for f in frames] == [None, None]
    said = [r.getMessage() for r in caplog.records if "camera_info_topic" in r.getMessage()]
    assert len(said) == 1, said
    assert ("'camera_depth_optical_frame', not the colour image's 'camera_color_optical_frame' (not aligned): set "
            "depth.camera_info_topic to the depth camera's CameraInfo (e.g. /camera/depth/camera_info)") in said[0]
