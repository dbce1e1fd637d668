"""Where to send the robot for an object: a goal pose Nav2 can reach (the one home of goal geometry).

The object's estimated centre is inside the object (a sofa, a wardrobe): a planner refuses it
or stops short wherever its costmap allows. The goal is instead a pose in free space:

- at a **stand-off** from the object's centre: its footprint radius plus the robot's radius
  (``ask.robot_radius_m``) plus a clearance (``ask.goal_clearance_m``). Where depth measured the
  footprint (``geometry.object_footprint``: width across the views, extent along them) the radius
  is half its diagonal, so the goal lies outside the measured footprint whichever way the object
  is turned; without depth, the radius comes from how wide it looked in the keyframes that saw
  it, at the distance it was seen from (``footprint_radius``);
- on the **side it was seen from**: toward a camera pose of a keyframe that shows it. The camera
  saw the object from there, so the line of sight between them was free space; a goal on that
  segment (or the camera pose itself, when the camera was closer than the stand-off) is a place
  the robot has already been or looked through;
- **facing** the object.

Without a view pose the goal is the object's centre (the planner's tolerance must do the rest);
without an object position, the best frame's pose (where it was seen from).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Callable

from .geometry import object_footprint
from .model import CameraModel, ObjectNode, Pose

if TYPE_CHECKING:
    from .ask.graph_retrieval import Subgraph
    from .ask.types import RankedFrame
    from .memory import Memory

MAX_VIEWS = 16  # keyframes read per goal (spread over the object's sightings)
MIN_FOOTPRINT_RADIUS_M = 0.1
MAX_FOOTPRINT_RADIUS_M = 1.5
DEFAULT_FOOTPRINT_RADIUS_M = 0.3  # no usable view to measure it from
WIDTH_QUANTILE = 0.75  # an object looks narrower end-on: take a wide view, not the narrowest
BORDER_PX = 2.0


def footprint_radius(widths_m: list[float]) -> float:
    """The object's footprint radius (m) from the widths it showed across its views."""
    if not widths_m:
        return DEFAULT_FOOTPRINT_RADIUS_M
    w = sorted(widths_m)
    r = w[min(len(w) - 1, int(WIDTH_QUANTILE * (len(w) - 1) + 0.5))] / 2.0
    return min(MAX_FOOTPRINT_RADIUS_M, max(MIN_FOOTPRINT_RADIUS_M, r))


def object_radius(ray_stats: list[float] | None, widths_m: list[float]) -> float:
    """The object's footprint radius (m) for the stand-off: half the diagonal of the footprint
    depth measured (``geometry.object_footprint``), else ``footprint_radius`` of the widths it
    showed (what a memory built without depth always gets)."""
    footprint = object_footprint(ray_stats) if ray_stats else None
    if footprint is None:
        return footprint_radius(widths_m)
    return min(MAX_FOOTPRINT_RADIUS_M, max(MIN_FOOTPRINT_RADIUS_M, 0.5 * math.hypot(*footprint)))


def standoff_goal(obj_xy: tuple[float, float], radius_m: float, views: list[Pose], robot_radius_m: float,
                  clearance_m: float, frame_id: str = "map") -> Pose:
    """A free-space pose facing the object: ``radius + robot radius + clearance`` from its centre,
    toward the view whose distance is nearest that stand-off (at or beyond it preferred: the goal
    then lies on a line of sight; a nearer camera's own pose is used as it is, it was free)."""
    ox, oy = obj_xy
    standoff = radius_m + robot_radius_m + clearance_m
    usable = [v for v in views if math.hypot(v.x - ox, v.y - oy) > 1e-3]
    if not usable:
        return Pose.from_xy_yaw(ox, oy, 0.0, frame_id)
    view = min(usable, key=lambda v: (math.hypot(v.x - ox, v.y - oy) < standoff,
                                      abs(math.hypot(v.x - ox, v.y - oy) - standoff)))
    dx, dy = view.x - ox, view.y - oy
    d = math.hypot(dx, dy)
    s = min(standoff, d)
    gx, gy = ox + dx / d * s, oy + dy / d * s
    return Pose.from_xy_yaw(gx, gy, math.atan2(oy - gy, ox - gx), frame_id)


def object_views(memory: "Memory", node: ObjectNode, max_views: int = MAX_VIEWS) -> tuple[list[Pose], list[float]]:
    """Camera poses of keyframes that saw the object, and the object's width (m) in each view
    (box width over the focal length times the distance; boxes cut by the image border skipped)."""
    obs = sorted(node.observations, key=lambda o: o.stamp_ns)
    if len(obs) > max_views:
        step = len(obs) / max_views
        obs = [obs[int(i * step)] for i in range(max_views)]
    cameras: dict[str, CameraModel | None] = {}
    poses, widths = [], []
    for ob in obs:
        kf = memory.graph.get_keyframe(ob.tour_id, ob.stamp_ns)
        if kf is None or kf.pose is None:
            continue
        poses.append(kf.pose)
        if ob.tour_id not in cameras:
            raw = memory.graph.get_meta(f"camera:{ob.tour_id}")
            cameras[ob.tour_id] = CameraModel(**json.loads(raw)) if raw else None
        cam = cameras[ob.tour_id] or CameraModel.from_hfov(kf.width, kf.height, memory.cfg.capture.camera_hfov_deg)
        x1, _, x2, _ = ob.bbox
        if node.position is None or x1 <= BORDER_PX or x2 >= cam.width - BORDER_PX:
            continue
        dist = math.hypot(kf.pose.x - node.position[0], kf.pose.y - node.position[1])
        widths.append((x2 - x1) / cam.fx * dist)
    return poses, widths


def goal_pose(memory: "Memory", sub: "Subgraph", frames: list["RankedFrame"], target_id: str,
              robot_radius_m: float = 0.3, clearance_m: float = 0.35,
              camera_height: Callable[[], float | None] = lambda: None
              ) -> tuple[Pose | None, str, tuple[float, float] | None]:
    """(goal pose, source, the target's pooled position) for the answer's target: ``object_position`` (the stand-off pose of the
    module docstring; the centre itself when no view pose is known), ``frame_pose`` (no object
    position: where it was seen from), or (None, '')."""
    from .ask.answer import SUPPORT_RELATION_LIMIT, merged_position, placed_on_support, supported_objects

    node = sub.objects.get(target_id)
    view = next((f.pose for f in frames if f.pose and target_id in f.object_ids), None)
    view = view or next((f.pose for f in frames if f.pose), None)
    placed = supported = None
    if node is not None:  # one relation lookup serves both directions
        rels = memory.graph.relations_of([target_id], limit=SUPPORT_RELATION_LIMIT)
        placed = placed_on_support(memory, node, rels, camera_height)
        supported = supported_objects(memory, target_id, rels)
    pooled = merged_position(sub, target_id, supported, placed)
    if node is None or pooled is None:
        return (view, "frame_pose", None) if view is not None else (None, "", None)
    placed_node = ObjectNode(node.id, node.label, observations=node.observations, position=pooled)
    views, widths = object_views(memory, placed_node)
    if view is not None and not views:
        views = [view]
    if not views:
        return Pose.from_xy_yaw(pooled[0], pooled[1], 0.0), "object_position", pooled
    goal = standoff_goal(pooled, object_radius(node.ray_stats, widths), views, robot_radius_m, clearance_m)
    return goal, "object_position", pooled
