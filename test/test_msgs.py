"""Conversions between vlkng_msgs / sensor_msgs / geometry_msgs and the core types."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from sensor_msgs.msg import CompressedImage, Image
from vlkng_msgs.srv import Ask

from vlkng_ros import conversions as conv
from vlkng_ros.core.ask.types import AskRequest, AskResult, EvidenceObject, EvidenceRelation, RankedFrame, TypedValue
from vlkng_ros.core.model import ChunkGraph, ChunkObject, ChunkRelation, Keyframe, ObjectNode, Observation, Pose

STAMP = 1_700_000_012_345_678_901


def _rgb(h: int = 48, w: int = 64) -> np.ndarray:
    img = np.zeros((h, w, 3), np.uint8)
    img[:, : w // 2] = (255, 0, 0)  # left half red
    img[:, w // 2:] = (0, 0, 255)  # right half blue
    return img


def test_time_round_trip_keeps_nanoseconds():
    t = conv.time_from_ns(STAMP)
    assert (t.sec, t.nanosec) == (1_700_000_012, 345_678_901)
    assert conv.ns_from_time(t) == STAMP
    with pytest.raises(ValueError):
        conv.time_from_ns(-1)


def test_pose_round_trip_and_covariance_form():
    pose = Pose.from_xy_yaw(3.2, -1.4, 0.7)
    msg = conv.pose_to_msg(pose, STAMP)
    assert isinstance(msg, PoseStamped) and msg.header.frame_id == "map"
    assert conv.ns_from_time(msg.header.stamp) == STAMP
    back = conv.pose_from_msg(msg)
    assert back.x == pytest.approx(3.2) and back.y == pytest.approx(-1.4)
    assert back.yaw == pytest.approx(0.7)
    cov = PoseWithCovarianceStamped()
    cov.header.frame_id = "map"
    cov.pose.pose = msg.pose
    assert conv.pose_from_msg(cov).yaw == pytest.approx(0.7)


def test_pose_with_zero_quaternion_is_rejected():
    msg = PoseStamped()
    msg.pose.orientation.w = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        conv.pose_from_msg(msg)


@pytest.mark.parametrize("fmt,ext", [("jpeg", ".jpg"), ("png", ".png"), ("rgb8; jpeg compressed bgr8", ".jpg")])
def test_compressed_image_decodes_to_rgb(fmt, ext):
    ok, buf = cv2.imencode(ext, cv2.cvtColor(_rgb(), cv2.COLOR_RGB2BGR))
    assert ok
    msg = CompressedImage(format=fmt, data=buf.tobytes())
    rgb = conv.image_to_rgb(msg)
    assert rgb.shape == (48, 64, 3)
    assert rgb[10, 5, 0] > 200 and rgb[10, 5, 2] < 50  # red stays red (channel order)
    assert conv.image_to_rgb(msg, reduce=2).shape == (24, 32, 3)


def test_corrupt_and_unknown_compressed_images_raise_clearly():
    with pytest.raises(ValueError, match="corrupt"):
        conv.image_to_rgb(CompressedImage(format="jpeg", data=b"\xff\xd8not a jpeg"))
    with pytest.raises(ValueError, match="tiff"):
        conv.image_to_rgb(CompressedImage(format="tiff", data=b"abc"))


def _raw(encoding: str, arr: np.ndarray, pad: int = 0) -> Image:
    h, w = arr.shape[:2]
    ch = 1 if arr.ndim == 2 else arr.shape[2]
    rows = np.zeros((h, w * ch + pad), np.uint8)
    rows[:, : w * ch] = arr.reshape(h, w * ch)
    return Image(height=h, width=w, encoding=encoding, step=w * ch + pad, data=rows.tobytes())


def test_raw_images_rgb_bgr_mono_with_row_padding():
    rgb = _rgb()
    assert np.array_equal(conv.image_to_rgb(_raw("rgb8", rgb, pad=4)), rgb)
    assert np.array_equal(conv.image_to_rgb(_raw("bgr8", rgb[:, :, ::-1].copy())), rgb)
    gray = np.full((48, 64), 77, np.uint8)
    out = conv.image_to_rgb(_raw("mono8", gray))
    assert out.shape == (48, 64, 3) and (out == 77).all()


def test_raw_image_unknown_encoding_and_truncation_raise():
    msg = _raw("rgb8", _rgb())
    msg.encoding = "16UC1"
    with pytest.raises(ValueError, match="16UC1"):
        conv.image_to_rgb(msg)
    short = _raw("rgb8", _rgb())
    short.data = bytes(short.data)[:100]
    with pytest.raises(ValueError, match="truncated"):
        conv.image_to_rgb(short)


def test_keyframe_round_trip_with_and_without_pose():
    kf = Keyframe("home", STAMP, 7, 640, 480, Pose.from_xy_yaw(1.0, 2.0, 0.3), "home/123", "kitchen")
    back = conv.keyframe_from_msg(conv.keyframe_to_msg(kf))
    assert back.stamp_ns == STAMP and back.index == 7 and back.place == "kitchen"
    assert back.pose.x == pytest.approx(1.0) and back.pose.yaw == pytest.approx(0.3)
    bare = Keyframe("home", STAMP, 8, 640, 480, None, "home/124")
    msg = conv.keyframe_to_msg(bare)
    assert msg.has_pose is False
    assert conv.keyframe_from_msg(msg).pose is None and conv.keyframe_from_msg(msg).place is None


def test_chunk_graph_round_trip():
    frames = [STAMP, STAMP + 500_000_000]
    chunk = ChunkGraph("home", 16, frames,
                       [ChunkObject("o1", "mug", {frames[0]: (1.0, 2.0, 30.0, 40.0), frames[1]: (2.0, 3.0, 31.0, 41.0)},
                                    {"color": "red", "material": "ceramic"}, ["drink from"], "a red mug"),
                        ChunkObject("o2", "counter", {frames[1]: (0.0, 100.0, 640.0, 480.0)})],
                       [ChunkRelation("o1", "on", "o2", [frames[1]])], {frames[0]: "kitchen"}, ["dropped box"])
    msg = conv.chunk_graph_to_msg(chunk)
    assert msg.chunk_id == "home#000016" and len(msg.objects) == 2
    back = conv.chunk_graph_from_msg(msg)
    assert (back.tour_id, back.chunk_index, back.frames) == ("home", 16, frames)
    assert [(o.local_id, o.label, o.attributes, o.affordances, o.description) for o in back.objects] == \
        [(o.local_id, o.label, o.attributes, o.affordances, o.description) for o in chunk.objects]
    assert [vars(r) for r in back.relations] == [vars(r) for r in chunk.relations]
    assert back.objects[0].boxes[frames[1]] == pytest.approx((2.0, 3.0, 31.0, 41.0))
    assert back.places == {frames[0]: "kitchen"} and back.warnings == ["dropped box"]


def test_object_node_round_trip_caps_frames_keeps_latest():
    obs = [Observation("home", STAMP + i, (1.0, 1.0, 5.0, 5.0), "home#000000", "o1") for i in range(10)]
    node = ObjectNode("obj-1", "kettle", "a steel kettle", {"material": "steel"}, ["boil water"],
                      first_seen_ns=STAMP, last_seen_ns=STAMP + 9, observations=obs, position=(3.5, -1.2))
    msg = conv.object_node_to_msg(node, max_frames=4)
    assert [conv.ns_from_time(b.stamp) for b in msg.frames] == [STAMP + 6, STAMP + 7, STAMP + 8, STAMP + 9]
    back = conv.object_node_from_msg(msg)
    assert back.position == pytest.approx((3.5, -1.2)) and back.attributes == {"material": "steel"}
    assert back.first_seen_ns == STAMP and back.tours == ["home"]
    msg.attribute_values = []
    with pytest.raises(ValueError, match="attribute"):
        conv.object_node_from_msg(msg)


def test_ask_request_and_result_round_trip():
    req = conv.ask_request_to_msg(AskRequest("What was on the counter?", ["A. a mug", "B. a plant"], 3), Ask.Request())
    core = conv.ask_request_from_msg(req)
    assert core.question == "What was on the counter?" and core.top_k == 3 and core.mode is None
    req.top_k = 0
    assert conv.ask_request_from_msg(req).top_k == 0  # the engine's ask.top_k decides

    goal = Pose.from_xy_yaw(3.3, -1.1, 0.0)
    result = AskResult(True, "ok", "a red mug", "A", True,
                       [RankedFrame("home", STAMP, 0.9, Pose.from_xy_yaw(1, 1, 0), ["obj-1"]),
                        RankedFrame("home", STAMP + 1, 0.5, None)],
                       goal, "object_position", (3.3, -1.1), "obj-1",
                       [EvidenceObject("obj-1", "mug", "a red mug", {"color": "red"}, [], (3.3, -1.1),
                                       [("home", STAMP)], 0.8)],
                       [EvidenceRelation("obj-1", "on", "obj-2", [STAMP])],
                       {"retrieve": 0.01, "total": 0.02}, {"answer": 120}, "ger")
    resp = conv.ask_result_to_msg(result, Ask.Response())
    assert [conv.ns_from_time(t) for t in resp.frame_stamps] == [STAMP, STAMP + 1]
    assert list(resp.frame_scores) == pytest.approx([0.9, 0.5])
    assert resp.has_goal and resp.goal.pose.position.x == pytest.approx(3.3)
    back = conv.ask_result_from_msg(resp)
    assert back.answer == "a red mug" and back.choice == "A" and back.found
    assert back.frames[1].pose is None and back.frames[0].object_ids == ["obj-1"]
    assert back.goal.x == pytest.approx(3.3) and back.goal_source == "object_position"
    assert back.evidence_objects[0].position == pytest.approx((3.3, -1.1))
    assert back.evidence_relations[0].predicate == "on"
    assert back.timings_s["total"] == pytest.approx(0.02) and back.prompt_tokens == {"answer": 120}
    assert math.isclose(back.evidence_objects[0].score, 0.8, rel_tol=1e-6)
    assert back.answer_type == "" and back.value.kind == "" and back.value.number is None and back.value.yes is None
    assert resp.value_yes_no == -1 and math.isnan(resp.value_number)


@pytest.mark.parametrize("kind, value", [
    ("count", TypedValue("number", "6", number=6.0)),
    ("existence", TypedValue("yes_no", "no", yes=False)),
    ("when", TypedValue("time", str(STAMP), stamp_ns=STAMP)),
    ("route", TypedValue("direction", "hallway, bedroom", places=["hallway", "bedroom"], direction="left")),
])
def test_typed_answer_survives_the_service(kind, value):
    result = AskResult(True, "ok", "answer text", found=True, answer_type=kind, value=value,
                       evidence_image="/tmp/evidence.jpg")
    resp = conv.ask_result_to_msg(result, Ask.Response())
    assert resp.answer_type == kind and resp.value_text == value.text
    back = conv.ask_result_from_msg(resp)
    assert back.answer_type == kind and back.value == value and back.evidence_image == "/tmp/evidence.jpg"
