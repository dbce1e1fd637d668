"""Goal poses Nav2 can reach (core/goals.py) and the honest goal metric (goal_reach)."""

from __future__ import annotations

import math

import pytest

from vlkng_ros.core.goals import DEFAULT_FOOTPRINT_RADIUS_M, footprint_radius, standoff_goal
from vlkng_ros.core.model import Pose
from vlkng_ros.eval.retrieval_metrics import goal_reach, score_question


def _faces(goal: Pose, xy) -> bool:
    return abs(math.remainder(goal.yaw - math.atan2(xy[1] - goal.y, xy[0] - goal.x), 2 * math.pi)) < 1e-9


def test_a_big_object_gets_a_goal_outside_its_footprint_on_the_side_it_was_seen_from():
    sofa = (2.0, 1.0)
    views = [Pose.from_xy_yaw(2.0, -2.5, math.pi / 2), Pose.from_xy_yaw(6.0, 1.0, math.pi)]  # south, east
    goal = standoff_goal(sofa, radius_m=1.0, views=views, robot_radius_m=0.3, clearance_m=0.2)
    assert math.dist((goal.x, goal.y), sofa) == pytest.approx(1.5)  # footprint + robot + clearance
    # toward the view nearest that distance at or beyond it: the south camera (3.5 m off)
    assert (goal.x, goal.y) == pytest.approx((2.0, -0.5))
    assert _faces(goal, sofa)


def test_a_camera_closer_than_the_standoff_is_itself_the_goal():
    mug = (0.0, 0.0)
    close = Pose.from_xy_yaw(0.6, 0.0, math.pi)
    goal = standoff_goal(mug, radius_m=0.1, views=[close], robot_radius_m=0.3, clearance_m=0.4)
    assert (goal.x, goal.y) == pytest.approx((0.6, 0.0))  # known free space, not beyond it
    assert _faces(goal, mug)


def test_the_standoff_grows_with_the_footprint_and_the_robot():
    views = [Pose.from_xy_yaw(10.0, 0.0, math.pi)]
    small = standoff_goal((0, 0), footprint_radius([0.2, 0.25]), views, 0.3, 0.2)
    big = standoff_goal((0, 0), footprint_radius([1.8, 2.0, 2.1]), views, 0.3, 0.2)
    wide_robot = standoff_goal((0, 0), footprint_radius([0.2, 0.25]), views, 0.6, 0.2)
    assert small.x < wide_robot.x < big.x
    assert big.x == pytest.approx(1.05 + 0.5)
    assert footprint_radius([]) == DEFAULT_FOOTPRINT_RADIUS_M
    assert footprint_radius([50.0]) == 1.5  # a wall-sized box says nothing sensible: capped


def test_no_view_no_standoff():
    goal = standoff_goal((1.0, 2.0), 0.5, [], 0.3, 0.2)
    assert (goal.x, goal.y) == (1.0, 2.0)


WORLD = {"rooms": [{"index": 0, "kind": "living room", "bounds": [0.0, 0.0, 8.0, 6.0]}],
         "objects": [{"gt_track": "sofa-1", "xy": [4.0, 3.0], "size_m": [2.2, 0.9, 0.8]},
                     {"gt_track": "table-2", "xy": [4.0, 1.0], "size_m": [1.0, 0.6, 0.7]},
                     {"gt_track": "cup-3", "xy": [4.0, 1.0], "size_m": [0.1, 0.1, 0.1], "support": ["on", "table-2"]}]}


@pytest.mark.parametrize("goal,reach", [
    ((4.0, 3.0), 0.0),    # the sofa's centre: inside it, no robot stands there
    ((4.0, 4.6), 1.0),    # 1.15 m north of its edge, clear of everything
    ((4.0, 4.9), 1.0),    # 1.9 m from the centre (tour-format's metric: a miss), 1.45 m from its edge
    ((4.0, 7.0), 0.0),    # outside the house
    ((4.0, 1.5), 0.0),    # 1.05 m from the sofa, but the robot's disc overlaps the table
    ((7.9, 3.0), 0.0),    # 2.8 m from its edge: too far to see and reach it
    (None, 0.0),
])
def test_goal_reach_scores_a_reachable_pose_near_the_footprint(goal, reach):
    q = {"targets": ["sofa-1"], "goal_xy": [4.0, 3.0]}
    assert goal_reach(goal, q, WORLD) == reach


def test_goal_reach_needs_the_world_and_a_target():
    q = {"targets": ["sofa-1"], "goal_xy": [4.0, 3.0]}
    assert goal_reach((4.0, 4.6), q, None) is None
    assert goal_reach((4.0, 4.6), {"targets": ["ghost"], "goal_xy": [1, 1]}, WORLD) is None
    row = score_question({**q, "frames": []}, [], "", (4.0, 4.9), [])
    assert row["goal_success"] == 0.0 and goal_reach((4.0, 4.9), q, WORLD) == 1.0  # tour-format's, and the honest one
