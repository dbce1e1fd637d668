"""StoaMerger: merges one chunk graph into the global graph, in one transaction.

The steps, each in its own module: place, shortlist and judge the chunk's objects
(``association``, with the LLM judge in ``judge``); create or update nodes and consolidate earlier
splits (``consolidation``); fold the chunk into the camera height estimate (``..calibration``);
write descriptor and crop vectors (``vectors``); then one atomic graph write.
``associate`` runs the association steps alone, writing nothing (benchmarks, inspection).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from ..calibration import CameraHeightCalibrator
from ..config import VlkngConfig
from ..depth import depth_pending, redo_depth
from ..llm.base import LLM, LLMUsage
from ..memory import Memory
from ..model import CameraModel, ChunkGraph, Keyframe, ObjectNode, Relation
from .association import Associator, NewObject, assign
from .consolidation import apply_assignment, consolidate
from .report import MergeReport
from .vectors import write_vectors


@dataclass
class Association:
    """The association decisions for one chunk (a dry run's result)."""
    report: MergeReport
    news: list[NewObject]
    candidates: list[list[ObjectNode]]  # shortlist per new object
    scores: list[list[tuple[str, float]]]  # (candidate id, similarity) per new object
    assignment: dict[int, str]  # index into news -> existing node id it joins


LATE_DEPTH_RECENT = 50  # recently seen objects of the tour checked for late depth per merge


class StoaMerger:
    def __init__(self, memory: Memory, cfg: VlkngConfig, llm: LLM | None = None) -> None:
        self.memory = memory
        self.cfg = cfg
        self.llm = llm
        self.llm_usage = LLMUsage()
        self.calibration = CameraHeightCalibrator(memory, cfg)
        self.associator = Associator(memory, cfg, self.calibration)

    @property
    def camera_height(self) -> float | None:
        """The camera height floor ranging uses now (given, estimated, or None)."""
        return self.calibration.height

    def camera_for(self, tour_id: str, width: int, height: int) -> CameraModel:
        return self.associator.camera_for(tour_id, width, height)

    def associate(self, chunk: ChunkGraph) -> Association:
        """Dry run: which existing node each of the chunk's objects would join, and the
        shortlists and scores behind it. Writes nothing (the LLM judge, if configured, is asked)."""
        keyframes = self._keyframes(chunk)
        return self._associate(chunk, keyframes, MergeReport(chunk.chunk_id, warnings=list(chunk.warnings)))

    def merge(self, chunk: ChunkGraph) -> MergeReport:
        t0 = time.perf_counter()
        report = MergeReport(chunk.chunk_id, warnings=list(chunk.warnings))
        graph = self.memory.graph
        with self.memory.write_lock:
            if graph.chunk_merged(chunk.chunk_id):
                report.skipped = True
                return report
            keyframes = self._keyframes(chunk)
            if chunk.places:
                updated = [replace(kf, place=chunk.places[s]) for s, kf in keyframes.items()
                           if chunk.places.get(s) and kf.place != chunk.places[s]]
                if updated:
                    graph.upsert_keyframes(updated)
                    self.memory.touch()
            a = self._associate(chunk, keyframes, report)
            objects, local_to_global = apply_assignment(chunk, a.news, a.candidates, a.assignment, report,
                                                        self.cfg.stoa.moved_distance_m, self.camera_height)
            relations = _relations(chunk, local_to_global)
            objects, moved_relations, removed = consolidate(self.associator, objects, a.news, local_to_global,
                                                            report)
            objects = self._with_late_depth(chunk, objects, removed)
            objects = self.calibration.update(objects, removed)
            write_vectors(self.memory, chunk, a.news, local_to_global, keyframes)
            graph.apply_merge(chunk.chunk_id, objects, relations + moved_relations, removed)
            self.calibration.commit()  # after the merge: a crash before it redoes the calibration with the chunk
            self.memory.touch()
        report.seconds = time.perf_counter() - t0
        return report

    def _with_late_depth(self, chunk: ChunkGraph, objects: list[ObjectNode], removed: list[str]) -> list[ObjectNode]:
        """Objects of this tour, written now or seen recently, with sightings whose depth was
        stored after they were placed (a late depth frame, a depth writer behind): their depth
        fixes recomputed from every sighting and their positions re-solved, in this chunk's
        transaction. Nothing to do for a tour without depth."""
        assoc = self.associator
        depths = assoc.depths
        if depths is None or not chunk.frames or not any(depths.has(chunk.tour_id, s) for s in chunk.frames):
            return objects
        out = {o.id: o for o in objects}
        since = chunk.frames[0] - int(self.cfg.stoa.recent_s * 1e9)
        recent = self.memory.graph.recent_objects(chunk.tour_id, since, limit=LATE_DEPTH_RECENT)
        pitch = math.radians(self.cfg.capture.camera_pitch_deg)
        for node in [*objects, *(o for o in recent if o.id not in out and o.id not in removed)]:
            mine = [o for o in node.observations if o.tour_id == chunk.tour_id]
            if not node.ray_stats or not depth_pending(node.ray_stats, [(o.tour_id, o.stamp_ns) for o in mine], depths):
                continue
            sightings = []
            for ob in node.observations:
                kf = self.memory.graph.get_keyframe(ob.tour_id, ob.stamp_ns)
                if kf is not None and kf.pose is not None:
                    sightings.append((ob.tour_id, ob.stamp_ns, kf.pose, ob.bbox,
                                      self.camera_for(ob.tour_id, kf.width, kf.height)))
            acc = redo_depth(node.ray_stats, sightings, depths, assoc.depth_noise, pitch, self.camera_height)
            est = acc.solve(self.camera_height) if acc is not None else None
            if est is not None:
                out[node.id] = replace(node, position=est[0], position_var=est[1], ray_stats=acc.to_list())
        return list(out.values())

    def _keyframes(self, chunk: ChunkGraph) -> dict[int, Keyframe]:
        graph = self.memory.graph
        return {s: kf for s in chunk.frames if (kf := graph.get_keyframe(chunk.tour_id, s)) is not None}

    def _associate(self, chunk: ChunkGraph, keyframes: dict[int, Keyframe], report: MergeReport) -> Association:
        assoc = self.associator
        news = assoc.prepare(chunk, keyframes)
        candidates = assoc.shortlist(chunk, news, report)
        scores = assoc.judge(chunk, news, candidates, report, self.llm, self.llm_usage)
        return Association(report, news, candidates, scores, assign(scores, self.cfg.stoa.threshold))


def _relations(chunk: ChunkGraph, local_to_global: dict[str, str]) -> list[Relation]:
    """The chunk's relations between global ids (one per subject, predicate, object)."""
    rels: dict[tuple[str, str, str], Relation] = {}
    for r in chunk.relations:
        s, o = local_to_global.get(r.subject), local_to_global.get(r.object)
        if not s or not o or s == o:
            continue
        key = (s, r.predicate.strip().lower(), o)
        rel = rels.setdefault(key, Relation(s, key[1], o, [], chunk.tour_id))
        rel.stamps = sorted(set(rel.stamps) | set(r.stamps or chunk.frames[:1]))
    return list(rels.values())
