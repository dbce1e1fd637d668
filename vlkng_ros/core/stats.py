"""What a memory holds: counts, tours, and the camera height floor ranging uses."""

from __future__ import annotations

from .calibration import floor_ranging_stats


def memory_stats(memory) -> dict:
    """Counts of a memory (objects, relations, keyframes, tours) and its floor-ranging state."""
    graph = memory.graph
    objects = list(graph.iter_objects())
    multi_tour = sum(1 for o in objects if len(o.tours) > 1)
    return {"objects": len(objects), "relations": graph.count_relations(),
            **floor_ranging_stats(memory, objects),
            "keyframes": graph.count_keyframes(), "tours": len(graph.tours()),
            "tour_ids": graph.tours(), "objects_in_several_tours": multi_tour,
            "observations": sum(len(o.observations) for o in objects)}
