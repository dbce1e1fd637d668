"""Web node: the tablet web app (vlkng_ros/web) served from the ROS suite.

Beyond ``vlkng web``: "Go there" sends the ``go_to`` action (vlkng_msgs/action/GoTo) and streams
its feedback (stage, distance remaining, robot pose) to the page, and the live status comes from
the suite's topics: keyframes (rate, keyframes without pose) and chunk graphs (the perception latency from a
chunk's last keyframe to its graph, dropped output); counts (perceived, merged, objects) come from
the memory's stores.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable

from rclpy.callback_groups import ReentrantCallbackGroup
from vlkng_msgs.action import GoTo
from vlkng_msgs.msg import ChunkGraph as ChunkGraphMsg
from vlkng_msgs.msg import Keyframe as KeyframeMsg

from .. import conversions as conv
from ..core.memory import Memory
from ..web.backend import LocalBackend, NavigationUnavailable, resolve_token
from .common import ActionClient, VlkngLifecycleNode, param, spin_main

PARAMS = {
    "go_to_action": ("go_to", "GoTo action the page's 'Go there' sends (relative: namespaced)."),
    "keyframe_topic": ("keyframes", "Keyframes, for the live status (vlkng_msgs/Keyframe)."),
    "chunk_topic": ("chunk_graphs", "Chunk graphs, for the live status (vlkng_msgs/ChunkGraph)."),
}
STAGES = {GoTo.Feedback.ASKING: "asking", GoTo.Feedback.NAVIGATING: "navigating"}
OUTCOMES = {GoTo.Result.NONE: "arrived", GoTo.Result.CANCELED: "canceled"}
NO_POSE_WINDOW = 20  # recent keyframes looked at for the 'no pose' warning



class RosBackend(LocalBackend):
    """The page's backend inside ROS: GoTo for 'Go there', topics for the status."""

    def __init__(self, node: "WebNode", memory: Memory, engine: Any = None,
                 frames_received: Callable[[], int] | None = None) -> None:
        super().__init__(memory, node.cfg, engine=engine)
        self.node = node
        self.frames_received = frames_received
        self.goal_handle: Any = None
        self.nav_lock = threading.Lock()
        self.keyframe_arrival: dict[int, float] = {}
        self.model_latencies: deque[float] = deque(maxlen=10)
        self.recent_pose_flags: deque[bool] = deque(maxlen=NO_POSE_WINDOW)
        self.chunk_warnings: deque[str] = deque(maxlen=3)
        self.seen_keyframes = 0

    # --- navigation ----------------------------------------------------------------------------
    @property
    def can_navigate(self) -> bool:
        return self.node.goto_client.server_is_ready()

    def goto(self, query: str) -> None:
        with self.nav_lock:
            if self.nav.get("state") in ("starting", "asking", "navigating"):
                raise NavigationUnavailable("already on the way: cancel first")
            if not self.node.goto_client.wait_for_server(timeout_sec=2.0):
                raise NavigationUnavailable("the go_to action server (vlkng_navigator) is not running")
            self.nav = {"state": "starting", "query": query, "distance_remaining": None}
        sent = self.node.goto_client.send_goal_async(GoTo.Goal(query=query), feedback_callback=self._on_feedback)
        done = threading.Event()
        sent.add_done_callback(lambda _f: done.set())
        if not done.wait(10.0) or not sent.result().accepted:
            self.nav = {"state": "failed", "query": query, "message": "the navigator did not accept the goal"}
            raise NavigationUnavailable("the navigator did not accept the goal")
        self.goal_handle = sent.result()
        self.goal_handle.get_result_async().add_done_callback(self._on_result)

    def _on_feedback(self, msg: Any) -> None:
        fb = msg.feedback
        nav = dict(self.nav)
        if nav.get("state") not in ("starting", "asking", "navigating"):
            return  # a late feedback after the result
        nav["state"] = STAGES.get(fb.stage, "navigating")
        # the navigator says NAVIGATING before Nav2's first feedback; until that arrives (its pose
        # carries a frame) the distance is unknown, not 0: the page must not show "0.0 m to go"
        from_nav2 = fb.stage == GoTo.Feedback.NAVIGATING and bool(fb.current_pose.header.frame_id)
        nav["distance_remaining"] = round(float(fb.distance_remaining), 2) if from_nav2 else None
        p = fb.current_pose.pose.position
        if from_nav2:
            nav["robot"] = {"x": p.x, "y": p.y}
        self.nav = nav

    def _on_result(self, future: Any) -> None:
        res = future.result().result
        nav = dict(self.nav)
        nav["state"] = OUTCOMES.get(res.error_code, "failed")
        nav["message"] = res.error_msg or ("Arrived." if res.error_code == GoTo.Result.NONE else "")
        nav["goal"] = {"x": res.goal.pose.position.x, "y": res.goal.pose.position.y}
        p = res.final_pose.pose.position
        if p.x or p.y:
            nav["robot"] = {"x": p.x, "y": p.y}
        self.nav = nav
        self.goal_handle = None

    def cancel_goto(self) -> bool:
        handle = self.goal_handle
        if handle is None:
            return False
        handle.cancel_goal_async()
        return True

    # --- live status -----------------------------------------------------------------------------
    def counters(self) -> dict[str, float]:
        out = super().counters()
        if self.frames_received is not None:
            out["frames"] = float(self.frames_received())
        return out

    def status(self) -> dict[str, Any]:
        st = super().status()
        if self.model_latencies:
            st["model_latency_s"] = round(sorted(self.model_latencies)[len(self.model_latencies) // 2], 2)
        return st

    def warnings(self) -> list[str]:
        out = []
        flags = list(self.recent_pose_flags)
        if flags and flags.count(False) >= max(3, len(flags) // 2):
            out.append(f"no pose for {flags.count(False)} of the last {len(flags)} keyframes "
                       "(check TF / the pose topic)")
        failed = getattr(self.node, "chunks_failed", lambda: 0)()
        if failed:
            out.append(f"perception failed on {failed} chunk(s): is the model reachable? (queued for retry)")
        out += [f"perception: {w}" for w in self.chunk_warnings]
        return out

    def on_keyframe(self, msg: KeyframeMsg) -> None:
        self.keyframe_arrival[conv.ns_from_time(msg.header.stamp)] = time.monotonic()
        self.recent_pose_flags.append(bool(msg.has_pose))
        if len(self.keyframe_arrival) > 2000:
            for k in sorted(self.keyframe_arrival)[:1000]:
                del self.keyframe_arrival[k]

    def on_chunk(self, msg: ChunkGraphMsg) -> None:
        if msg.frames:
            arrived = self.keyframe_arrival.get(conv.ns_from_time(msg.frames[-1]))
            if arrived is not None:
                self.model_latencies.append(time.monotonic() - arrived)
        for w in msg.warnings[:3]:
            self.chunk_warnings.append(str(w))


class WebNode(VlkngLifecycleNode):
    """Serves the page while active; shares the suite's memory and ask engine when given them."""

    def __init__(self, memory: Memory | None = None, engine_source: Callable[[], Any] | None = None,
                 frames_received: Callable[[], int] | None = None,
                 chunks_failed: Callable[[], int] | None = None, **kwargs: Any) -> None:
        super().__init__("vlkng_web", PARAMS, memory, **kwargs)
        self._engine_source = engine_source
        self._frames_received = frames_received
        self.chunks_failed = chunks_failed or (lambda: 0)
        self.server: Any = None
        self.backend: RosBackend | None = None
        self.group = ReentrantCallbackGroup()
        self.goto_client = ActionClient(self, GoTo, param(self, "go_to_action"), callback_group=self.group)

    def setup(self) -> None:
        assert self.memory is not None
        from ..web.app import WebServer, create_app

        engine = self._engine_source() if self._engine_source else None
        self.backend = RosBackend(self, self.memory, engine, self._frames_received)
        self.keep(self.create_subscription(KeyframeMsg, param(self, "keyframe_topic"), self.backend.on_keyframe,
                                           100, callback_group=self.group))
        self.keep(self.create_subscription(ChunkGraphMsg, param(self, "chunk_topic"), self.backend.on_chunk,
                                           100, callback_group=self.group))
        token, generated = resolve_token(self.cfg, self.memory.dir)
        self.token = token
        self.server = WebServer(create_app(self.backend, token), self.cfg.web.host, self.cfg.web.port)
        self.server.start()
        if generated:  # printed once, on the console only (never into the ROS log)
            print(f"vlkng web access token (kept in {self.memory.dir / 'web_token'}): {token}", flush=True)
        self.get_logger().info(f"tablet web app on http://{self.cfg.web.host}:{self.server.port}/?token=<token>")

    def teardown(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


def main(args: list[str] | None = None) -> int:
    return spin_main(WebNode, args)
