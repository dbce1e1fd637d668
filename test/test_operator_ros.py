"""The operator's tools over real DDS: the web node's "Go there" (GoTo action -> the stand-in
navigation server, feedback on the page, cancel), driven from the API and from a real browser;
the RViz markers, the GetFrame service and the Ask action; speech from espeak-ng audio."""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from helpers import chromium_driver, domain_id, wait_until  # noqa: E402
from helpers_nav import StandInNav  # noqa: E402

DOMAIN_ID = domain_id(76)  # unique per ROS test module
TOKEN = "ros-web-token-77"


@pytest.fixture(scope="module")
def ros_web(built_home, tmp_path_factory):
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.nodes.ask_server import AskServerNode
    from vlkng_ros.nodes.common import autostart
    from vlkng_ros.nodes.navigator import NavigatorNode
    from vlkng_ros.nodes.web import WebNode

    mem_dir = tmp_path_factory.mktemp("opros") / "mem"
    shutil.copytree(built_home, mem_dir)
    rclpy.init(args=["--ros-args"], domain_id=DOMAIN_ID)
    memory = Memory.open(mem_dir, VlkngConfig())
    over = lambda d: [Parameter(k, value=v) for k, v in d.items()]  # noqa: E731
    ask = AskServerNode(memory=memory)
    nav = NavigatorNode(parameter_overrides=over({"nav_action_type": "vlkng_msgs/action/NavigateToPoseCompat",
                                                  "nav_server_timeout_s": 5.0}))
    web = WebNode(memory=memory, engine_source=lambda: ask.engine,
                  parameter_overrides=over({"web.token": TOKEN, "web.port": 0, "web.status_period_s": 0.3}))
    stand_in = StandInNav()
    assert autostart(ask) and autostart(web) and autostart(nav)
    executor = MultiThreadedExecutor(num_threads=6)
    for n in (ask, nav, web, stand_in):
        executor.add_node(n)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield {"base": f"http://127.0.0.1:{web.server.port}", "memory": memory, "nav": stand_in, "web": web,
               "ask": ask, "executor": executor, "mem_dir": mem_dir}
    finally:
        nav.trigger_deactivate()  # aborts a go_to still driving (a browser test may end mid-drive)
        executor.shutdown()
        for n in (web, stand_in, nav, ask):
            n.destroy_node()
        memory.close()
        rclpy.try_shutdown()


def _api(base: str, path: str, body: dict | None = None):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode() if body is not None else None,
                                 method="POST" if body is not None else "GET",
                                 headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _nav(base: str) -> dict:
    return _api(base, "/api/status")[1]["navigation"]


def test_go_there_drives_the_robot_and_reports_progress(ros_web):
    base, nav = ros_web["base"], ros_web["nav"]
    nav.x = nav.y = 0.0
    nav.speed = 1.5  # a few seconds of driving: several feedback samples even on a loaded machine
    status, ans = _api(base, "/api/ask", {"question": "where is the fridge?"})
    assert status == 200 and ans["found"] and ans["goal"]
    assert wait_until(lambda: _api(base, "/api/status")[1]["can_navigate"], 10)
    status, body = _api(base, "/api/goto", {"query": ans["question"]})
    assert status == 200, body
    distances = []

    def progressed():
        n = _nav(base)
        if n.get("distance_remaining") is not None and n["state"] == "navigating":
            distances.append(n["distance_remaining"])
        return n["state"] in ("arrived", "failed", "canceled")

    assert wait_until(progressed, 60, 0.1)
    final = _nav(base)
    assert final["state"] == "arrived", final
    gx, gy = nav.goals[-1]
    assert math.dist((gx, gy), (ans["goal"]["x"], ans["goal"]["y"])) < 1e-3  # the answer's goal was driven to
    assert math.dist((final["robot"]["x"], final["robot"]["y"]), (gx, gy)) < 0.1
    assert len(distances) >= 2 and distances[0] > distances[-1]


def test_go_there_can_be_canceled(ros_web):
    base, nav = ros_web["base"], ros_web["nav"]
    nav.x = nav.y = -20.0  # far away, slowly: there is time to cancel
    nav.speed = 0.5
    assert _api(base, "/api/goto", {"query": "the fridge"})[0] == 200
    assert wait_until(lambda: _nav(base)["state"] == "navigating", 30, 0.1)
    status, again = _api(base, "/api/goto", {"query": "the sofa"})
    assert status == 409 and "cancel" in again["error"]
    assert _api(base, "/api/goto/cancel", {})[1]["canceling"]
    assert wait_until(lambda: _nav(base)["state"] == "canceled", 20, 0.1)


def test_go_there_in_a_real_browser(ros_web, tmp_path):
    from selenium.webdriver.common.by import By

    base, nav = ros_web["base"], ros_web["nav"]
    nav.x = nav.y = 0.0
    nav.speed = 2.0
    shots = [tmp_path] + ([Path(os.environ["VLKNG_SCREENSHOTS"])] if os.environ.get("VLKNG_SCREENSHOTS") else [])
    driver = chromium_driver()
    try:
        driver.get(f"{base}/?token={TOKEN}")
        assert wait_until(lambda: driver.execute_script("return document.body.dataset.ready"), 20)
        driver.find_element(By.ID, "question").send_keys("where did I see the fridge?")
        driver.find_element(By.ID, "ask-btn").click()
        button = driver.find_element(By.ID, "goto-btn")
        assert wait_until(lambda: button.is_enabled(), 60)
        button.click()
        state = lambda: driver.find_element(By.ID, "nav-state").get_attribute("data-state")  # noqa: E731
        assert wait_until(lambda: state() == "navigating", 30, 0.05)
        # "Driving..." until Nav2's first feedback gives the distance, then "x.x m to go"
        assert wait_until(lambda: "m to go" in driver.find_element(By.ID, "nav-state").text, 30, 0.05)
        assert driver.find_element(By.ID, "cancel-btn").is_displayed()
        for d in shots:
            d.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(d / "web-go-there.png"))
        assert wait_until(lambda: state() == "arrived", 60, 0.1)
        assert driver.find_element(By.ID, "robot-marker")
        assert not driver.find_element(By.ID, "cancel-btn").is_displayed()
    finally:
        driver.quit()


def test_status_counts_keyframes_from_the_topic(ros_web):
    """Keyframes arriving on the topic without a pose raise the 'no pose' warning on the page."""
    from vlkng_msgs.msg import Keyframe as KeyframeMsg

    base = ros_web["base"]
    node = rclpy.create_node("kf_pub")
    pub = node.create_publisher(KeyframeMsg, "keyframes", 100)
    try:
        assert wait_until(lambda: pub.get_subscription_count() > 0, 10)
        for i in range(6):
            msg = KeyframeMsg(tour_id="live", index=i, has_pose=False)
            msg.header.stamp.sec = 100 + i
            pub.publish(msg)
        assert wait_until(lambda: any("no pose" in w for w in _api(base, "/api/status")[1]["warnings"]), 10)
    finally:
        node.destroy_node()


class ToolClient:
    """A plain node with the clients an operator's tools use (RViz, Foxglove, a tablet)."""

    def __init__(self) -> None:
        from rclpy.action import ActionClient
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from visualization_msgs.msg import MarkerArray
        from vlkng_msgs.action import Ask as AskAction
        from vlkng_msgs.srv import GetFrame

        self.node = rclpy.create_node("operator_tools_client")
        self.markers: list = []
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node.create_subscription(MarkerArray, "markers", self.markers.append, latched)
        self.get_frame = self.node.create_client(GetFrame, "get_frame")
        self.ask = ActionClient(self.node, AskAction, "ask")
        self.executor = MultiThreadedExecutor(num_threads=2)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def _result(future, timeout_s: float = 30.0):
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    assert done.wait(timeout_s), "no answer in time"
    return future.result()


@pytest.fixture(scope="module")
def tools(ros_web):
    client = ToolClient()
    yield client
    client.close()


def test_markers_show_every_placed_object_and_the_goal(ros_web, tools):
    from visualization_msgs.msg import Marker
    from vlkng_msgs.msg import GraphUpdate

    from vlkng_ros.core.present import object_name, place_index

    memory = ros_web["memory"]
    if not ros_web["nav"].goals:  # run alone: drive once, so there is a goal to draw
        base = ros_web["base"]
        assert _api(base, "/api/goto", {"query": "where is the fridge?"})[0] == 200
        assert wait_until(lambda: _nav(base)["state"] in ("arrived", "failed", "canceled"), 60, 0.1)
    assert wait_until(lambda: tools.markers and any(m.type == Marker.ARROW for m in tools.markers[-1].markers), 10), \
        "a late subscriber gets the latched markers, the goal driven to among them"
    placed = {o.id: o for o in memory.graph.iter_objects() if o.position}
    rooms = place_index(memory)  # each label names the room the object is in, as answers do
    last = tools.markers[-1].markers
    assert last[0].action == Marker.DELETEALL
    bodies = [m for m in last if m.type == Marker.CYLINDER]
    texts = [m for m in last if m.type == Marker.TEXT_VIEW_FACING]
    assert len(bodies) == len(texts) == len(placed)
    assert {m.text for m in texts} == {object_name(o, rooms) for o in placed.values()}
    by_label: dict[str, set] = {}
    for m, t in zip(bodies, texts):
        assert m.header.frame_id == "map" and m.scale.x > 0.1 and m.id == t.id
        label = next(o.label for o in placed.values() if object_name(o, rooms) == t.text)
        by_label.setdefault(label, set()).add((round(m.color.r, 3), round(m.color.g, 3), round(m.color.b, 3)))
    assert all(len(c) == 1 for c in by_label.values())  # one colour per class
    assert len({next(iter(c)) for c in by_label.values()}) > len(by_label) // 2  # classes differ
    fridge = next(o for o in placed.values() if o.label == "fridge")
    m = next(m for m, t in zip(bodies, texts) if t.text == object_name(fridge, rooms))
    assert math.dist((m.pose.position.x, m.pose.position.y), fridge.position) < 1e-6
    # the goal the earlier Go there drove to is drawn as an arrow
    arrows = [m for m in last if m.type == Marker.ARROW and m.action == Marker.ADD]
    assert arrows and math.dist((arrows[0].pose.position.x, arrows[0].pose.position.y), ros_web["nav"].goals[0]) < 1e-3
    # every merge republishes them
    n = len(tools.markers)
    pub = tools.node.create_publisher(GraphUpdate, "graph_updates", 10)
    assert wait_until(lambda: pub.get_subscription_count() > 0, 10)
    pub.publish(GraphUpdate(chunk_id="home#000000"))
    assert wait_until(lambda: len(tools.markers) > n, 10)


def test_get_frame_returns_the_keyframe_jpeg_with_boxes(ros_web, tools):
    import cv2
    import numpy as np
    from vlkng_msgs.srv import GetFrame

    from vlkng_ros import conversions as conv
    from vlkng_ros.core.present import boxes_in_frame

    memory = ros_web["memory"]
    assert tools.get_frame.wait_for_service(timeout_sec=10)
    kf = next(k for k in memory.graph.keyframes() if boxes_in_frame(memory, k.tour_id, k.stamp_ns))
    req = GetFrame.Request(tour_id=kf.tour_id, stamp=conv.time_from_ns(kf.stamp_ns), draw_boxes=False)
    resp = _result(tools.get_frame.call_async(req))
    assert resp.success and resp.image.format == "jpeg"
    assert bytes(resp.image.data) == memory.frames.get(memory.frames.ref_for(kf.tour_id, kf.stamp_ns))
    assert conv.ns_from_time(resp.image.header.stamp) == kf.stamp_ns
    expected = boxes_in_frame(memory, kf.tour_id, kf.stamp_ns)
    assert list(resp.box_object_ids) == [b["id"] for b in expected]
    assert all(not name.startswith("obj-") for name in resp.box_labels)
    assert resp.has_pose and abs(resp.pose.pose.position.x - kf.pose.x) < 1e-6
    assert resp.where.startswith(f"tour {kf.tour_id}")
    req.draw_boxes, req.max_side = True, 320
    boxed = _result(tools.get_frame.call_async(req))
    img = cv2.imdecode(np.frombuffer(bytes(boxed.image.data), np.uint8), cv2.IMREAD_COLOR)
    assert boxed.success and max(img.shape[:2]) == 320
    for tour, stamp in (("no-such-tour", kf.stamp_ns), (kf.tour_id, kf.stamp_ns + 1), ("../../etc", 1)):
        bad = _result(tools.get_frame.call_async(GetFrame.Request(tour_id=tour, stamp=conv.time_from_ns(stamp))))
        assert not bad.success and bad.message and not bad.image.data


def test_ask_action_reports_stages_and_answers(ros_web, tools):
    from vlkng_msgs.action import Ask as AskAction

    assert tools.ask.wait_for_server(timeout_sec=10)
    feedback: list = []
    handle = _result(tools.ask.send_goal_async(AskAction.Goal(question="where is the fridge?"),
                                               feedback_callback=lambda m: feedback.append(m.feedback)))
    res = _result(handle.get_result_async()).result
    assert res.success and res.found and "fridge" in res.target_name
    assert res.frames and res.has_goal
    assert json.loads(res.result_json)["frames"][0]["where"]["text"].startswith("tour ")
    assert wait_until(lambda: len(feedback) >= 3, 5)
    assert [f.stage_name for f in feedback] == ["understanding", "retrieving", "answering"]
    assert [f.stage for f in feedback] == [AskAction.Feedback.UNDERSTANDING, AskAction.Feedback.RETRIEVING,
                                           AskAction.Feedback.ANSWERING]


def test_ask_action_can_be_canceled(ros_web, tools, monkeypatch):
    """A slow retrieval (as a slow model would be) is canceled between stages."""
    from vlkng_msgs.action import Ask as AskAction

    engine = ros_web["ask"].engine
    slow = engine._retrieve

    def slow_retrieve(*a, **k):
        time.sleep(1.5)
        return slow(*a, **k)

    monkeypatch.setattr(engine, "_retrieve", slow_retrieve)
    feedback: list = []
    handle = _result(tools.ask.send_goal_async(AskAction.Goal(question="where is the sofa?"),
                                               feedback_callback=lambda m: feedback.append(m.feedback.stage_name)))
    assert wait_until(lambda: "retrieving" in feedback, 10)
    _result(handle.cancel_goal_async())
    outcome = _result(handle.get_result_async())
    from action_msgs.msg import GoalStatus

    assert outcome.status == GoalStatus.STATUS_CANCELED
    assert not outcome.result.success and outcome.result.message == "canceled"
    assert "answering" not in feedback


@pytest.fixture(scope="module")
def speech(ros_web):
    """The speech node, its grammar from the memory's labels, fed audio over a topic."""
    import shutil as _sh

    if not _sh.which("espeak-ng"):
        pytest.skip("speech test: espeak-ng is not installed (apt install espeak-ng)")
    pytest.importorskip("pocketsphinx", reason="speech test: pip install pocketsphinx")
    from std_msgs.msg import String, UInt8MultiArray

    from vlkng_ros.core.speech import Speaker
    from vlkng_ros.nodes.speech import SpeechNode

    speaker = Speaker("espeak-ng")
    speaker.speak = speaker.spoken.append  # record the replies instead of playing them
    node = SpeechNode(speaker=speaker, parameter_overrides=[Parameter("memory_dir", value=str(ros_web["mem_dir"]))])
    ros_web["executor"].add_node(node)
    client = rclpy.create_node("speech_test_client")
    pub = client.create_publisher(UInt8MultiArray, "audio", 100)
    texts: list[str] = []
    client.create_subscription(String, "voice/text", lambda m: texts.append(m.data), 10)
    ros_web["executor"].add_node(client)
    assert wait_until(lambda: pub.get_subscription_count() > 0, 10)

    def say(utterance: str) -> None:
        pcm = b"\0\0" * 8000 + Speaker("espeak-ng").synthesise(utterance) + b"\0\0" * 16000
        for i in range(0, len(pcm), 3200):  # 100 ms chunks, as a microphone driver sends them
            pub.publish(UInt8MultiArray(data=pcm[i:i + 3200]))

    yield {"node": node, "say": say, "texts": texts, "spoken": speaker.spoken}
    ros_web["executor"].remove_node(client)
    ros_web["executor"].remove_node(node)
    client.destroy_node()
    node.destroy_node()


def test_spoken_go_to_the_fridge_drives_there_and_stop_cancels(ros_web, speech):
    nav = ros_web["nav"]
    nav.x = nav.y = -30.0  # far away and slow: the robot is still driving when "stop" is said
    nav.speed = 1.0
    goals = len(nav.goals)
    speech["say"]("go to the fridge")
    assert wait_until(lambda: "go to the fridge" in speech["texts"], 20), speech["texts"]
    assert wait_until(lambda: len(nav.goals) > goals, 20)
    fridge = next(o for o in ros_web["memory"].graph.iter_objects() if o.label == "fridge")
    assert math.dist(nav.goals[-1], fridge.position) < 1.5
    assert "Looking for the fridge." in speech["spoken"]
    speech["say"]("stop")
    assert wait_until(lambda: "stop" in speech["texts"], 20), speech["texts"]
    assert wait_until(lambda: "Stopped." in speech["spoken"], 20), speech["spoken"]
    assert math.dist((nav.x, nav.y), nav.goals[-1]) > 5  # it did not arrive


def test_spoken_question_is_answered_aloud(ros_web, speech):
    speech["say"]("where did you see my backpack")
    assert wait_until(lambda: "where did you see my backpack" in speech["texts"], 20), speech["texts"]
    assert wait_until(lambda: any("backpack" in r.lower() for r in speech["spoken"]), 20), speech["spoken"]


def test_speech_grammar_names_the_memorys_labels(ros_web, speech):
    from vlkng_ros.nodes.speech import memory_labels

    labels = memory_labels(str(ros_web["mem_dir"]))
    assert "fridge" in labels and "backpack" in labels
    grammar_labels = speech["node"].recogniser._labels
    assert set(labels) <= grammar_labels
