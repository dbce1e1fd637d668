"""Goal poses Nav2 can reach (core/goals.py) and the honest goal metric (goal_reach)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlkng_ros.core.geometry import RayAccumulator
from vlkng_ros.core.goals import DEFAULT_FOOTPRINT_RADIUS_M, footprint_radius, object_radius, standoff_goal
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


def _depth_sums(width_m: float, extent_m: float, fixes: int = 3) -> list[float]:
    """Stored sums of an object depth saw ``fixes`` times whole, measuring this footprint."""
    acc = RayAccumulator()
    for _ in range(fixes):
        acc.add_depth((2.0, 1.0), 0.05 * np.eye(2), width_m, extent_m)
    return acc.to_list()


def _inside(xy, centre, half_x: float, half_y: float, yaw: float) -> bool:
    dx, dy = xy[0] - centre[0], xy[1] - centre[1]
    u = dx * math.cos(yaw) + dy * math.sin(yaw)
    v = -dx * math.sin(yaw) + dy * math.cos(yaw)
    return abs(u) <= half_x and abs(v) <= half_y


@pytest.mark.parametrize("yaw", [0.0, 0.4, math.pi / 4, 1.2, math.pi / 2])
@pytest.mark.parametrize("view_xy", [(2.0, -2.5), (6.0, 1.0), (0.5, 1.2), (3.1, 3.3)])
def test_the_goal_lies_outside_the_footprint_depth_measured(yaw, view_xy):
    """A 2.0 x 0.9 m sofa measured by depth: whichever way it is turned and wherever it was seen
    from, the goal (robot disc included) is outside it, and it faces the sofa."""
    sofa = (2.0, 1.0)
    sums = _depth_sums(2.0, 0.9)
    r = object_radius(sums, widths_m=[0.3])  # the box widths alone would say 0.15 m: depth says more
    assert r == pytest.approx(0.5 * math.hypot(2.0, 0.9))
    view = Pose.from_xy_yaw(*view_xy, 0.0)
    goal = standoff_goal(sofa, r, [view], robot_radius_m=0.3, clearance_m=0.2)
    if math.dist(view_xy, sofa) >= r + 0.5:  # a camera nearer than that is itself the goal (it was free)
        for a in np.linspace(0.0, 2 * math.pi, 16, endpoint=False):  # the robot's disc edge
            edge = (goal.x + 0.3 * math.cos(a), goal.y + 0.3 * math.sin(a))
            assert not _inside(edge, sofa, 1.0, 0.45, yaw)
    # on the side it was seen from
    assert math.dist((goal.x, goal.y), view_xy) < math.dist(sofa, view_xy)
    assert _faces(goal, sofa)


def test_without_a_depth_footprint_the_radius_is_what_it_was():
    widths = [0.8, 1.1, 1.4]
    assert object_radius(None, widths) == footprint_radius(widths)
    assert object_radius([], widths) == footprint_radius(widths)
    no_depth = RayAccumulator().to_list()  # a memory built without depth: bearing sums only
    assert object_radius(no_depth, widths) == footprint_radius(widths)
    cut = RayAccumulator()
    cut.add_depth((1.0, 1.0), 0.05 * np.eye(2))  # every view cut by the border: no footprint
    assert object_radius(cut.to_list(), widths) == footprint_radius(widths)
    assert object_radius(_depth_sums(9.0, 9.0), widths) == 1.5  # capped like the widths


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
