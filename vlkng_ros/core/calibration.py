"""Camera height: the one home of the height floor-contact ranging uses (geometry.py).

The height is either given (``capture.camera_height_m`` > 0), switched off (< 0), or estimated
per memory (0, the default) from the objects whose bearings alone place them well: at their
bearing-only position, the height their floor rays imply. The estimate is the robust median of
the most recent objects' implied heights, kept in the graph's meta so a restart continues it.

When the estimate first exists or moves, objects ranged by their floor contact are re-solved with
it. That re-solve walks the graph in id order, at most ``CALIB_RESOLVE_PER_CHUNK`` objects per
merged chunk, with a cursor kept in the graph's meta, so the work a chunk does stays bounded
whatever the graph's size (a graph no larger than that is re-solved in the chunk that moved the
estimate). Ask (goal placement) and stats read the height through ``memory_camera_height``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import numpy as np

from .config import VlkngConfig
from .geometry import RayAccumulator
from .memory import Memory
from .model import ObjectNode

log = logging.getLogger("vlkng.stoa")

CAMERA_HEIGHT_META = "camera_height"
CAMERA_HEIGHT_SAMPLES_META = "camera_height_samples"
CAMERA_HEIGHT_RESOLVE_META = "camera_height_resolve"  # re-solve cursor: last object id done
CALIB_MIN_CONDITIONING = 0.1  # bearings spread enough to place an object without the floor
CALIB_MIN_FLOOR_RAYS = 3.0  # summed floor-ray weight before an object's implied height counts
CALIB_MIN_OBJECTS = 4  # fewer objects than this give no estimate (one odd object would set it)
CALIB_MAX_SPREAD = 0.35  # interquartile range / median of the objects' implied heights; beyond it the flat-floor model does not hold
CALIB_MAX_OBJECTS = 400  # the most recent objects' heights are kept
CALIB_HEIGHT_RANGE_M = (0.05, 5.0)  # implied heights outside this are not a wheeled robot's camera
RECALIBRATE_CHANGE = 0.05  # re-solve every floor-ranged object when the estimate moves this much
CALIB_RESOLVE_PER_CHUNK = 500  # objects re-solved per merged chunk after the estimate moved


def memory_camera_height(memory: Memory, cfg: VlkngConfig) -> float | None:
    """The camera height floor ranging uses: ``capture.camera_height_m`` when given (> 0), the
    memory's estimate with the default 0 (None before there is one), None when off (< 0)."""
    given = cfg.capture.camera_height_m
    if given != 0.0:
        return given if given > 0.0 else None
    raw = memory.graph.get_meta(CAMERA_HEIGHT_META)
    return float(raw) if raw else None


def robust_camera_height(samples: list[float]) -> float | None:
    """Median of the objects' implied camera heights, or None with too few of them or when they
    disagree (interquartile range over CALIB_MAX_SPREAD of the median: the box bottoms are not
    floor contacts here, or the floor is not flat)."""
    if len(samples) < CALIB_MIN_OBJECTS:
        return None
    q1, med, q3 = (float(x) for x in np.percentile(samples, [25, 50, 75]))
    if med <= 0.0 or (q3 - q1) / med > CALIB_MAX_SPREAD:
        return None
    return med


def floor_ranging_stats(memory: Memory, objects: list[ObjectNode]) -> dict:
    """The camera height floor ranging uses (given in the config, or estimated from the tour)
    and how many objects it ranges: a user checks the estimate against the robot's URDF."""
    height = memory_camera_height(memory, memory.cfg)
    samples = memory.graph.get_meta(CAMERA_HEIGHT_SAMPLES_META)
    source = "" if height is None else "config" if memory.cfg.capture.camera_height_m > 0 else "estimated"
    return {"camera_height_m": height, "camera_height_source": source,
            "camera_height_samples": len(json.loads(samples)) if samples else 0,
            "floor_ranged_objects": sum(1 for o in objects if o.ray_stats and RayAccumulator(o.ray_stats).has_floor)}


class CameraHeightCalibrator:
    """The memory's camera height estimate, updated with each merged chunk's objects.

    ``update`` runs inside the chunk's merge (before the graph write) and returns the objects to
    write; ``commit`` persists the estimate after the write, so a crash in between redoes the
    calibration with the chunk."""

    def __init__(self, memory: Memory, cfg: VlkngConfig) -> None:
        self.memory = memory
        self.cfg = cfg
        self.floor_ranging = cfg.capture.camera_height_m >= 0.0
        self.height: float | None = memory_camera_height(memory, cfg)
        self._samples: dict[str, float] | None = None  # object id -> implied height (loaded lazily)
        self._resolve_after: str | None = None  # cursor of an unfinished re-solve (None: none)
        self._dirty = False

    @property
    def estimating(self) -> bool:
        return self.cfg.capture.camera_height_m == 0.0

    def _load(self) -> dict[str, float]:
        if self._samples is None:
            graph = self.memory.graph
            raw = graph.get_meta(CAMERA_HEIGHT_SAMPLES_META)
            self._samples = {str(k): float(v) for k, v in json.loads(raw).items()} if raw else {}
            cursor = graph.get_meta(CAMERA_HEIGHT_RESOLVE_META)
            self._resolve_after = json.loads(cursor)["after"] if cursor else None
        return self._samples

    def update(self, objects: list[ObjectNode], removed: list[str]) -> list[ObjectNode]:
        """Fold the chunk's objects (``removed``: ids deleted by consolidation) into the estimate.
        When it first exists or moves by RECALIBRATE_CHANGE, the chunk's floor-ranged objects are
        re-solved with it and a re-solve of the rest of the graph starts; each call continues an
        unfinished one. Returns the objects to write: the chunk's, then the re-solved others."""
        if not self.estimating:
            return objects  # given by the user, or floor ranging off
        samples = self._load()
        for rid in removed:
            self._dirty |= samples.pop(rid, None) is not None
        for u in objects:
            acc = RayAccumulator(u.ray_stats) if u.ray_stats else None
            if acc is None or acc.floor_w < CALIB_MIN_FLOOR_RAYS or acc.bearing_conditioning() < CALIB_MIN_CONDITIONING:
                continue
            est = acc.solve(None)
            height = acc.implied_camera_height(est[0]) if est else None
            if height is not None and CALIB_HEIGHT_RANGE_M[0] < height < CALIB_HEIGHT_RANGE_M[1]:
                samples.pop(u.id, None)  # re-inserted last: the most recent are kept
                samples[u.id] = round(height, 4)
                self._dirty = True
        while len(samples) > CALIB_MAX_OBJECTS:
            samples.pop(next(iter(samples)))
        new = robust_camera_height(list(samples.values()))
        old = self.height
        if new is not None and (old is None or abs(new - old) > RECALIBRATE_CHANGE * old):
            self.height = new
            self._resolve_after = ""  # every object again, with the new height
            self._dirty = True
            log.info("camera height estimated at %.2f m from %d objects%s: re-solving floor-ranged objects",
                     new, len(samples), f" (was {old:.2f} m)" if old else "")
            objects = [_resolved(o, new) or o for o in objects]
        if self._resolve_after is None or self.height is None:
            return objects
        return objects + self._resolve_page({o.id for o in objects}, set(removed))

    def _resolve_page(self, in_chunk: set[str], gone: set[str]) -> list[ObjectNode]:
        """The next CALIB_RESOLVE_PER_CHUNK objects (by id) after the cursor, floor-ranged ones
        re-solved with the current height; advances the cursor, clears it at the end."""
        page = self.memory.graph.objects_after(self._resolve_after or "", CALIB_RESOLVE_PER_CHUNK)
        out = [node for o in page if o.id not in in_chunk and o.id not in gone
               if (node := _resolved(o, self.height)) is not None]
        self._resolve_after = page[-1].id if len(page) == CALIB_RESOLVE_PER_CHUNK else None
        self._dirty = True
        return out

    def commit(self) -> None:
        """Persist the estimate, its samples and the re-solve cursor (after the chunk's write)."""
        if not self._dirty:
            return
        graph = self.memory.graph
        graph.set_meta(CAMERA_HEIGHT_SAMPLES_META, json.dumps(self._samples))
        if self.height:
            graph.set_meta(CAMERA_HEIGHT_META, f"{self.height:.4f}")
        graph.set_meta(CAMERA_HEIGHT_RESOLVE_META,
                       json.dumps({"after": self._resolve_after}) if self._resolve_after is not None else "")
        self._dirty = False


def _resolved(node: ObjectNode, height: float | None) -> ObjectNode | None:
    """``node`` placed by all its rays with the floor contact at ``height``; None when it has no
    floor rays (nothing to re-solve)."""
    acc = RayAccumulator(node.ray_stats) if node.ray_stats else None
    est = acc.solve(height) if acc is not None and acc.has_floor else None
    return replace(node, position=est[0], position_var=est[1]) if est is not None else None
