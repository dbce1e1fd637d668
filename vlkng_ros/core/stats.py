"""What a memory holds: counts, tours, and the camera height floor ranging uses."""

from __future__ import annotations

import json


def memory_stats(memory) -> dict:
    """Counts of a memory (objects, relations, keyframes, tours) and its floor-ranging state."""
    graph = memory.graph
    objects = list(graph.iter_objects())
    multi_tour = sum(1 for o in objects if len(o.tours) > 1)
    keyframes = graph.keyframes()
    return {"objects": len(objects), "relations": graph.count_relations(),
            "keyframes_with_pose": sum(1 for kf in keyframes if kf.pose is not None),
            "objects_with_position": sum(1 for o in objects if o.position is not None),
            **floor_ranging_stats(memory, objects),
            "keyframes": graph.count_keyframes(), "tours": len(graph.tours()),
            "tour_ids": graph.tours(), "objects_in_several_tours": multi_tour,
            "observations": sum(len(o.observations) for o in objects)}


def floor_ranging_stats(memory, objects: list) -> dict:
    """The camera height floor ranging uses (given in the config, or estimated from the tour)
    and how many objects it ranges: a user checks the estimate against the robot's URDF."""
    from .geometry import RayAccumulator
    from .stoa import CAMERA_HEIGHT_SAMPLES_META, memory_camera_height

    height = memory_camera_height(memory, memory.cfg)
    samples = memory.graph.get_meta(CAMERA_HEIGHT_SAMPLES_META)
    source = "" if height is None else "config" if memory.cfg.capture.camera_height_m > 0 else "estimated"
    return {"camera_height_m": height, "camera_height_source": source,
            "camera_height_samples": len(json.loads(samples)) if samples else 0,
            "floor_ranged_objects": sum(1 for o in objects if o.ray_stats and RayAccumulator(o.ray_stats).has_floor)}
