"""GER query node: the ``ask`` service (vlkng_msgs/srv/Ask) over ``AskEngine``, and the operator's
ROS tools beside it: the ``ask`` action (vlkng_msgs/action/Ask: stage feedback, cancel), the
``get_frame`` service (vlkng_msgs/srv/GetFrame: a keyframe's JPEG, boxes optional) and the
``markers`` topic (visualization_msgs/MarkerArray, transient local: every placed object and the
current go_to goal, republished after every merge).

The service and the action live in one mutually exclusive callback group, so with a multi-threaded
executor asking never waits for ingest callbacks (and one question is answered at a time, which
keeps the LLM's usage predictable). The engine only reads the memory.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile
from visualization_msgs.msg import MarkerArray
from vlkng_msgs.action import Ask as AskAction
from vlkng_msgs.msg import GraphUpdate as GraphUpdateMsg
from vlkng_msgs.srv import Ask, GetFrame

from .. import conversions as conv
from ..core.ask.types import AskResult
from ..core.memory import Memory
from ..core.present import place_index
from .common import VlkngLifecycleNode, param, spin_main, warm_up

LATENCY_WINDOW = 1000  # the last answers' latencies kept for statistics

PARAMS = {
    "service_name": ("ask", "Name of the Ask service (relative: namespaced)."),
    "action_name": ("ask", "Name of the Ask action (stage feedback, cancel; relative: namespaced)."),
    "frame_service_name": ("get_frame", "Name of the GetFrame service (keyframe JPEGs; relative: namespaced)."),
    "markers_topic": ("markers", "MarkerArray of the memory's objects and the current goal, for RViz/Foxglove."),
    "markers_frame": ("map", "Frame the markers are drawn in (the SLAM map frame)."),
    "update_topic": ("graph_updates", "Merges (vlkng_msgs/GraphUpdate): each one republishes the markers."),
    "goal_topic": ("go_to/goal", "The navigator's current goal (geometry_msgs/PoseStamped), drawn as an arrow."),
}
STAGES = {"understanding": AskAction.Feedback.UNDERSTANDING, "retrieving": AskAction.Feedback.RETRIEVING,
          "answering": AskAction.Feedback.ANSWERING}
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Canceled(Exception):
    """An Ask action goal was canceled between stages."""


class AskServerNode(VlkngLifecycleNode):
    def __init__(self, memory: Memory | None = None, **kwargs: Any) -> None:
        super().__init__("vlkng_ask", PARAMS, memory, **kwargs)
        self.latencies_s: deque[float] = deque(maxlen=LATENCY_WINDOW)  # bounded: a server runs for months
        self.goal: PoseStamped | None = None

    def setup(self) -> None:
        assert self.memory is not None
        from ..core.ask.engine import AskEngine
        from ..core.llm.registry import make_llm

        self.engine = AskEngine(self.memory, self.cfg, make_llm(self.cfg.llm))
        warm_up(self.memory)
        self.engine.warm_up()  # the first /ask must not pay for building caches
        self.group = MutuallyExclusiveCallbackGroup()
        self.tools = ReentrantCallbackGroup()  # frames and markers never wait for a question
        self.keep(self.create_service(Ask, param(self, "service_name"), self._on_ask,
                                      callback_group=self.group))
        self.action = self.keep(ActionServer(
            self, AskAction, param(self, "action_name"), self._on_ask_goal, callback_group=self.group,
            goal_callback=lambda _g: GoalResponse.ACCEPT, cancel_callback=lambda _g: CancelResponse.ACCEPT))
        self.keep(self.create_service(GetFrame, param(self, "frame_service_name"), self._on_get_frame,
                                      callback_group=self.tools))
        self.markers_pub = self.keep(self.create_publisher(MarkerArray, param(self, "markers_topic"), LATCHED))
        self.keep(self.create_subscription(GraphUpdateMsg, param(self, "update_topic"),
                                           lambda _m: self.publish_markers(), 10, callback_group=self.tools))
        self.keep(self.create_subscription(PoseStamped, param(self, "goal_topic"), self._on_goal, LATCHED,
                                           callback_group=self.tools))
        self.publish_markers()

    # --- the Ask service and action ---------------------------------------------------------------
    def _answer(self, request: Any, on_stage: Any = None) -> AskResult:
        t0 = time.perf_counter()
        if not self.active:
            return AskResult(False, "the ask server is not active (lifecycle state)")
        try:
            result = self.engine.ask(conv.ask_request_from_msg(request), on_stage)
        except Canceled:
            raise
        except Exception as e:  # never leave a client hanging
            self.get_logger().error(f"ask failed: {type(e).__name__}: {e}")
            result = AskResult(False, f"internal error: {type(e).__name__}: {e}")
        self.latencies_s.append(time.perf_counter() - t0)
        return result

    def _on_ask(self, request: Ask.Request, response: Ask.Response) -> Ask.Response:
        return conv.ask_result_to_msg(self._answer(request), response)

    def _on_ask_goal(self, goal_handle: Any) -> Any:
        from ..core.present import result_payload

        t0 = time.monotonic()

        def on_stage(name: str) -> None:
            if goal_handle.is_cancel_requested:
                raise Canceled()
            goal_handle.publish_feedback(AskAction.Feedback(stage=STAGES[name], stage_name=name,
                                                            elapsed_s=float(time.monotonic() - t0)))

        out = AskAction.Result()
        try:
            result = self._answer(goal_handle.request, on_stage)
        except Canceled:
            goal_handle.canceled()
            out.success, out.message = False, "canceled"
            return out
        conv.ask_action_result(result, result_payload(self.memory, result), out, Ask)
        goal_handle.succeed()
        return out

    # --- frames and markers ------------------------------------------------------------------------
    def _on_get_frame(self, request: GetFrame.Request, response: GetFrame.Response) -> GetFrame.Response:
        if not self.active or self.memory is None:
            response.success, response.message = False, "the ask server is not active (lifecycle state)"
            return response
        try:
            return conv.frame_response(self.memory, request, response)
        except Exception as e:
            self.get_logger().error(f"get_frame failed: {type(e).__name__}: {e}")
            response.success, response.message = False, f"internal error: {type(e).__name__}: {e}"
            return response

    def _on_goal(self, msg: PoseStamped) -> None:
        self.goal = msg
        self.publish_markers()

    def publish_markers(self) -> None:
        if self.memory is None:
            return
        now = self.get_clock().now().nanoseconds
        self.markers_pub.publish(conv.object_markers(self.memory.graph.iter_objects(), self.goal, now,
                                                     param(self, "markers_frame"), place_index(self.memory)))


def main(args: list[str] | None = None) -> int:
    return spin_main(AskServerNode, args)
