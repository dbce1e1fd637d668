"""What a memory holds: counts, tours, and the camera height floor ranging uses."""

from __future__ import annotations

from .calibration import floor_ranging_stats


def memory_stats(memory) -> dict:
    """Counts of a memory (objects, relations, keyframes, tours) and its floor-ranging state."""
    graph = memory.graph
    objects = list(graph.iter_objects())
    multi_tour = sum(1 for o in objects if len(o.tours) > 1)
    keyframes = graph.keyframes()
    return {"objects": len(objects), "relations": graph.count_relations(),
            "keyframes_with_pose": sum(1 for kf in keyframes if kf.pose is not None),
            "objects_with_position": sum(1 for o in objects if o.position is not None),
            **floor_ranging_stats(memory, objects), **depth_stats(memory, objects),
            "keyframes": graph.count_keyframes(), "tours": len(graph.tours()),
            "tour_ids": graph.tours(), "objects_in_several_tours": multi_tour,
            "observations": sum(len(o.observations) for o in objects)}


def depth_stats(memory, objects: list) -> dict:
    """Which objects are placed with depth (an RGB-D camera or a point cloud measured them), and
    how many keyframes carry depth: a user checks that the robot's depth reached the memory."""
    from .geometry import RayAccumulator

    placed = [o for o in objects if o.ray_stats and RayAccumulator(o.ray_stats).has_depth]
    keyframes = memory.graph.keyframes()
    with_depth = sum(1 for kf in keyframes if memory.frames.has_depth(kf.tour_id, kf.stamp_ns))
    out = []
    for o in sorted(placed, key=lambda o: o.id):
        footprint = RayAccumulator(o.ray_stats).footprint()  # None when every view was cut by the border
        out.append({"id": o.id, "label": o.label,
                    "footprint_m": [round(v, 2) for v in footprint] if footprint else None})
    return {"depth_placed_objects": len(placed), "keyframes_with_depth": with_depth, "depth_placed": out}
