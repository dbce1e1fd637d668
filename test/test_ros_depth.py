"""The depth path over real rclpy/DDS: a capture node fed colour, aligned depth (16UC1), a late
depth frame and a PointCloud2, as a robot's drivers publish them, stores each keyframe's depth;
a LiDAR's cloud in its own frame is placed by the mount on /tf_static.
cv_bridge, sensor_msgs_py and image_geometry have no wheels: here the numpy fallbacks do the work
(and the node says so in its log); with ROS installed from apt the libraries are used instead."""

from __future__ import annotations

import contextlib
import threading
import time

import cv2
import numpy as np
import pytest
from helpers import build_test_interfaces, domain_id, transform_stamped, wait_until
import rclpy
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from vlkng_ros import conversions as conv
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.images import decode_depth_png
from vlkng_ros.core.memory import Memory
from vlkng_ros.nodes.capture import CaptureNode
from vlkng_ros.nodes.common import TransitionCallbackReturn

DOMAIN_ID = domain_id(85)  # unique per ROS test module
OK = TransitionCallbackReturn.SUCCESS
T0 = 1_800_000_000_000_000_000
W, H = 160, 120


@pytest.fixture(scope="module")
def ros():
    rclpy.init(args=["--ros-args", "-p", "embeddings.text_backend:=hashing"], domain_id=DOMAIN_ID)
    yield
    rclpy.shutdown()


def _scene(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Frame k: a textured image (new each frame) and its depth: a box at 1.0 + 0.1 k m in front
    of a wall at 4 m, with a few dropouts."""
    rng = np.random.default_rng(k)
    rgb = cv2.resize(rng.integers(0, 255, (12, 16, 3), dtype=np.uint8), (W, H), interpolation=cv2.INTER_NEAREST)
    depth = np.full((H, W), 4.0, np.float32)
    depth[40:90, 60:110] = 1.0 + 0.1 * k
    depth[rng.random((H, W)) < 0.05] = np.nan
    return rgb, depth


def _msgs(k: int):
    from geometry_msgs.msg import PoseWithCovarianceStamped
    from sensor_msgs.msg import CompressedImage

    rgb, depth = _scene(k)
    stamp = T0 + k * 700_000_000
    img = CompressedImage(format="jpeg", data=cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))[1].tobytes())
    img.header.stamp = conv.time_from_ns(stamp)
    img.header.frame_id = "camera_color_optical_frame"
    dmsg = _depth_image(stamp + 2_000_000, depth, img.header.frame_id)  # stamped 2 ms after its colour frame
    pose = PoseWithCovarianceStamped()
    pose.header.stamp = conv.time_from_ns(stamp + 5_000_000)
    pose.header.frame_id = "map"
    pose.pose.pose.position.x = float(k)  # 1 m per frame: every frame is a keyframe
    pose.pose.pose.orientation.w = 1.0
    return stamp, img, dmsg, pose, depth


def _depth_image(stamp: int, depth: np.ndarray, frame_id: str):
    """A 16UC1 (mm, 0 = none) sensor_msgs/Image of ``depth`` (m, NaN = none)."""
    from sensor_msgs.msg import Image

    mm = np.where(np.isfinite(depth), np.rint(depth * 1000), 0).astype("<u2")
    h, w = depth.shape
    msg = Image(height=h, width=w, encoding="16UC1", is_bigendian=0, step=w * 2, data=mm.tobytes())
    msg.header.stamp = conv.time_from_ns(stamp)
    msg.header.frame_id = frame_id
    return msg


def _cloud(stamp: int, pts: np.ndarray | None = None, frame_id: str = "camera_color_optical_frame"):
    """A PointCloud2 of ``pts`` (Nx3) in ``frame_id``; by default in the camera's optical frame: a
    0.5 m wide plane 2 m ahead."""
    from sensor_msgs.msg import PointCloud2, PointField

    if pts is None:
        xs, ys = np.meshgrid(np.linspace(-0.25, 0.25, 30), np.linspace(-0.2, 0.2, 20))
        pts = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, 2.0)])
    pts = np.asarray(pts).astype("<f4")
    msg = PointCloud2(height=1, width=len(pts), is_bigendian=False, point_step=12, row_step=12 * len(pts),
                      is_dense=True, data=pts.tobytes(),
                      fields=[PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                              for i, n in enumerate("xyz")])
    msg.header.stamp = conv.time_from_ns(stamp)
    msg.header.frame_id = frame_id
    return msg


def _driver_with_mounts(pub: Node, mounts: list):
    """The driver's colour image and pose publishers, after latching ``mounts`` (TransformStamped)
    on /tf_static as robot_state_publisher does."""
    from geometry_msgs.msg import PoseWithCovarianceStamped
    from sensor_msgs.msg import CompressedImage
    from tf2_msgs.msg import TFMessage

    p_static = pub.create_publisher(TFMessage, "/tf_static", QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
    p_static.publish(TFMessage(transforms=mounts))
    return (pub.create_publisher(CompressedImage, "camera/image_raw/compressed", 10),
            pub.create_publisher(PoseWithCovarianceStamped, "pose", 10))


@contextlib.contextmanager
def _capture(mem: Memory, tour_id: str, namespace: str = "", **params):
    """A configured, active capture node (clouds on ``points``, full-size stored depth, camera from
    the first frame; ``params``: more parameters) and a driver node to publish from, spun until the
    block ends."""
    cap = CaptureNode(memory=mem, namespace=namespace, parameter_overrides=[
        Parameter("tour_id", value=tour_id), Parameter("depth.store_scale", value=1),
        Parameter("depth.cloud_topic", value="points"), Parameter("camera_info_topic", value="")] + [
        Parameter(k, value=v) for k, v in params.items()])
    pub = Node(f"{tour_id}_driver", namespace=namespace)
    ex = MultiThreadedExecutor()
    ex.add_node(cap)
    ex.add_node(pub)
    spin = threading.Thread(target=ex.spin, daemon=True)
    spin.start()
    try:
        assert cap.trigger_configure() == OK and cap.trigger_activate() == OK
        yield cap, pub
    finally:
        ex.shutdown()
        cap.destroy_node()
        pub.destroy_node()


def test_live_capture_stores_aligned_depth_with_each_keyframe(ros, tmp_path, caplog):
    from geometry_msgs.msg import PoseWithCovarianceStamped
    from sensor_msgs.msg import CompressedImage, Image, PointCloud2

    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    caplog.set_level("INFO", logger="vlkng.conversions")
    conv._LIBS.clear()
    with Memory.open(tmp_path / "mem", cfg) as mem, _capture(mem, "live") as (cap, pub):
        p_img = pub.create_publisher(CompressedImage, "camera/image_raw/compressed", 10)
        p_depth = pub.create_publisher(Image, "camera/aligned_depth_to_color/image_raw", 10)
        p_pose = pub.create_publisher(PoseWithCovarianceStamped, "pose", 10)
        p_cloud = pub.create_publisher(PointCloud2, "points", 10)
        assert wait_until(lambda: p_img.get_subscription_count() and p_depth.get_subscription_count()
                         and p_cloud.get_subscription_count())
        sent = {}
        late = None
        for k in range(5):
            stamp, img, dmsg, pose, depth = _msgs(k)
            sent[stamp] = depth
            if k == 3:  # this depth frame comes late: after its keyframe was stored
                late = dmsg
            elif k == 4:  # no aligned depth for this one, a cloud 10 ms off instead
                sent[stamp] = None
                p_cloud.publish(_cloud(stamp + 10_000_000))
            else:
                p_depth.publish(dmsg)
            time.sleep(0.15)
            p_img.publish(img)
            p_pose.publish(pose)
            time.sleep(0.15)
        assert wait_until(lambda: cap.stats["keyframes"] == 5, 15), dict(cap.stats)
        p_depth.publish(late)
        assert wait_until(lambda: cap.stats["depth_late"] == 1, 15), dict(cap.stats)
        cap.trigger_deactivate()
        cap.builder.depth_writer.flush()
        assert cap.stats["keyframes_with_depth"] == 4  # 0, 1, 2 (image), 4 (cloud); 3 came late
        for stamp, depth in sent.items():
            stored = mem.frames.get_depth("live", stamp)
            assert stored is not None, stamp
            back = decode_depth_png(stored)
            assert back.shape == (H, W)
            if depth is None:  # the cloud: a plane 2 m ahead projected with the camera model
                assert np.nanmedian(back) == pytest.approx(2.0, abs=0.002) and np.isfinite(back).sum() > 100
            else:
                ok = np.isfinite(depth)
                assert (np.isfinite(back) == ok).all()
                assert np.abs(back[ok] - depth[ok]).max() < 0.001
    # the fallbacks did the work and the log says so (where the libraries exist, they are used)
    text = caplog.text
    assert conv.ros_library("cv_bridge") is None or "cv_bridge is installed" in text
    assert "cv_bridge is not importable" in text or "cv_bridge is installed" in text
    assert "sensor_msgs_py" in text


def test_live_cloud_in_the_lidar_frame_is_placed_by_tf(ros, tmp_path):
    """A 3D LiDAR publishes /points in lidar_link (REP 103 body axes: x forward, y left, z up),
    mounted (robot_state_publisher on /tf_static) 0.1 m behind and 0.3 m above the camera. A wall
    2.5 m ahead of the LiDAR, left of its centre line, is 2.4 m ahead of the camera, in the left
    part of the image. A cloud in a frame the tree does not reach gives its keyframe no depth (not
    a cloud taken as if it were in the camera's frame); a cloud in the image's own frame is as it was;
    a LiDAR cloud that comes after its keyframe was stored is placed the same way."""
    from sensor_msgs.msg import PointCloud2

    why = build_test_interfaces()
    if why:
        pytest.skip(why)

    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    ys, zs = np.meshgrid(np.linspace(0.1, 0.6, 40), np.linspace(-0.5, -0.1, 30))  # lidar frame: left, below
    wall = np.column_stack([np.full(ys.size, 2.5), ys.ravel(), zs.ravel()])
    with Memory.open(tmp_path / "mem", cfg) as mem, _capture(mem, "lidar", "lidar_robot") as (cap, pub):
        assert cap.tf is not None
        p_img, p_pose = _driver_with_mounts(pub, [
            transform_stamped(T0, "base_link", "camera_link", (0.2, 0.0, 1.0), (0, 0, 0, 1)),
            transform_stamped(T0, "camera_link", "camera_color_optical_frame", (0, 0, 0), (-0.5, 0.5, -0.5, 0.5)),
            transform_stamped(T0, "base_link", "lidar_link", (0.1, 0.0, 1.3), (0, 0, 0, 1))])
        p_cloud = pub.create_publisher(PointCloud2, "points", 10)
        assert wait_until(lambda: p_img.get_subscription_count() and p_cloud.get_subscription_count()
                         and "lidar_link" in cap.tf.buffer.frames())
        clouds = [(wall, "lidar_link"), (wall, "radar_link"), (None, "camera_color_optical_frame")]
        stamps = []
        for k, (pts, frame) in enumerate(clouds):
            stamp, img, _, pose, _ = _msgs(k)
            stamps.append(stamp)
            p_cloud.publish(_cloud(stamp + 10_000_000, pts, frame))
            time.sleep(0.15)
            p_img.publish(img)
            p_pose.publish(pose)
            time.sleep(0.15)
        assert wait_until(lambda: cap.stats["keyframes"] == 3, 15), dict(cap.stats)
        stamp, img, _, pose, _ = _msgs(3)  # its cloud comes after the keyframe was stored
        stamps.append(stamp)
        p_img.publish(img)
        p_pose.publish(pose)
        assert wait_until(lambda: cap.stats["keyframes"] == 4, 15), dict(cap.stats)
        p_cloud.publish(_cloud(stamp + 10_000_000, wall, "lidar_link"))
        assert wait_until(lambda: cap.stats["depth_late"] == 1, 15), dict(cap.stats)
        cap.trigger_deactivate()
        cap.builder.depth_writer.flush()
        # lidar_link: moved by the mount into the optical frame (x right = -y, y down = -(z + 0.3))
        camera = cap.builder.camera
        want = np.column_stack([-wall[:, 1], -(wall[:, 2] + 0.3), np.full(len(wall), 2.4)])
        uv = camera.project(want)
        for stamp in (stamps[0], stamps[3]):
            stored = mem.frames.get_depth("lidar", stamp)
            assert stored is not None, stamp
            back = decode_depth_png(stored)
            vs, us = np.nonzero(np.isfinite(back))
            assert len(us) > 100
            assert np.nanmedian(back) == pytest.approx(2.4, abs=0.003)
            assert uv[:, 0].min() - 1 <= us.min() and us.max() <= uv[:, 0].max() + 1 < W / 2  # left of centre
            assert uv[:, 1].min() - 1 <= vs.min() and vs.max() <= uv[:, 1].max() + 1
        # radar_link: TF does not connect it to the camera: the keyframe is kept, without depth
        assert mem.graph.get_keyframe("lidar", stamps[1]) is not None
        assert mem.frames.get_depth("lidar", stamps[1]) is None
        assert cap.stats["depth_no_tf"] == 1 and cap.builder.depth_writer.skipped == 1
        # the image's own frame: no lookup, the plane 2 m ahead as before
        assert np.nanmedian(decode_depth_png(mem.frames.get_depth("lidar", stamps[2]))) == pytest.approx(2.0, abs=0.002)


def test_live_depth_in_its_own_frame_is_registered_by_its_camera_info_and_tf(ros, tmp_path):
    """A RealSense driver without align_depth: depth on camera/depth/image_rect_raw in
    camera_depth_optical_frame, 5 cm right of the colour camera (its mount on /tf_static), with
    other intrinsics and size (120x90, wider) on camera/depth/camera_info. A box 1 m ahead of a
    wall at 3 m: before the depth CameraInfo came, the keyframe gets no depth (never the image
    taken as aligned); after, its depth is where the colour camera sees the box and the wall (to a
    mm), also for a depth frame that comes after its keyframe was stored."""
    from helpers import BOX_FACE, render_wall_and_box
    from sensor_msgs.msg import CameraInfo, Image

    from vlkng_ros.core.model import CameraModel

    why = build_test_interfaces()
    if why:
        pytest.skip(why)

    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    colour = CameraModel.from_hfov(W, H, cfg.capture.camera_hfov_deg)  # the node's, from the first frame
    depth_cam = CameraModel(120, 90, 50.0, 50.0, 60.0, 45.0)
    raw = render_wall_and_box(depth_cam, (0.05, 0.0, 0.0))
    info = CameraInfo(width=120, height=90, k=[50.0, 0.0, 60.0, 0.0, 50.0, 45.0, 0.0, 0.0, 1.0])
    info.header.frame_id = "camera_depth_optical_frame"
    with Memory.open(tmp_path / "mem", cfg) as mem, _capture(
            mem, "unaligned", "unaligned_robot", **{"depth.topic": "camera/depth/image_rect_raw",
                                                    "depth.camera_info_topic": "camera/depth/camera_info"}) as (cap, pub):
        assert cap.tf is not None
        optical = (-0.5, 0.5, -0.5, 0.5)
        p_img, p_pose = _driver_with_mounts(pub, [
            transform_stamped(T0, "camera_link", "camera_color_optical_frame", (0, 0, 0), optical),
            transform_stamped(T0, "camera_link", "camera_depth_optical_frame", (0, -0.05, 0), optical)])
        p_depth = pub.create_publisher(Image, "camera/depth/image_rect_raw", 10)
        p_info = pub.create_publisher(CameraInfo, "camera/depth/camera_info", 10)
        assert wait_until(lambda: p_img.get_subscription_count() and p_depth.get_subscription_count()
                         and p_info.get_subscription_count() and "camera_depth_optical_frame" in cap.tf.buffer.frames())
        stamps = []

        def frame(k: int, depth_first: bool = True) -> int:
            stamp, img, _, pose, _ = _msgs(k)
            stamps.append(stamp)
            if depth_first:
                p_depth.publish(_depth_image(stamp + 2_000_000, raw, "camera_depth_optical_frame"))
                time.sleep(0.15)
            p_img.publish(img)
            p_pose.publish(pose)
            assert wait_until(lambda: cap.stats["keyframes"] == k + 1, 15), dict(cap.stats)
            return stamp

        frame(0)  # no depth CameraInfo yet
        assert wait_until(lambda: cap.stats["depth_unregistered"] == 1, 15), dict(cap.stats)
        p_info.publish(info)
        assert wait_until(lambda: cap._depth_camera is not None, 15)
        frame(1)
        late = frame(2, depth_first=False)  # its depth comes after the keyframe was stored
        p_depth.publish(_depth_image(late + 2_000_000, raw, "camera_depth_optical_frame"))
        assert wait_until(lambda: cap.stats["depth_late"] == 1, 15), dict(cap.stats)
        cap.trigger_deactivate()
        cap.builder.depth_writer.flush()
        assert cap.builder.camera == colour
        assert mem.graph.get_keyframe("unaligned", stamps[0]) is not None
        assert mem.frames.get_depth("unaligned", stamps[0]) is None
        assert cap.stats["depth_unregistered"] == 1 and cap.builder.depth_writer.skipped == 1
        ideal = render_wall_and_box(colour)
        x1, y1, x2, y2, z = BOX_FACE
        u1, u2 = colour.fx * x1 / z + colour.cx, colour.fx * x2 / z + colour.cx
        v1, v2 = colour.fy * y1 / z + colour.cy, colour.fy * y2 / z + colour.cy
        us, vs = np.meshgrid(np.arange(W) + 0.5, np.arange(H) + 0.5)
        inner = ((np.abs(us - u1) > 3) & (np.abs(us - u2) > 3)) & (np.abs(vs - v1) > 3) & (np.abs(vs - v2) > 3)
        for stamp in stamps[1:]:
            stored = mem.frames.get_depth("unaligned", stamp)
            assert stored is not None, stamp
            back = decode_depth_png(stored)
            assert back.shape == (H, W) and np.isfinite(back).mean() > 0.9
            ok = inner & np.isfinite(back)
            assert np.abs(back - ideal)[ok].max() < 0.002
            near = np.nonzero(back[H // 2] < 2.0)[0]  # the box where the colour camera sees it
            assert abs(near.min() - u1) <= 1 and abs(near.max() + 1 - u2) <= 1
