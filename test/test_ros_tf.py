"""Live TF over real DDS: the capture node tags keyframes with the camera's pose from /tf +
/tf_static (tf2_msgs/msg/TFMessage from the test-only interface package), and warns once when
images come without any pose."""

from __future__ import annotations

import math
import threading
import time

import cv2
import numpy as np
import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from helpers import build_test_interfaces, domain_id, transform_stamped, wait_until
from vlkng_ros import conversions as conv
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.tf import TransformBuffer, camera_pose, pitch_down, q_from_rpy

DOMAIN_ID = domain_id(77)  # unique per ROS test module
S = 1_000_000_000
T0 = 1_800_000_000 * S
OPTICAL = (-0.5, 0.5, -0.5, 0.5)
MOUNT = ((0.3, 0.1, 1.2), q_from_rpy(0.0, math.radians(10.0), 0.0))  # base_link -> camera_link, 10 deg down


@pytest.fixture(scope="module")
def ros():
    why = build_test_interfaces()
    if why:
        pytest.skip(why)
    rclpy.init(args=["--ros-args", "-p", "embeddings.text_backend:=hashing"], domain_id=DOMAIN_ID)
    robot = Node("fake_robot")
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(robot)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    yield robot, executor
    executor.shutdown()
    robot.destroy_node()
    rclpy.shutdown()


@pytest.fixture
def memory(tmp_path):
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    with Memory.open(tmp_path / "mem", cfg) as mem:
        yield mem


def _image(stamp_ns: int, frame_id: str, seed: int):
    from sensor_msgs.msg import CompressedImage

    rng = np.random.default_rng(seed)  # noise: sharp, and new every frame (kept as a keyframe)
    img = cv2.resize(rng.integers(0, 255, (60, 80, 3), dtype=np.uint8), (320, 240), interpolation=cv2.INTER_NEAREST)
    msg = CompressedImage(format="jpeg", data=cv2.imencode(".jpg", img)[1].tobytes())
    msg.header.stamp = conv.time_from_ns(stamp_ns)
    msg.header.frame_id = frame_id
    return msg


def _base(k: float) -> tuple[tuple[float, float, float], tuple]:
    """odom -> base_link at frame k: driving along a curve."""
    return (0.5 * k, 0.1 * k * k, 0.0), q_from_rpy(0.0, 0.0, 0.2 * k)


def test_live_tf_over_dds_gives_keyframes_the_camera_pose(ros, memory):
    from sensor_msgs.msg import CompressedImage
    from tf2_msgs.msg import TFMessage

    from vlkng_ros.nodes.capture import CaptureNode

    robot, executor = ros
    capture = CaptureNode(memory=memory, namespace="robot1")
    executor.add_node(capture)
    from vlkng_ros.nodes.common import TransitionCallbackReturn as R

    assert capture.trigger_configure() == R.SUCCESS and capture.trigger_activate() == R.SUCCESS
    assert capture.active and capture.tf is not None and capture.tf.kind.startswith("vlkng buffer")
    static_pub = robot.create_publisher(TFMessage, "/tf_static", QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
    tf_pub = robot.create_publisher(TFMessage, "/tf", 100)
    img_pub = robot.create_publisher(CompressedImage, "/robot1/camera/image_raw/compressed", 30)
    static_pub.publish(TFMessage(transforms=[
        transform_stamped(T0, "base_link", "camera_link", *MOUNT),
        transform_stamped(T0, "camera_link", "camera_optical_frame", (0, 0, 0), OPTICAL)]))
    # the latched mount arrives (transient local), and the image subscription is matched
    assert wait_until(lambda: img_pub.get_subscription_count() > 0
                     and "camera_optical_frame" in capture.tf.buffer.frames())
    expected = TransformBuffer()  # what the chain is, computed here (map -> odom shifted and turned)
    map_odom = ((2.0, -1.0, 0.0), q_from_rpy(0.0, 0.0, 0.5))
    expected.set_transform("map", "odom", 0, *map_odom, static=True)
    expected.set_transform("base_link", "camera_link", 0, *MOUNT, static=True)
    expected.set_transform("camera_link", "camera_optical_frame", 0, (0, 0, 0), OPTICAL, static=True)
    stamps = []
    for k in range(6):
        stamp = T0 + S + k * 700_000_000
        stamps.append(stamp)
        before, after = stamp - 100_000_000, stamp + 100_000_000
        for t in (before, after):
            kk = k + (t - stamp) / 700_000_000
            expected.set_transform("odom", "base_link", t, *_base(kk))
        msgs = [transform_stamped(t, "odom", "base_link", *_base(k + (t - stamp) / 700_000_000)) for t in (before, after)]
        msgs += [transform_stamped(before, "map", "odom", *map_odom), transform_stamped(after, "map", "odom", *map_odom)]
        if k == 5:  # the last frame comes BEFORE its transforms: it waits for them
            img_pub.publish(_image(stamp, "camera_optical_frame", k))
            time.sleep(0.3)
            tf_pub.publish(TFMessage(transforms=msgs))
        else:
            tf_pub.publish(TFMessage(transforms=msgs))
            time.sleep(0.05)
            img_pub.publish(_image(stamp, "camera_optical_frame", k))
        time.sleep(0.15)
    assert wait_until(lambda: memory.graph.count_keyframes() == 6), capture.stats
    for kf, stamp in zip(memory.graph.keyframes(), stamps):
        want = camera_pose(expected.lookup("map", "camera_optical_frame", stamp), "camera_optical_frame")
        assert kf.stamp_ns == stamp and kf.frame_id == "camera_optical_frame"
        assert kf.pose is not None
        assert (kf.pose.x, kf.pose.y, kf.pose.z, kf.pose.yaw) == pytest.approx((want.x, want.y, want.z, want.yaw), abs=1e-6)
        assert math.degrees(pitch_down(kf.pose)) == pytest.approx(10.0, abs=1e-4)
    # at the first frame the base is at the odom origin (map (2, -1), turned 0.5 rad; 2 mm off
    # it: interpolated between two samples on a curve) and the lens 0.3 m ahead, 0.1 m left of it
    first = memory.graph.keyframes()[0].pose
    assert math.dist((first.x, first.y), (2.0 + 0.3 * math.cos(0.5) - 0.1 * math.sin(0.5),
                                          -1.0 + 0.3 * math.sin(0.5) + 0.1 * math.cos(0.5))) < 0.005
    assert capture.stats["no_pose_warnings"] == 0
    executor.remove_node(capture)
    capture.destroy_node()


def test_images_without_any_pose_warn_once_naming_what_was_waited_for(ros, memory):
    from sensor_msgs.msg import CompressedImage

    from vlkng_ros.nodes.capture import CaptureNode

    robot, executor = ros
    capture = CaptureNode(memory=memory, namespace="robot2",
                          parameter_overrides=[Parameter("no_pose_warn_s", value=0.5),
                                               Parameter("pose_wait_s", value=0.2)])
    executor.add_node(capture)
    capture.trigger_configure()
    capture.trigger_activate()
    img_pub = robot.create_publisher(CompressedImage, "/robot2/camera/image_raw/compressed", 30)
    assert wait_until(lambda: img_pub.get_subscription_count() > 0)
    for k in range(12):
        img_pub.publish(_image(T0 + 50 * S + k * 600_000_000, "lonely_camera", 100 + k))
        time.sleep(0.15)
    assert wait_until(lambda: capture.stats["no_pose_warnings"] == 1)
    time.sleep(0.5)
    capture.flush_pending()
    assert capture.stats["no_pose_warnings"] == 1  # once, not per frame
    text = capture.no_pose_warning
    assert "/robot2/camera/image_raw/compressed" in text
    assert "TF map -> lonely_camera on /tf, /tf_static" in text
    assert "/robot2/pose" in text and "/robot2/odom" in text
    kfs = memory.graph.keyframes()
    assert kfs and all(k.pose is None for k in kfs)  # stored anyway, never with a made-up pose
    executor.remove_node(capture)
    capture.destroy_node()
