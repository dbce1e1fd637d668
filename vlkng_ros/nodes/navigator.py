"""Navigator node: the ``go_to`` action (vlkng_msgs/action/GoTo) and the voice text path.

GoTo: ask the memory (the ``ask`` service) -> the goal pose it returns (a free-space pose facing
the object: core/goals.py; else the best frame's pose) -> navigation: an action client of Nav2's
``navigate_to_pose`` (``nav2_msgs/action/NavigateToPose``), or of any action type with its
fields (goal ``pose``; feedback ``current_pose``, ``distance_remaining``) named by
``nav_action_type`` (``vlkng_msgs/action/NavigateToPoseCompat`` serves simulators without Nav2).
Where the type is not installed the node says so in ONE info line at start, and go_to answers
NAV2_UNAVAILABLE.

Lifecycle (``rclpy`` LifecycleNode, like the other vlkng nodes; ``autostart`` as theirs):
configure creates the ask and navigation clients, the go_to action server, the voice topics;
activate accepts goals and voice commands; deactivate rejects new goals and stops a running one
(its Nav2 goal is canceled); cleanup destroys them all. rclpy has no bond (bondcpp is C++), so
nav2_lifecycle_manager manages it with ``bond_timeout: 0.0`` (docs/ROS.md).

Voice: ``voice/text`` (std_msgs/String from any speech recogniser) -> "take me to the coffee
machine" starts a GoTo, "where is my backpack?" asks, "stop" cancels; replies for a speech
synthesiser go to ``voice/reply``.
"""

from __future__ import annotations

import importlib
import threading
import time
from typing import Any, Callable

from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String
from vlkng_msgs.action import GoTo
from vlkng_msgs.srv import Ask

from .. import conversions as conv
from ..core.ask.types import AskResult
from .common import ActionClient, VlkngLifecycleNode, spin_main
from ..core.intent import parse_intent

PARAMS: dict[str, tuple[Any, str]] = {
    "ask_service": ("ask", "Ask service the navigator queries (relative: namespaced)."),
    "ask_timeout_s": (30.0, "Give up on an /ask call after this long (s)."),
    "action_name": ("go_to", "Name of the GoTo action server."),
    "nav_action_name": ("navigate_to_pose", "Navigation action server name (Nav2: navigate_to_pose)."),
    "nav_action_type": ("nav2_msgs/action/NavigateToPose",
                        "Navigation action type (any with goal 'pose', feedback 'distance_remaining')."),
    "nav_server_timeout_s": (5.0, "Wait this long for the navigation server before NAV2_UNAVAILABLE (s)."),
    "nav_timeout_s": (600.0, "Abort a navigation that takes longer than this (s)."),
    "voice_text_topic": ("voice/text", "Recognised speech in (std_msgs/String)."),
    "voice_reply_topic": ("voice/reply", "Replies out for a speech synthesiser (std_msgs/String)."),
    "goal_topic": ("go_to/goal", "The goal being driven to (geometry_msgs/PoseStamped, transient local: RViz markers)."),
}


def import_interface(type_name: str) -> Any:
    """'pkg/action/Name' (or 'pkg.action.Name') -> the generated class; ValueError if unknown."""
    parts = type_name.replace(".", "/").split("/")
    if len(parts) != 3:
        raise ValueError(f"interface type {type_name!r}: expected 'package/action/Name'")
    try:
        return getattr(importlib.import_module(f"{parts[0]}.{parts[1]}"), parts[2])
    except (ImportError, AttributeError) as e:
        raise ValueError(f"interface type {type_name!r} is not installed: {e}") from e


def question_for(query: str) -> str:
    """A GoTo query ('the coffee machine', 'take me to the mattress') as a question for /ask:
    a spoken command's words are not part of what is looked for."""
    q = query.strip()
    if q.endswith("?"):
        return q
    intent = parse_intent(q)
    return f"Where is {intent.text if intent.kind == 'goto' else q.rstrip('.!')}?"


def _wait(future: Any, timeout_s: float, cancelled: Callable[[], bool] = lambda: False) -> bool:
    """Block this (executor worker) thread until the future is done; False on timeout/cancel."""
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    deadline = time.monotonic() + timeout_s
    while not done.wait(0.05):
        if time.monotonic() > deadline or cancelled():
            return False
    return True


class NavigatorNode(VlkngLifecycleNode):
    """Lifecycle node without a memory (it asks the ask server over DDS)."""

    needs_memory = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("vlkng_navigator", PARAMS, None, **kwargs)
        self.nav_type = None
        self.nav_client = None
        self.nav_error = ""
        self._nav_checked = False
        self._voice_goal: Any = None

    def setup(self) -> None:
        p = lambda n: self.get_parameter(n).value  # noqa: E731
        self.ask_timeout_s = float(p("ask_timeout_s"))
        self.nav_server_timeout_s = float(p("nav_server_timeout_s"))
        self.nav_timeout_s = float(p("nav_timeout_s"))
        self.group = ReentrantCallbackGroup()
        self.ask_client = self.keep(self.create_client(Ask, p("ask_service"), callback_group=self.group))
        self.nav_type = None
        self.nav_client = None
        self.nav_error = ""
        try:
            self.nav_type = import_interface(p("nav_action_type"))
            self.nav_client = self.keep(ActionClient(self, self.nav_type, p("nav_action_name"),
                                                     callback_group=self.group))
        except ValueError as e:  # no Nav2 on this machine: not an error until someone asks to go
            self.nav_error = str(e)
            if not self._nav_checked:  # once per process, not at every configure
                self.get_logger().info(f"navigation: {e}; go_to will answer NAV2_UNAVAILABLE "
                                       f"(install Nav2, or set nav_action_type)")
        self._nav_checked = True
        self.server = self.keep(ActionServer(
            self, GoTo, p("action_name"), self._execute, callback_group=self.group,
            goal_callback=lambda _g: GoalResponse.ACCEPT if self.active else GoalResponse.REJECT,
            cancel_callback=lambda _g: CancelResponse.ACCEPT))
        self.goto_client = self.keep(ActionClient(self, GoTo, p("action_name"), callback_group=self.group))
        self.reply_pub = self.keep(self.create_publisher(String, p("voice_reply_topic"), 10))
        self.goal_pub = self.keep(self.create_publisher(PoseStamped, p("goal_topic"), QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)))
        self.keep(self.create_subscription(String, p("voice_text_topic"), self._on_voice, 10,
                                           callback_group=self.group))

    # --- asking ----------------------------------------------------------------------------
    def ask(self, question: str, options: list[str] | None = None,
            cancelled: Callable[[], bool] = lambda: False) -> AskResult:
        if not self.ask_client.wait_for_service(timeout_sec=min(5.0, self.ask_timeout_s)):
            return AskResult(False, "the ask service is not available")
        req = Ask.Request(question=question, options=list(options or []), top_k=0, mode="")
        future = self.ask_client.call_async(req)
        if not _wait(future, self.ask_timeout_s, cancelled):
            future.cancel()
            return AskResult(False, "canceled" if cancelled() else "the ask service did not answer in time")
        return conv.ask_result_from_msg(future.result())

    # --- GoTo ------------------------------------------------------------------------------
    def _execute(self, goal_handle: Any) -> GoTo.Result:
        query = goal_handle.request.query
        result = GoTo.Result()
        feedback = GoTo.Feedback(stage=GoTo.Feedback.ASKING)
        goal_handle.publish_feedback(feedback)

        def finish(code: int, message: str) -> GoTo.Result:
            if code == GoTo.Result.CANCELED and not goal_handle.is_cancel_requested:
                message = "the navigator was deactivated"  # not a client's cancel: aborted
            result.error_code, result.error_msg = code, message
            if code == GoTo.Result.NONE:
                goal_handle.succeed()
            elif code == GoTo.Result.CANCELED and goal_handle.is_cancel_requested:
                goal_handle.canceled()
            else:
                goal_handle.abort()
            self.get_logger().info(f"go_to {query!r}: {message or 'arrived'}")
            return result

        cancelled = lambda: goal_handle.is_cancel_requested or not self.active  # noqa: E731
        answer = self.ask(question_for(query), list(goal_handle.request.options), cancelled)
        result.answer = answer.answer
        if cancelled():
            return finish(GoTo.Result.CANCELED, "canceled while asking")
        if not answer.success:
            return finish(GoTo.Result.ASK_FAILED, answer.message)
        if not answer.found:
            return finish(GoTo.Result.NOTHING_FOUND, f"nothing matching {query!r} was seen"
                          + (f" ({answer.message})" if answer.message else ""))
        if answer.goal is None:
            return finish(GoTo.Result.NO_GOAL_POSE, f"{query!r} was seen but no pose is known for it")
        goal = conv.pose_to_msg(answer.goal, 0)  # stamp 0: latest transform on the robot
        result.goal, result.target_object_id = goal, answer.target_object_id
        feedback.stage = GoTo.Feedback.NAVIGATING
        goal_handle.publish_feedback(feedback)
        self.goal_pub.publish(goal)
        code, message = self._drive(goal, goal_handle, feedback, result)
        return finish(code, message)

    def _drive(self, goal: PoseStamped, goal_handle: Any, feedback: Any, result: Any) -> tuple[int, str]:
        if self.nav_client is None:
            return GoTo.Result.NAV2_UNAVAILABLE, self.nav_error
        if not self.nav_client.wait_for_server(timeout_sec=self.nav_server_timeout_s):
            return GoTo.Result.NAV2_UNAVAILABLE, (f"no {self.nav_client._action_name!r} navigation server "
                                                  f"answered within {self.nav_server_timeout_s:.0f} s")
        nav_goal = self.nav_type.Goal()
        nav_goal.pose = goal

        def on_feedback(msg: Any) -> None:
            fb = msg.feedback
            feedback.distance_remaining = float(getattr(fb, "distance_remaining", 0.0))
            if hasattr(fb, "current_pose"):
                feedback.current_pose = fb.current_pose
                result.final_pose = fb.current_pose
            goal_handle.publish_feedback(feedback)

        sent = self.nav_client.send_goal_async(nav_goal, feedback_callback=on_feedback)
        if not _wait(sent, self.nav_server_timeout_s) or not sent.result().accepted:
            return GoTo.Result.NAVIGATION_FAILED, "the navigation server rejected the goal"
        nav_handle = sent.result()
        done = nav_handle.get_result_async()
        cancelled = lambda: goal_handle.is_cancel_requested or not self.active  # noqa: E731
        if not _wait(done, self.nav_timeout_s, cancelled):
            canceling = nav_handle.cancel_goal_async()
            _wait(canceling, 5.0)
            _wait(done, 5.0)
            if cancelled():
                return GoTo.Result.CANCELED, "canceled while navigating"
            return GoTo.Result.NAVIGATION_FAILED, f"navigation took longer than {self.nav_timeout_s:.0f} s"
        status = done.result().status
        if status == GoalStatus.STATUS_SUCCEEDED:
            return GoTo.Result.NONE, ""
        if status == GoalStatus.STATUS_CANCELED:
            return GoTo.Result.CANCELED, "navigation was canceled"
        nav_result = done.result().result
        reason = getattr(nav_result, "error_msg", "") or f"status {status}"
        return GoTo.Result.NAVIGATION_FAILED, f"navigation failed: {reason}"

    # --- voice -----------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.reply_pub.publish(String(data=text))

    def _on_voice(self, msg: String) -> None:
        if not self.active:
            return
        intent = parse_intent(msg.data)
        if intent.kind == "stop":
            if self._voice_goal is not None:
                self._voice_goal.cancel_goal_async()
                self.say("Stopping.")
            else:
                self.say("I am not going anywhere.")
        elif intent.kind == "goto":
            self._voice_goto(intent.text)
        elif intent.kind == "ask":
            answer = self.ask(intent.text)
            if not answer.success:
                self.say(f"Sorry, I could not answer: {answer.message}")
            elif not answer.found:
                self.say("I have not seen anything like that.")
            else:
                self.say(answer.answer or "I found something, but I cannot describe it.")

    def _voice_goto(self, target: str) -> None:
        if not self.goto_client.wait_for_server(timeout_sec=2.0):
            self.say("Navigation is not available.")
            return
        self.say(f"Looking for {target}.")
        sent = self.goto_client.send_goal_async(GoTo.Goal(query=target))
        if not _wait(sent, 10.0) or not sent.result().accepted:
            self.say("I could not start.")
            return
        self._voice_goal = sent.result()
        done = self._voice_goal.get_result_async()

        def on_done(future: Any) -> None:
            self._voice_goal = None
            res = future.result().result
            if res.error_code == GoTo.Result.NONE:
                self.say(f"We are at {target}.")
            elif res.error_code == GoTo.Result.NOTHING_FOUND:
                self.say(f"I have not seen {target}.")
            elif res.error_code == GoTo.Result.CANCELED:
                self.say("Stopped.")
            else:
                self.say(f"I could not get to {target}: {res.error_msg}")

        done.add_done_callback(on_done)


def main(args: list[str] | None = None) -> int:
    return spin_main(NavigatorNode, args)
