"""Synthetic tours in tour-format v2: a seeded home/office world, a walked trajectory, rendered
frames, SLAM-like poses, per-frame annotations and benchmark questions (``vlkng sim``)."""

from vlkng_ros.eval.sim.generate import SimSummary, generate_tour

__all__ = ["SimSummary", "generate_tour"]
