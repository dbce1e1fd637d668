"""The operator's tools over real DDS: the web node's "Go there" (GoTo action -> the stand-in
navigation server, feedback on the page, cancel), driven from the API and from a real browser."""

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
from rclpy.action import ActionServer, CancelResponse  # noqa: E402
from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from vlkng_msgs.action import NavigateToPoseCompat  # noqa: E402

from helpers import chromium_driver, domain_id, wait_until  # noqa: E402

DOMAIN_ID = domain_id(76)  # unique per ROS test module
TOKEN = "ros-web-token-77"


class SlowNav(Node):
    """A NavigateToPose-like server driving a point robot at ``speed`` m/s from ``start``."""

    def __init__(self) -> None:
        super().__init__("stand_in_nav")
        self.speed = 4.0
        self.x = self.y = 0.0
        self.goals: list[tuple[float, float]] = []
        ActionServer(self, NavigateToPoseCompat, "navigate_to_pose", self._execute,
                     callback_group=ReentrantCallbackGroup(), cancel_callback=lambda _g: CancelResponse.ACCEPT)

    def _execute(self, goal_handle):
        target = goal_handle.request.pose.pose.position
        self.goals.append((target.x, target.y))
        fb = NavigateToPoseCompat.Feedback()
        while True:
            dist = math.hypot(target.x - self.x, target.y - self.y)
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return NavigateToPoseCompat.Result(error_code=1, error_msg="canceled")
            if dist < 0.05:
                break
            step = min(dist, self.speed * 0.05)
            self.x += (target.x - self.x) / dist * step
            self.y += (target.y - self.y) / dist * step
            fb.current_pose.header.frame_id = "map"
            fb.current_pose.pose.position.x, fb.current_pose.pose.position.y = self.x, self.y
            fb.distance_remaining = float(max(0.0, dist - step))
            goal_handle.publish_feedback(fb)
            time.sleep(0.05)
        goal_handle.succeed()
        return NavigateToPoseCompat.Result()


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
    stand_in = SlowNav()
    assert autostart(ask) and autostart(web)
    executor = MultiThreadedExecutor(num_threads=6)
    for n in (ask, nav, web, stand_in):
        executor.add_node(n)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield {"base": f"http://127.0.0.1:{web.server.port}", "memory": memory, "nav": stand_in, "web": web}
    finally:
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
    nav.speed = 3.0
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
        assert "m to go" in driver.find_element(By.ID, "nav-state").text
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
