"""A stand-in navigation server for ROS tests: serves NavigateToPose (Nav2's own type from the
test-only interface package, or vlkng_msgs' NavigateToPoseCompat) and drives a point robot straight
to each goal at ``speed`` m/s, publishing feedback (current pose, distance remaining); honours
cancel. Imported only by tests that already import rclpy."""

from __future__ import annotations

import math
import time

from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from vlkng_msgs.action import NavigateToPoseCompat

STEP_S = 0.05  # one simulated control period


class StandInNav(Node):
    """``goals``: every goal's (x, y), in the order received; ``x``, ``y``: the robot now."""

    def __init__(self, action_type=NavigateToPoseCompat, speed: float = 4.0, name: str = "stand_in_nav") -> None:
        super().__init__(name)
        self.speed = speed
        self.x = self.y = 0.0
        self.goals: list[tuple[float, float]] = []
        self.action_type = action_type
        ActionServer(self, action_type, "navigate_to_pose", self._execute,
                     callback_group=ReentrantCallbackGroup(), cancel_callback=lambda _g: CancelResponse.ACCEPT)

    def _execute(self, goal_handle):
        target = goal_handle.request.pose.pose.position
        self.goals.append((target.x, target.y))
        fb = self.action_type.Feedback()
        while True:
            dist = math.hypot(target.x - self.x, target.y - self.y)
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return self.action_type.Result(error_code=1, error_msg="canceled")
            if dist < 0.05:
                break
            step = min(dist, self.speed * STEP_S)
            self.x += (target.x - self.x) / dist * step
            self.y += (target.y - self.y) / dist * step
            fb.current_pose.header.frame_id = "map"
            fb.current_pose.pose.position.x, fb.current_pose.pose.position.y = self.x, self.y
            fb.distance_remaining = float(max(0.0, dist - step))
            goal_handle.publish_feedback(fb)
            time.sleep(STEP_S)
        goal_handle.succeed()
        return self.action_type.Result()
