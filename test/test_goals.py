"""Goal poses Nav2 can reach (core/goals.py) and the honest goal metric (goal_reach)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlkng_ros.core import depth as dp
from vlkng_ros.core.config import AskConfig
from vlkng_ros.core.geometry import RayAccumulator
from vlkng_ros.core.goals import (DEFAULT_FOOTPRINT_RADIUS_M, Footprint, View, along_half_extent, clear_standoff, floor_seen,
                                  footprint_radius, near_surface, object_radius, standoff_goal)
from vlkng_ros.core.model import CameraModel, Pose
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


def test_a_long_object_gets_the_goal_nearest_its_centre_a_nearer_camera_at_its_side_not_its_end():
    # a 0.8 x 1.9 m piano along y: depth saw its end face from the south (near side 0.95 m off
    # the centre: goal 1.6 m off, outside tour-format's 1.5 m) and the robot passed its long side
    # 0.7 m from the centre (the box cut by the image border: nothing measured there)
    piano = (0.0, 0.0)
    end = View(Pose.from_xy_yaw(0.0, -3.0, math.pi / 2), 0.8, front_m=3.0 - 0.95)
    side = View(Pose.from_xy_yaw(-0.7, 0.1, 0.0))
    goal = standoff_goal(piano, radius_m=1.03, views=[end, side], robot_radius_m=0.3, clearance_m=0.35)
    assert (goal.x, goal.y) == pytest.approx((-0.7, 0.1))  # where the robot stood, 0.71 m off
    assert _faces(goal, piano)
    # only the end seen: its stand-off, as before
    goal = standoff_goal(piano, radius_m=1.03, views=[end], robot_radius_m=0.3, clearance_m=0.35)
    assert (goal.x, goal.y) == pytest.approx((0.0, -1.6))
    # a camera beyond its stand-off on the long side beats the end: 0.4 + 0.65 off the centre
    far_side = View(Pose.from_xy_yaw(-3.0, 0.0, 0.0), 1.9, front_m=3.0 - 0.4)
    goal = standoff_goal(piano, radius_m=1.03, views=[end, far_side], robot_radius_m=0.3, clearance_m=0.35)
    assert (goal.x, goal.y) == pytest.approx((-1.05, 0.0))


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


CAM = CameraModel.from_hfov(640, 480, 90.0)


def _corners(centre, half_x: float, half_y: float, yaw: float) -> list[tuple[float, float]]:
    c, s = math.cos(yaw), math.sin(yaw)
    return [(centre[0] + a * c - b * s, centre[1] + a * s + b * c)
            for a, b in ((half_x, half_y), (half_x, -half_y), (-half_x, -half_y), (-half_x, half_y))]


def _seen(view: Pose, centre, half_x: float, half_y: float, yaw: float, noise: float = 0.0):
    """The depth image (a level camera at ``view``) of a box footprint standing in front of a wall
    8 m away, and the box around it in the image: what a keyframe of the sofa stores."""
    u = (np.arange(CAM.width) + 0.5 - CAM.cx) / CAM.fx  # x / z per column
    fwd, right = (math.cos(view.yaw), math.sin(view.yaw)), (math.sin(view.yaw), -math.cos(view.yaw))
    cam = [((px - view.x) * right[0] + (py - view.y) * right[1], (px - view.x) * fwd[0] + (py - view.y) * fwd[1])
           for px, py in _corners(centre, half_x, half_y, yaw)]
    cols = np.full(CAM.width, np.inf)
    for (ax, az), (bx, bz) in zip(cam, cam[1:] + cam[:1]):  # each edge: the depth where a column's ray hits it
        den = (bx - ax) - u * (bz - az)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (u * az - ax) / den
            z = az + t * (bz - az)
        cols = np.where((t >= 0) & (t <= 1) & (z > 0), np.minimum(cols, z), cols)
    d = np.full((CAM.height, CAM.width), 8.0, dtype=np.float32)
    hit = np.isfinite(cols)
    d[170:310, hit] = cols[hit]
    if noise:
        rng = np.random.default_rng(0)
        d += (rng.normal(0.0, 1.0, d.shape) * dp.DepthNoise().sigma(d)).astype(np.float32)
    x1, x2 = int(np.argmax(hit)), int(CAM.width - np.argmax(hit[::-1]))
    return d, (x1, 170, x2, 310)


def _depth_view(view: Pose, centre, half_x, half_y, yaw, estimate) -> View:
    """What object_views measures in that keyframe: the width, and the near surface toward ``estimate``."""
    depth, box = _seen(view, centre, half_x, half_y, yaw, noise=1.0)
    pts = dp.object_points(depth, box, CAM)
    front = near_surface(dp.optical_to_map(pts, view), view, estimate)
    return View(view, (box[2] - box[0]) / CAM.fx * math.dist((view.x, view.y), estimate), front)


def _facing(xy, target) -> Pose:
    return Pose.from_xy_yaw(xy[0], xy[1], math.atan2(target[1] - xy[1], target[0] - xy[0]))


def _disc_clear(goal: Pose, centre, half_x, half_y, yaw, radius=0.3) -> bool:
    return not any(_inside((goal.x + radius * math.cos(a), goal.y + radius * math.sin(a)), centre, half_x, half_y, yaw)
                   for a in np.linspace(0.0, 2 * math.pi, 32, endpoint=False)) and not _inside(
        (goal.x, goal.y), centre, half_x, half_y, yaw)


@pytest.mark.parametrize("estimate", [(2.0, 1.0), (2.25, 1.3), (1.8, 0.75)])
def test_a_sofa_seen_from_the_front_with_depth_gets_a_goal_at_its_front(estimate):
    """A 2 x 0.9 m sofa seen from the front 3.5 m away: depth measures its near surface, so the goal
    stands robot radius + clearance off the front (1.1 m from the centre: a success by tour-format's
    1.5 m), not off half its diagonal (1.75 m: a miss); wherever the centre was estimated, the robot's
    disc stays out of the sofa."""
    sofa, view = (2.0, 1.0), _facing((2.0, -2.5), (2.0, 1.0))
    v = _depth_view(view, sofa, 1.0, 0.45, 0.0, estimate)
    assert v.front_m == pytest.approx(math.dist((view.x, view.y), estimate) - (estimate[1] - 0.55), abs=0.25)
    goal = standoff_goal(estimate, 0.5 * math.hypot(2.0, 0.9), [v], robot_radius_m=0.3, clearance_m=0.35)
    assert _disc_clear(goal, sofa, 1.0, 0.45, 0.0)
    assert math.dist((goal.x, goal.y), sofa) <= 1.5
    if estimate == sofa:
        # the near surface is a low percentile of noisy readings: ~1.3 sigma (0.07 m at 3 m) nearer
        assert math.dist((goal.x, goal.y), sofa) == pytest.approx(0.45 + 0.65, abs=0.1)
    assert _faces(goal, estimate)


@pytest.mark.parametrize("yaw", [0.0, 0.4, math.pi / 4, 1.2, math.pi / 2])
@pytest.mark.parametrize("view_xy", [(2.0, -2.5), (6.0, 1.0), (-0.5, 1.2), (3.1, 3.8)])
def test_the_goal_lies_outside_the_sofa_whose_near_side_depth_measured(yaw, view_xy):
    """The same sofa turned any way and seen from any side, its near surface measured along the line
    to its centre: the goal (robot disc included) is outside it, no farther off than the radius rule
    put it, and faces it."""
    sofa = (2.0, 1.0)
    v = _depth_view(_facing(view_xy, sofa), sofa, 1.0, 0.45, yaw, sofa)
    r = 0.5 * math.hypot(2.0, 0.9)
    goal = standoff_goal(sofa, r, [v], robot_radius_m=0.3, clearance_m=0.35)
    assert _disc_clear(goal, sofa, 1.0, 0.45, yaw)
    assert math.dist((goal.x, goal.y), sofa) <= r + 0.65 + 0.05
    assert _faces(goal, sofa)


def _support_width(view_xy, centre, half_x, half_y, yaw) -> float:
    """The width a box footprint shows across the line of sight from ``view_xy``."""
    a = math.atan2(centre[1] - view_xy[1], centre[0] - view_xy[0]) + math.pi / 2
    return 2 * (half_x * abs(math.cos(a - yaw)) + half_y * abs(math.sin(a - yaw)))


def test_without_depth_the_extent_along_the_approach_is_the_width_seen_across_it():
    """No depth: the sofa seen from the front (2 m wide) and from both ends (0.9 m wide): approached
    from the front, the half extent along the approach is what the end views showed; one view
    across the approach is not enough (it may show the object part-hidden)."""
    sofa = (2.0, 1.0)
    front, end, other_end = _facing((2.0, -2.5), sofa), _facing((6.0, 1.0), sofa), _facing((-1.5, 1.2), sofa)
    views = [View(front, 2.0), View(end, 0.9), View(other_end, 0.85)]
    assert along_half_extent(sofa, views, math.pi / 2) == pytest.approx(0.45)  # from the south, northward
    assert along_half_extent(sofa, views, math.pi) is None  # from the east: only the front view across it
    assert along_half_extent(sofa, views[:2], math.pi / 2) is None
    goal = standoff_goal(sofa, footprint_radius([2.0, 0.9]), views, robot_radius_m=0.3, clearance_m=0.35)
    assert (goal.x, goal.y) == pytest.approx((2.0, 1.0 - 0.45 - 0.65))  # the front approach: the nearer goal
    assert math.dist((goal.x, goal.y), sofa) <= 1.5
    # seen from the front alone, nothing measured the depth: the radius as before
    alone = standoff_goal(sofa, footprint_radius([2.0]), [View(front, 2.0)], 0.3, 0.35)
    assert math.dist((alone.x, alone.y), sofa) == pytest.approx(1.0 + 0.65)


@pytest.mark.parametrize("yaw", [0.0, 0.4, math.pi / 4, 1.2, math.pi / 2, 2.5])
def test_without_depth_views_all_round_keep_the_goal_outside_the_footprint(yaw):
    sofa = (2.0, 1.0)
    views = []
    for a in np.radians(np.arange(0, 360, 30)):
        xy = (sofa[0] + 3.5 * math.cos(a), sofa[1] + 3.5 * math.sin(a))
        views.append(View(_facing(xy, sofa), _support_width(xy, sofa, 1.0, 0.45, yaw)))
    goal = standoff_goal(sofa, footprint_radius([v.width_m for v in views]), views, 0.3, 0.35)
    assert _disc_clear(goal, sofa, 1.0, 0.45, yaw)
    assert math.dist((goal.x, goal.y), sofa) <= 1.5  # approached along its short side
    assert _faces(goal, sofa)


def _box_points(centre, half_x, half_y, step=0.05) -> np.ndarray:
    xs = np.arange(centre[0] - half_x, centre[0] + half_x + 1e-9, step)
    ys = np.arange(centre[1] - half_y, centre[1] + half_y + 1e-9, step)
    return np.array([(x, y) for x in xs for y in ys])


def test_the_goal_moves_back_along_the_line_of_sight_until_the_robot_clears_what_depth_saw():
    """A towel on a rail beside a bathtub, seen from 3 m south: 0.65 m off the towel's front the
    robot's disc would overlap the tub's corner; the goal moves back toward the camera (free: the
    robot stood there) until the disc clears what depth saw there. A lone noisy reading moves nothing."""
    towel, tub = (0.0, 0.0), (0.75, -0.6)  # the tub 1.5 x 0.8, its west edge 0.15 m east of the line
    view = _facing((0.0, -3.0), towel)
    obstacles = np.vstack([_box_points(towel, 0.25, 0.05), _box_points(tub, 0.6, 0.4)])
    plain = standoff_goal(towel, 0.3, [View(view, 0.5, 2.95)], 0.3, 0.35)
    assert plain.y == pytest.approx(-0.75)  # the towel is thin: its half extent counts as MIN_FOOTPRINT_RADIUS_M
    assert not _disc_clear(plain, tub, 0.6, 0.4, 0.0)  # goal_reach would fail it
    # along the line of sight: clear of the tub's corner by 0.35 m, not far past
    assert 1.25 <= clear_standoff(towel, (0.0, -1.0), 0.75, 3.0, obstacles, 0.35) <= 1.4
    goal = standoff_goal(towel, 0.3, [View(view, 0.5, 2.95, obstacles)], 0.3, 0.35)
    assert _disc_clear(goal, tub, 0.6, 0.4, 0.0) and _disc_clear(goal, towel, 0.25, 0.05, 0.0)
    # ... or nearer, the line turned away from the tub where the camera saw free floor (fan_standoff)
    assert math.dist((goal.x, goal.y), towel) <= 1.4 and goal.x <= 0.0
    assert _faces(goal, towel)
    lone = np.vstack([_box_points(towel, 0.25, 0.05), [[0.1, -0.75]]])
    assert clear_standoff(towel, (0.0, -1.0), 0.7, 3.0, lone, 0.35) == pytest.approx(0.7)
    # nowhere clear on the line: the camera's own pose
    wall = np.array([(x, y) for x in np.arange(-0.5, 0.51, 0.05) for y in np.arange(-3.2, -0.5, 0.1)])
    assert clear_standoff(towel, (0.0, -1.0), 0.7, 3.0, wall, 0.35) == 3.0


def test_every_view_s_depth_keeps_the_robot_off_what_any_view_saw():
    """A mug on a desk: the west camera's depth saw the desk; the south-east camera's (out of its
    image) did not. Each view's goal is checked against what all of them saw: the south-east line,
    0.75 m off the mug, would put the robot's disc on the desk's edge."""
    mug, desk = (0.0, 0.0), (0.0, 0.0)  # the desk 1.2 x 0.6 under the mug
    west = View(_facing((-3.0, 0.0), mug), 0.1, None, _box_points(desk, 0.6, 0.3))
    south_east = View(_facing((1.0, -1.3), mug), 0.1, None, np.array([[3.0, -3.0], [3.0, -3.05], [3.05, -3.0]]))
    goal = standoff_goal(mug, 0.1, [west, south_east], 0.3, 0.35)
    assert _disc_clear(goal, desk, 0.6, 0.3, 0.0)
    assert math.dist((goal.x, goal.y), mug) <= 0.95  # not slid back past the desk's far end (west: 0.95)
    assert _faces(goal, mug)


def test_a_line_of_sight_blocked_near_the_object_turns_where_the_camera_saw_free_floor():
    """A chair 1 m in front of a plant, on the only camera's line of sight: sliding back past the
    chair puts the goal 1.6 m off (beyond tour-format's 1.5 m); the line turned about the plant
    finds the floor beside the chair that the camera saw, nearer. Where a low thing hides that
    side from the camera, the other side."""
    plant, chair = (0.0, 0.0), (0.0, -1.0)  # the chair 0.5 x 0.5
    cam = _facing((0.0, -3.0), plant)
    seen = _box_points(chair, 0.25, 0.25)
    assert clear_standoff(plant, (0.0, -1.0), 0.75, 3.0, seen, 0.35) >= 1.6  # along the line
    goal = standoff_goal(plant, 0.1, [View(cam, 0.3, 2.9, seen)], 0.3, 0.35)
    assert _disc_clear(goal, chair, 0.25, 0.25, 0.0)
    assert math.dist((goal.x, goal.y), plant) <= 1.35
    assert _faces(goal, plant)
    # a low box east of the camera's line hides the floor east of the chair: the goal goes west
    box = _box_points((0.55, -1.95), 0.25, 0.1)
    goal = standoff_goal(plant, 0.1, [View(cam, 0.3, 2.9, np.vstack([seen, box]))], 0.3, 0.35)
    assert goal.x < 0.0 and _disc_clear(goal, chair, 0.25, 0.25, 0.0)
    assert math.dist((goal.x, goal.y), plant) <= 1.35
    # nothing seen beside it (walls both sides of the chair): back along the line, as before
    walls = np.vstack([seen, _box_points((-0.9, -1.0), 0.3, 0.9), _box_points((0.9, -1.0), 0.3, 0.9)])
    goal = standoff_goal(plant, 0.1, [View(cam, 0.3, 2.9, walls)], 0.3, 0.35)
    assert goal.x == pytest.approx(0.0) and goal.y <= -1.6


def test_a_clear_goal_out_of_reach_loses_to_the_near_stand_off():
    """A kettle on a counter in a 0.5 m gap between the counter and a table (the robot is 0.6 m
    wide): depth shows no place for the robot's disc until 1.6 m back and walls hide both sides.
    A goal there is clear but too far to see and reach the kettle (ask.goal_max_from_object_m,
    tour-format's 1.5 m): the line's stand-off is sent instead (the planner stops where it can).
    Without a limit (inf), the clear goal, as before."""
    reach = AskConfig().goal_max_from_object_m
    assert reach == 1.5
    kettle = (0.0, 0.0)
    cam = _facing((0.0, -3.0), kettle)
    gap = np.vstack([_box_points((-0.55, -0.7), 0.3, 0.7), _box_points((0.55, -0.7), 0.3, 0.7),  # counter, table
                     _box_points((-1.2, -2.0), 0.3, 1.0), _box_points((1.2, -2.0), 0.3, 1.0)])  # walls beside
    view = View(cam, 0.2, 2.9, gap)
    far = standoff_goal(kettle, 0.1, [view], 0.3, 0.35)  # the nearest clear goal, however far
    assert math.dist((far.x, far.y), kettle) > reach
    goal = standoff_goal(kettle, 0.1, [view], 0.3, 0.35, max_from_object_m=reach)
    assert math.dist((goal.x, goal.y), kettle) == pytest.approx(0.75)  # its front (0.1) + 0.3 + 0.35
    assert goal.x == pytest.approx(0.0) and _faces(goal, kettle)


def test_a_clear_goal_within_reach_beats_a_nearer_blocked_one_and_a_far_clear_one_a_far_blocked_one():
    """The chair in front of the plant: the turned line's clear goal (<= 1.35 m) wins over the
    blocked 0.75 m stand-off. A sofa whose front is 1.0 m from its centre (stand-off 1.65 m, out
    of reach anyway) with a table in front: the clear goal behind the table, not one on it."""
    plant, chair = (0.0, 0.0), (0.0, -1.0)
    cam = _facing((0.0, -3.0), plant)
    goal = standoff_goal(plant, 0.1, [View(cam, 0.3, 2.9, _box_points(chair, 0.25, 0.25))], 0.3, 0.35,
                         max_from_object_m=1.5)
    assert _disc_clear(goal, chair, 0.25, 0.25, 0.0) and math.dist((goal.x, goal.y), plant) <= 1.35
    sofa, table = (0.0, 0.0), (0.0, -1.9)  # the table 0.6 x 0.4, walls beside it
    cam = _facing((0.0, -4.0), sofa)
    seen = np.vstack([_box_points(table, 0.3, 0.2), _box_points((-1.1, -1.9), 0.3, 0.8),
                      _box_points((1.1, -1.9), 0.3, 0.8)])
    goal = standoff_goal(sofa, 1.0, [View(cam, 2.0, 3.0, seen)], 0.3, 0.35, max_from_object_m=1.5)
    assert _disc_clear(goal, table, 0.3, 0.2, 0.0) and goal.y < -2.1


def _hull(points: np.ndarray, view_yaw: float) -> Footprint:
    """The footprint an object's stored sums keep of these measured surface points."""
    acc = RayAccumulator()
    acc.add_depth((float(points[:, 0].mean()), float(points[:, 1].mean())), 0.05 * np.eye(2), 1.6, 1.0)
    acc.add_points(points, view_yaw)
    fp = Footprint.of(acc.to_list())
    assert fp is not None
    return fp


def test_a_bed_seen_from_its_foot_gets_a_goal_beside_it_where_the_camera_saw_free_floor():
    """A 1.6 x 2.0 m bed seen only from its foot, 4 m off, its centre estimated 0.2 m short (toward
    the camera) and 0.1 m aside: off the foot the robot stands 1.65 m from the true centre
    (tour-format's miss). Depth saw the bed's foot and top (its footprint) and free floor beside
    it: the goal is beside the long side, half the width plus the robot's disc off, nearest the
    centre, within 1.5 m of the true centre and clear of the bed."""
    bed, estimate = (0.0, 0.0), (0.1, -0.2)
    cam = _facing((0.0, -4.0), estimate)
    seen = _box_points((0.0, -0.25), 0.8, 0.75)  # the foot and the near part of the top: the head end hidden
    walls = np.vstack([_box_points((-2.6, 0.0), 0.1, 2.0), _box_points((2.6, 0.0), 0.1, 2.0)])
    view = View(cam, 1.6, math.dist((cam.x, cam.y), estimate) - (estimate[1] + 1.0), np.vstack([seen, walls]))
    r = 0.5 * math.hypot(1.6, 2.0)
    before = standoff_goal(estimate, r, [view], 0.3, 0.35, max_from_object_m=1.5)  # no footprint: off the foot
    assert math.dist((before.x, before.y), bed) > 1.5
    goal = standoff_goal(estimate, r, [view], 0.3, 0.35, max_from_object_m=1.5, footprints=(_hull(seen, cam.yaw),))
    assert math.dist((goal.x, goal.y), bed) <= 1.5
    assert abs(goal.x) > 0.8  # beside the long side
    assert _disc_clear(goal, bed, 0.8, 1.0, 0.0)
    assert _faces(goal, estimate)
    # walls close beside the bed (no room for the robot's disc there): off the foot, as before
    tight = np.vstack([seen, _box_points((-1.2, 0.0), 0.1, 2.0), _box_points((1.2, 0.0), 0.1, 2.0)])
    view = View(cam, 1.6, view.front_m, tight)
    goal = standoff_goal(estimate, r, [view], 0.3, 0.35, max_from_object_m=1.5, footprints=(_hull(seen, cam.yaw),))
    assert abs(goal.x - estimate[0]) < 0.3 and goal.y < -1.0 and _disc_clear(goal, bed, 0.8, 1.0, 0.0)


def _perimeter(centre, half_x, half_y, step=0.05) -> np.ndarray:
    box = _box_points(centre, half_x, half_y, step)
    edge = (np.abs(np.abs(box[:, 0] - centre[0]) - half_x) < 1e-6) | (np.abs(np.abs(box[:, 1] - centre[1]) - half_y) < 1e-6)
    return box[edge]


def test_a_pillow_on_a_bed_gets_a_goal_clear_of_the_bed():
    """A pillow near the west edge of a 1.6 x 2.0 m bed against a wall, seen from the west (the bed's side face
    read densely) and from the south-east: the top of the bed reads only sparsely from there (flat,
    far, dark), so the south-east line's stand-off looks free of readings, yet it lies on the bed,
    whose measured footprint the pillow rests on. That goal is not acceptable where the floor at
    the bed's edge is clear: the goal is beside the bed, its disc clear of it, within reach."""
    bed, pillow = (0.0, 0.0), (-0.1, 0.7)
    west, south_east = _facing((-3.0, 0.7), pillow), _facing((0.5, -3.0), pillow)
    top = np.array([(x, y) for x in np.arange(-0.6, 0.61, 0.6) for y in np.arange(-0.9, 0.91, 0.6)])
    wall = _box_points((0.0, 1.15), 3.0, 0.05)  # the bed's head against it
    readings = np.vstack([_perimeter(bed, 0.8, 1.0), top, _box_points(pillow, 0.2, 0.15), wall])
    views = [View(west, 0.4, 2.7, readings), View(south_east, 0.4, math.dist((0.5, -3.0), pillow) - 0.2, readings)]
    plain = standoff_goal(pillow, 0.25, views, 0.3, 0.35, max_from_object_m=1.5)
    assert not _disc_clear(plain, bed, 0.8, 1.0, 0.0)  # without the bed's footprint: on the bed
    footprints = (_hull(_box_points(pillow, 0.2, 0.15), 0.0), _hull(_box_points(bed, 0.8, 1.0), 0.0))
    goal = standoff_goal(pillow, 0.25, views, 0.3, 0.35, max_from_object_m=1.5, footprints=footprints)
    assert _disc_clear(goal, bed, 0.8, 1.0, 0.0)
    assert math.dist((goal.x, goal.y), pillow) <= 1.5
    assert _faces(goal, pillow)


def test_a_goal_beside_a_plant_its_readings_barely_show_keeps_the_robot_s_disc_off_its_footprint():
    """A 0.4 x 0.4 m plant seen from 3 m south: its foliage gives depth only two obstacle readings
    (fewer than block a place), but its surface points give a footprint. A goal whose centre
    merely lies outside that footprint (0.2 m from the plant's centre) puts the robot's disc on
    the plant: the goal keeps the whole disc off it, still within reach."""
    plant = (0.0, 0.0)
    cam = _facing((0.0, -3.0), plant)
    sparse = np.array([(0.0, -0.2), (0.05, -0.2)])
    walls = np.vstack([_box_points((-2.0, 0.0), 0.05, 1.0), _box_points((2.0, 0.0), 0.05, 1.0)])
    view = View(cam, 0.4, 2.8, np.vstack([sparse, walls]))
    fp = _hull(_box_points(plant, 0.2, 0.2), cam.yaw)
    goal = standoff_goal(plant, 0.28, [view], 0.3, 0.35, max_from_object_m=1.5, footprints=(fp,))
    assert _disc_clear(goal, plant, 0.2, 0.2, 0.0)
    assert math.dist((goal.x, goal.y), plant) <= 1.0
    assert _faces(goal, plant)


def test_a_line_goal_moves_back_until_the_robot_s_disc_clears_the_measured_footprint():
    """A 0.9 x 0.9 m armchair seen corner-on from views cut by the image border (no width, no near
    surface, no readings), its radius underestimated at 0.25 m: robot radius + clearance off that
    radius puts the disc on the chair's corner. Depth measured its footprint from other views: the
    goal moves back along the line until the disc clears it."""
    chair = (0.0, 0.0)
    views = [View(_facing((3.0, -3.0), chair))]
    plain = standoff_goal(chair, 0.25, views, 0.3, 0.35, max_from_object_m=1.5)
    assert not _disc_clear(plain, chair, 0.45, 0.45, 0.0)
    fp = _hull(_box_points(chair, 0.45, 0.45), math.pi / 2)
    goal = standoff_goal(chair, 0.25, views, 0.3, 0.35, max_from_object_m=1.5, footprints=(fp,))
    assert _disc_clear(goal, chair, 0.45, 0.45, 0.0)
    assert goal.x > 0.0 > goal.y and math.dist((goal.x, goal.y), chair) <= 1.5
    assert _faces(goal, chair)


def test_a_footprint_that_reaches_out_too_far_keeps_the_goal_within_reach():
    """A 0.5 x 0.5 m toaster whose measured footprint took in what stood around it (1.3 m out on
    every side, its measured extent a little less): no goal whose robot disc clears that lies within reach (1.5 m), so the goal is
    the one whose centre clears it, within reach, not one 1.65 m off."""
    toaster = (0.0, 0.0)
    cam = _facing((0.0, -3.0), toaster)
    view = View(cam, 0.5, 2.75, _box_points((-2.5, 0.0), 0.05, 1.0))
    wide = _hull(_box_points(toaster, 1.3, 1.3), cam.yaw)
    goal = standoff_goal(toaster, 0.35, [view], 0.3, 0.35, max_from_object_m=1.5, footprints=(wide,))
    assert wide.gap(np.array([[goal.x, goal.y]]))[0] >= 0.0 and math.dist((goal.x, goal.y), toaster) <= 1.5
    assert _faces(goal, toaster)


def test_the_back_of_a_chair_no_camera_saw_keeps_the_robot_off():
    """A 0.5 x 0.5 m chair seen from the south only: depth read its front (the rest hides behind
    it), so nothing read keeps the robot's disc off its back. Its footprint reaches at
    least as far beyond the estimated centre as the seen face lies before it: the goal keeps the
    disc off the whole chair, not 0.36 m from its centre beside its back."""
    chair = (0.0, 0.0)
    cam = _facing((0.0, -3.0), chair)
    front = _box_points((0.0, -0.225), 0.25, 0.025)  # what depth read of it: its front
    acc = RayAccumulator()
    acc.add_depth(chair, 0.05 * np.eye(2), 0.5, 0.05)
    acc.add_points(front, cam.yaw)
    view = View(cam, 0.5, 2.75, front)
    measured, whole = Footprint.of(acc.to_list()), Footprint.of(acc.to_list(), chair)
    assert whole.hidden().size and not measured.hidden().size
    goal = standoff_goal(chair, 0.35, [view], 0.3, 0.35, max_from_object_m=1.5, footprints=(whole,))
    assert _disc_clear(goal, chair, 0.25, 0.25, 0.0) and math.dist((goal.x, goal.y), chair) <= 1.5
    assert _faces(goal, chair)
    near = standoff_goal(chair, 0.35, [view], 0.3, 0.35, max_from_object_m=1.5, footprints=(measured,))
    assert not _disc_clear(near, chair, 0.25, 0.25, 0.0)  # the measured half alone: beside its back


def test_without_depth_footprints_change_nothing():
    """A memory without depth keeps no surface points (no ``Footprint``) and no obstacle readings:
    the goal is what it always was, footprints or not."""
    assert Footprint.of(None) is None and Footprint.of([]) is None
    assert Footprint.of(RayAccumulator().to_list()) is None  # bearing sums only
    cut = RayAccumulator()
    cut.add_depth((1.0, 1.0), 0.05 * np.eye(2))  # depth fixes but no points kept
    assert Footprint.of(cut.to_list()) is None
    sofa = (2.0, 1.0)
    views = [View(_facing((2.0, -2.5), sofa), 2.0), View(_facing((6.0, 1.0), sofa), 0.9),
             View(_facing((-1.5, 1.2), sofa), 0.85)]
    fp = _hull(_box_points(sofa, 1.0, 0.45), math.pi / 2)
    for reach in (1.5, math.inf):
        plain = standoff_goal(sofa, 1.1, views, 0.3, 0.35, max_from_object_m=reach)
        assert standoff_goal(sofa, 1.1, views, 0.3, 0.35, max_from_object_m=reach, footprints=(fp,)) == plain


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


def _room_depth(height_m: float, ceiling_m: float = 2.5) -> np.ndarray:
    """A level camera ``height_m`` above an empty floor under a ceiling ``ceiling_m`` high, a wall
    8 m ahead: its depth image."""
    v = (np.arange(CAM.height) + 0.5 - CAM.cy)[:, None]
    with np.errstate(divide="ignore"):
        z = np.where(v > 0, height_m * CAM.fy / v, (ceiling_m - height_m) * CAM.fy / -v)
    return np.broadcast_to(np.minimum(z, 8.0), (CAM.height, CAM.width)).astype(np.float32)


def test_a_view_whose_floor_estimate_is_wrong_reads_the_depth_at_the_other_views_camera_height():
    """One robot's camera stands at one height. One view's floor fit took a table top for the
    floor (0.18 m for a 1.0 m camera): read at that height, the empty room's ceiling 2-4 m ahead
    is 1.7 m "above the floor", a wall of obstacles that keeps every goal behind it. It and a
    view that saw no floor take the views' median; views that agree keep their own."""
    from vlkng_ros.core.goals import camera_heights

    assert camera_heights([0.18, 1.0, 1.01, None, 0.99]) == pytest.approx([0.995, 1.0, 1.01, 0.995, 0.99])
    assert camera_heights([None, None]) == [None, None]  # nothing to go by: as measured
    room = _room_depth(1.0)
    assert dp.floor_height(room, CAM) == pytest.approx(1.0, abs=0.02)
    wrong = dp.obstacle_points(room, CAM, 0.18)
    assert len(wrong) > 100 and np.all(wrong[:, 2] <= 4.0)  # the ceiling read as obstacles
    assert len(dp.obstacle_points(room, CAM, camera_heights([0.18, 1.0, 1.0])[0])) == 0


def test_readings_where_the_robot_stood_block_no_goal_beside_the_bed():
    """The bed seen from its foot, as above, and three readings 0.08-0.2 m in front of the camera
    (another room's view misregistered there: the robot stood on that spot): they lie on every
    segment from the camera to the floor beside the bed, so nothing beside it was "seen free" and
    the goal went off the foot. Where the robot stood nothing stood."""
    bed, estimate = (0.0, 0.0), (0.1, -0.2)
    cam = _facing((0.0, -4.0), estimate)
    seen = _box_points((0.0, -0.25), 0.8, 0.75)
    walls = np.vstack([_box_points((-2.6, 0.0), 0.1, 2.0), _box_points((2.6, 0.0), 0.1, 2.0)])
    stray = np.array([(0.0, -3.92), (0.0, -3.86), (0.0, -3.8)])
    view = View(cam, 1.6, math.dist((cam.x, cam.y), estimate) - (estimate[1] + 1.0), np.vstack([seen, walls, stray]))
    goal = standoff_goal(estimate, 0.5 * math.hypot(1.6, 2.0), [view], 0.3, 0.35, max_from_object_m=1.5,
                         footprints=(_hull(seen, cam.yaw),))
    assert math.dist((goal.x, goal.y), bed) <= 1.5 and abs(goal.x) > 0.8  # beside the long side
    assert _disc_clear(goal, bed, 0.8, 1.0, 0.0)
    from vlkng_ros.core.goals import stood_free

    kept = stood_free(np.vstack([stray, [(0.0, -3.6)], seen]), [cam], 0.3)
    assert len(kept) == len(seen) + 1  # 0.4 m ahead of the camera is beyond the robot's disc: kept


class _Graph:
    """The few graph calls object_views makes, over one keyframe and its objects."""

    def __init__(self, pose: Pose, nodes: list, later: int = 0):
        from vlkng_ros.core.model import Keyframe

        self.kfs = [Keyframe("t", 1 + i, i, CAM.width, CAM.height, pose) for i in range(1 + later)]
        self.nodes = {n.id: n for n in nodes}

    def get_keyframe(self, tour_id, stamp_ns):
        return self.kfs[stamp_ns - 1]

    def keyframes(self, tour_id=None):
        return list(self.kfs)

    def get_meta(self, key):
        import json

        return json.dumps({k: getattr(CAM, k) for k in ("width", "height", "fx", "fy", "cx", "cy")})

    def objects_in_frames(self, frames):
        return {(t, int(s)): sorted(self.nodes) if s == 1 else [] for t, s in frames}

    def get_objects(self, ids):
        return [self.nodes[i] for i in ids if i in self.nodes]


class _Frames:
    def __init__(self, *depths: np.ndarray):
        from vlkng_ros.core.images import encode_depth_png

        self.pngs = [encode_depth_png(d) for d in depths]

    def get_depth(self, tour_id, stamp_ns):
        return self.pngs[stamp_ns - 1]

    def has_depth(self, tour_id, stamp_ns):
        return True


def test_another_object_in_front_is_not_the_object_s_near_surface():
    """A 0.5 x 0.8 m sink 2.5 m ahead, a toilet in front of it (1.3 m ahead) hiding the lower part
    of the sink's box: the toilet's readings in the sink's box were taken for the sink's near
    surface, 1.2 m before its centre, and the goal went 2 m off (the stand-off measured from it).
    The other boxes of the keyframe are left out, as depth fusion leaves them out: the near surface
    is the sink's own front."""
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.goals import object_views
    from vlkng_ros.core.model import ObjectNode, Observation

    cam, sink = Pose.from_xy_yaw(0.0, 0.0, math.pi / 2), (0.0, 2.5)
    d = np.full((CAM.height, CAM.width), 6.0, dtype=np.float32)
    d[150:300, 250:390] = 2.1  # the sink's front, 0.4 m before its centre
    d[230:340, 230:410] = 1.3  # the toilet in front of its lower part
    sink_box, toilet_box = (250.0, 150.0, 390.0, 300.0), (230.0, 230.0, 410.0, 340.0)
    nodes = [ObjectNode("sink", "sink", observations=[Observation("t", 1, sink_box, "c", "0")], position=sink),
             ObjectNode("toilet", "toilet", observations=[Observation("t", 1, toilet_box, "c", "1")], position=(0.0, 1.4))]

    class _Memory:
        graph, frames, cfg = _Graph(cam, nodes), _Frames(d), VlkngConfig()

    [view] = object_views(_Memory(), nodes[0])
    assert view.front_m == pytest.approx(2.1, abs=0.1)
    goal = standoff_goal(sink, 0.5, [view], 0.3, 0.35, max_from_object_m=1.5)
    assert math.dist((goal.x, goal.y), sink) <= 1.1


def test_a_view_that_saw_no_floor_reads_what_stood_around_at_the_height_nearby_keyframes_floors_gave():
    """The sink seen once, close, the toilet in front filling the image's lower part: no floor in
    that view, so no camera height to read what stood around with, no obstacles, and the goal
    1.05 m off the sink stood on the toilet. The keyframes taken just after saw the floor (one
    robot's camera stands at one height): read at that height, the toilet keeps the goal off, beside it
    where the camera saw past it."""
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.goals import object_views
    from vlkng_ros.core.model import ObjectNode, Observation

    cam, sink = Pose.from_xy_yaw(0.0, 0.0, math.pi / 2), (0.0, 2.5)
    d = np.full((CAM.height, CAM.width), 6.0, dtype=np.float32)
    d[150:300, 250:390] = 2.1  # the sink's front
    d[230:, 270:370] = 1.3  # the toilet's front, down to the image's bottom
    sink_box, toilet_box = (250.0, 150.0, 390.0, 300.0), (270.0, 230.0, 370.0, 480.0)
    nodes = [ObjectNode("sink", "sink", observations=[Observation("t", 1, sink_box, "c", "0")], position=sink),
             ObjectNode("toilet", "toilet", observations=[Observation("t", 1, toilet_box, "c", "1")], position=(0.0, 1.5))]
    assert dp.floor_height(d, CAM) is None

    class _Memory:
        graph, frames, cfg = _Graph(cam, nodes, later=3), _Frames(d, *[_room_depth(1.0)] * 3), VlkngConfig()

    [view] = object_views(_Memory(), nodes[0])
    goal = standoff_goal(sink, 0.5, [view], 0.3, 0.35, max_from_object_m=1.5)
    half = 50 / CAM.fx * 1.3  # the toilet's half width
    assert goal.y < 1.3 - 0.3 or abs(goal.x) > half + 0.3  # the robot's disc off the toilet
    assert math.dist((goal.x, goal.y), sink) <= 1.5
    assert view.obstacles is not None and len(view.obstacles) > 0


def _render(view: Pose, boxes, height_m: float = 1.0) -> np.ndarray:
    """The depth image (CAM, level, ``height_m`` above the floor at ``view``) of a floor and solid
    boxes ((centre x, centre y, half x, half y, top height) in the map); NaN where a ray meets none."""
    v, u = np.mgrid[0:CAM.height, 0:CAM.width] + 0.5
    x, y = (u - CAM.cx) / CAM.fx, (v - CAM.cy) / CAM.fy  # per unit of optical depth: right, down
    c, s = math.cos(view.yaw), math.sin(view.yaw)
    dx, dy, dz = c + x * s, s - x * c, -y  # the ray per metre of optical depth, in the map (z up)
    with np.errstate(divide="ignore", invalid="ignore"):
        depth = np.where(y > 0, height_m / y, np.inf)
        for bx, by, hx, hy, top in boxes:
            lo = [(bx - hx - view.x) / dx, (by - hy - view.y) / dy, (0.0 - height_m) / dz]
            hi = [(bx + hx - view.x) / dx, (by + hy - view.y) / dy, (top - height_m) / dz]
            near = np.max([np.minimum(a, b) for a, b in zip(lo, hi)], axis=0)
            far = np.min([np.maximum(a, b) for a, b in zip(lo, hi)], axis=0)
            depth = np.where((near <= far) & (near > 0), np.minimum(depth, near), depth)
    return np.where(np.isfinite(depth), depth, np.nan).astype(np.float32)


SOFA, POUF = (0.0, 0.0, 1.0, 0.45, 0.85), (2.0, -0.8, 0.2, 0.2, 0.3)  # 2 x 0.9 m, 0.85 m high; 0.4 m, 0.3 m
WALL = (0.0, 0.6, 4.0, 0.05, 2.5)  # behind the sofa


def test_depth_reads_the_floor_where_a_ray_reached_it_over_low_furniture_not_on_or_behind_it():
    """A camera at a sofa's end, a pouf on the floor between: the floor in front of the sofa beyond
    the pouf is seen (the rays pass above the pouf); the sofa's seat, the pouf's top and the floor
    in its shadow and behind the sofa are not; nothing beyond the range asked for."""
    cam = Pose.from_xy_yaw(3.5, -0.8, math.pi)
    sight = dp.FloorSight(_render(cam, [SOFA, POUF, WALL]), CAM, cam, 1.0)
    pts = np.array([(0.0, -0.85), (-0.3, -0.9), (0.0, 0.0), (2.0, -0.8), (1.7, -0.8), (0.0, 0.8), (-3.0, -0.85)])
    assert sight.seen(pts, 4.0).tolist() == [True, True, False, False, False, False, False]
    assert sight.seen(pts[:1], 3.0).tolist() == [False]  # 3.5 m ahead
    assert 0.1 < sight.blur_m(3.5) < 0.4  # a base this far before a floor point 3.5 m off reads as floor


def test_the_goal_for_a_cushion_stands_on_the_floor_seen_free_in_front_of_the_sofa():
    """A cushion on a sofa seen only from the sofa's end, a pouf between the camera and the floor in
    front of the sofa: on the map, every segment from the camera to that floor crosses the pouf's
    readings, so the old 2D test took it for hidden and the goal went to the sofa's end, 1.4 m off
    the cushion. The camera's depth read that floor (its rays passed above the pouf): the goal stands
    there, nearer, the robot's disc clear of both. A view without that record (an old memory, or
    one whose depth read no floor there) gets the goal it got before."""
    cushion = (0.0, 0.1)
    cam = Pose.from_xy_yaw(3.5, -0.8, math.atan2(cushion[1] + 0.8, cushion[0] - 3.5))
    readings = np.vstack([_box_points(b[:2], b[2], b[3]) for b in (SOFA, POUF, WALL)])
    footprints = (_hull(_box_points(cushion, 0.25, 0.1), cam.yaw),)
    front = math.dist((cam.x, cam.y), cushion) - 0.1

    def goal(floor):
        return standoff_goal(cushion, 0.3, [View(cam, 0.5, front, readings, floor)], 0.3, 0.35,
                             max_from_object_m=1.5, footprints=footprints)

    old = goal(None)
    assert old.x > 1.0 and math.dist((old.x, old.y), cushion) > 1.2  # at the sofa's end
    blind = dp.FloorSight(np.full((CAM.height, CAM.width), np.nan, np.float32), CAM, cam, 1.0)
    assert (goal(blind).x, goal(blind).y) == (old.x, old.y)
    new = goal(dp.FloorSight(_render(cam, [SOFA, POUF, WALL]), CAM, cam, 1.0))
    assert new.y < -0.45 and abs(new.x) < 1.0  # in front of the sofa
    assert math.dist((new.x, new.y), cushion) < math.dist((old.x, old.y), cushion) - 0.2
    assert _disc_clear(new, SOFA[:2], SOFA[2], SOFA[3], 0.0) and _disc_clear(new, POUF[:2], POUF[2], POUF[3], 0.0)
    assert _faces(new, cushion)


def test_a_goal_beside_a_far_fridge_is_seen_free_only_where_its_disc_s_edge_was_seen_too():
    """A 0.7 m fridge 3.6 m ahead: a rim point on the floor just past its corner reads as floor, yet
    the robot's disc there would reach into the fridge: a candidate counts as seen free only where
    the floor at its disc's edge toward the object (moved away by what the floor test cannot tell
    apart) was read too."""
    cam, fridge = Pose.from_xy_yaw(0.0, 0.0, 0.0), (3.6, 0.0)
    sight = dp.FloorSight(_render(cam, [(fridge[0], fridge[1], 0.35, 0.35, 1.8)]), CAM, cam, 1.0)
    hugging, beside = np.array([[3.75, 0.62]]), np.array([[3.6, 0.95]])
    assert sight.seen(hugging).tolist() == [True]  # the floor there was read ...
    assert floor_seen([sight], hugging, fridge, 0.35).tolist() == [False]  # ... but not under the disc's edge
    assert floor_seen([sight], beside, fridge, 0.35).tolist() == [True]
    assert floor_seen([], beside, fridge, 0.35).tolist() == [False]  # no record: the 2D test decides alone
