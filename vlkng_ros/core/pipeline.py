"""The memory-building pipeline: capture -> chunks -> perception -> STOA -> stores.

`MemoryBuilder` holds the steps that the ROS nodes call one by one (live) and that `build_tour`
runs in sequence for a tour folder (offline). Every step is idempotent and durable:
keyframes are upserted by (tour, stamp); a perceived chunk graph is written to
``memory.chunks_dir/<tour>/<chunk_index>.json`` before it is merged (the durable queue between
perception and STOA, so a crash or a model/DB outage never loses or repeats paid VLM work); a chunk
is merged at most once (the graph store records merged chunks in the same transaction).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .capture import KeyframeSelector, PoseBuffer, decode_image, encode_jpeg
from .chunking import chunk_keyframes
from .config import VlkngConfig
from .llm.base import LLM
from .memory import Memory
from .model import CameraModel, ChunkGraph, Keyframe, Pose, chunk_id
from .perception.base import ChunkInput, PerceptionError, PerceptionUnavailable, Perceiver
from .stoa import MergeReport, StoaMerger
from .stores.frame_store import validate_tour_id

if TYPE_CHECKING:
    from .tour import Tour

log = logging.getLogger("vlkng.build")


class MemoryBuilder:
    def __init__(self, memory: Memory, cfg: VlkngConfig, perceiver: Perceiver | None,
                 camera: CameraModel | None = None, llm: LLM | None = None) -> None:
        self.memory = memory
        self.cfg = cfg
        self.perceiver = perceiver
        self.camera = camera
        self.merger = StoaMerger(memory, cfg, llm)
        self._selectors: dict[str, KeyframeSelector] = {}
        self._next_index: dict[str, int] = {}

    # --- capture ---------------------------------------------------------------------------
    def set_camera(self, tour_id: str, camera: CameraModel) -> None:
        self.camera = camera
        key = f"camera:{tour_id}"
        value = json.dumps(asdict(camera))
        if self.memory.graph.get_meta(key) != value:
            self.memory.graph.set_meta(key, value)

    def ingest_frame(self, tour_id: str, stamp_ns: int, rgb: np.ndarray, pose: Pose | None) -> Keyframe | None:
        """Keep the frame as a keyframe if it is useful; store its JPEG and row. Returns it."""
        selector = self._selectors.setdefault(tour_id, KeyframeSelector(self.cfg.capture))
        decision = selector.consider(stamp_ns, rgb, pose)
        if not decision.keep:
            return None
        graph = self.memory.graph
        existing = graph.get_keyframe(tour_id, stamp_ns)
        if existing is not None:  # replayed frame: already stored, keep its index
            return existing
        if tour_id not in self._next_index:
            self._next_index[tour_id] = graph.count_keyframes(tour_id)
        if self.camera is None or graph.get_meta(f"camera:{tour_id}") is None:
            self.set_camera(tour_id, self.camera or CameraModel.from_hfov(
                rgb.shape[1], rgb.shape[0], self.cfg.capture.camera_hfov_deg))
        ref = self.memory.frames.put(tour_id, stamp_ns, encode_jpeg(rgb, self.cfg.capture.jpeg_quality))
        kf = Keyframe(tour_id, stamp_ns, self._next_index[tour_id], rgb.shape[1], rgb.shape[0], pose, ref)
        with self.memory.write_lock:
            graph.upsert_keyframes([kf])
            self.memory.touch()
        self._next_index[tour_id] += 1
        log.debug("keyframe %s #%d (%s)", kf.key, kf.index, decision.reason)
        return kf

    # --- perception ------------------------------------------------------------------------
    def chunk_path(self, tour_id: str, chunk_index: int) -> Path:
        return self.memory.chunks_dir / validate_tour_id(tour_id) / f"{chunk_index:06d}.json"

    def perceive(self, tour_id: str, keyframes: list[Keyframe]) -> ChunkGraph:
        """Perceive one chunk (cached on disk: a chunk is never perceived twice)."""
        if not keyframes:
            raise ValueError("empty chunk")
        index = keyframes[0].index
        path = self.chunk_path(tour_id, index)
        if path.exists():
            try:
                return ChunkGraph.from_dict(json.loads(path.read_text(encoding="utf-8")))
            except (ValueError, KeyError, TypeError) as e:
                log.warning("cached chunk %s unreadable (%s): perceiving again", path, e)
        if self.perceiver is None:
            raise PerceptionUnavailable("no perception backend configured (see docs/MODELS.md)")
        images: list[np.ndarray | None] = []
        for kf in keyframes:
            try:
                images.append(decode_image(self.memory.frames.get(kf.image_ref)))
            except (OSError, ValueError) as e:
                log.error("keyframe %s: image unavailable (%s); perceiving the chunk without it", kf.key, e)
                images.append(None)
        graph = self.perceiver.perceive(ChunkInput(tour_id, index, keyframes, images))
        for w in graph.warnings:
            log.warning("%s: %s", graph.chunk_id, w)
        _atomic_write(path, json.dumps(graph.to_dict()))
        return graph

    def perceived_chunks(self, tour_id: str) -> list[ChunkGraph]:
        folder = self.memory.chunks_dir / validate_tour_id(tour_id)
        out = []
        for p in sorted(folder.glob("*.json")):
            try:
                out.append(ChunkGraph.from_dict(json.loads(p.read_text(encoding="utf-8"))))
            except (ValueError, KeyError, TypeError) as e:
                log.error("chunk file %s unreadable: %s", p, e)
        return out

    def pending_chunks(self, tour_id: str) -> list[ChunkGraph]:
        merged = self.memory.graph.merged_chunks(tour_id)
        return [c for c in self.perceived_chunks(tour_id) if c.chunk_id not in merged]

    def unchunked_keyframes(self, tour_id: str) -> list[Keyframe]:
        covered = {s for c in self.perceived_chunks(tour_id) for s in c.frames}
        return [kf for kf in self.memory.graph.keyframes(tour_id) if kf.stamp_ns not in covered]

    # --- association -----------------------------------------------------------------------
    def merge(self, chunk: ChunkGraph) -> MergeReport:
        report = self.merger.merge(chunk)
        if not report.skipped:
            log.debug("%s merged: %d new, %d matched, %d moved (%.0f ms)", chunk.chunk_id,
                      len(report.created), len(report.matched), len(report.moved), report.seconds * 1e3)
        return report


@dataclass
class BuildReport:
    tour_id: str
    frames: int = 0
    frames_unreadable: int = 0
    frames_without_pose: int = 0
    keyframes: int = 0
    chunks: int = 0
    chunks_merged: int = 0
    chunks_skipped: int = 0
    chunks_failed: int = 0
    objects_created: int = 0
    objects_matched: int = 0
    objects_moved: int = 0
    warnings: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    chunks_queued: int = 0  # left for the next build because the backend stopped
    stoa_shortlist_mean: float = 0.0
    stoa_shortlist_max: int = 0
    read_errors: list[str] = field(default_factory=list)
    perception_backend: str = ""
    perception_model: str = ""
    chunk_latency_s: list[float] = field(default_factory=list)  # model time of each chunk perceived now
    input_tokens: int = 0  # as the model server counted them, over the chunks perceived now
    output_tokens: int = 0
    backend_stopped: str = ""  # why perception stopped (circuit breaker), empty when it did not
    has_geometry: bool = True  # False when no keyframe of the tour has a pose

    def to_dict(self) -> dict:
        return asdict(self)

    def perception_line(self) -> str:
        """One line a user reads: model latency and tokens per chunk (empty when none ran now)."""
        lat = self.chunk_latency_s
        if not lat:
            return ""
        n = len(lat)
        tokens = (f", {self.input_tokens / n:.0f} input + {self.output_tokens / n:.0f} output tokens/chunk"
                  if self.input_tokens or self.output_tokens else ", tokens not reported by the backend")
        return (f"perception: {n} chunks by {self.perception_backend} {self.perception_model}: "
                f"{float(np.mean(lat)):.2f} s/chunk mean, {float(np.median(lat)):.2f} median, "
                f"{max(lat):.2f} max{tokens}")


def build_tour(tour: "Tour | str | Path", memory: Memory, cfg: VlkngConfig, progress: bool = True,
               perceiver: Perceiver | None = None, llm: LLM | None = None) -> BuildReport:
    """Build (or extend) ``memory`` from a tour folder. Re-running changes nothing."""
    from .perception.registry import make_perceiver
    from .tour import Tour

    if not isinstance(tour, Tour):
        tour = open_tour(tour, cfg)
    report = BuildReport(tour.tour_id)
    graph = memory.graph
    graph.set_meta(f"tour_path:{tour.tour_id}", str(Path(tour.path).resolve()))
    if perceiver is None:
        perceiver = make_perceiver(cfg, annotations=tour.annotations)
    report.perception_backend = getattr(perceiver, "name", "")
    camera = tour.camera_model(cfg.capture.camera_hfov_deg)
    builder = MemoryBuilder(memory, cfg, perceiver, camera, llm)
    builder.set_camera(tour.tour_id, camera)

    t0 = time.perf_counter()
    capture_key = f"captured:{tour.tour_id}"
    if graph.get_meta(capture_key) == "done":
        keyframes = graph.keyframes(tour.tour_id)
        report.frames = tour.frame_count()
        _say(progress, f"{tour.tour_id}: capture already done ({len(keyframes)} keyframes)")
    else:
        poses = PoseBuffer(cfg.capture.pose_max_age_s, capacity=10**7)
        for stamp, pose in tour.poses():
            poses.add(stamp, pose)
        total = max(tour.frame_count(), 1)
        last_print = time.perf_counter()
        for fm in tour.frames():
            report.frames += 1
            if fm.rgb is None:
                report.frames_unreadable += 1
                log.error("%s frame %d skipped: %s", tour.tour_id, fm.stamp_ns, fm.error)
                continue
            pose = poses.lookup(fm.stamp_ns)
            kf = builder.ingest_frame(tour.tour_id, fm.stamp_ns, fm.rgb, pose)
            if kf is not None and kf.pose is None:
                report.frames_without_pose += 1
            if progress and time.perf_counter() - last_print > 2.0:
                last_print = time.perf_counter()
                _say(True, f"{tour.tour_id}: capture {report.frames}/{total} frames")
        keyframes = graph.keyframes(tour.tour_id)
        if not tour.read_errors():
            graph.set_meta(capture_key, "done")
        if report.frames_without_pose:
            log.warning("%s: %d keyframes have no pose (no %s message within %.2f s)", tour.tour_id,
                        report.frames_without_pose, tour.pose_topic, cfg.capture.pose_max_age_s)
    report.read_errors = list(tour.read_errors())
    report.keyframes = len(keyframes)
    t1 = time.perf_counter()
    report.seconds["capture"] = t1 - t0

    chunks = chunk_keyframes(keyframes, cfg.chunk_size)
    report.chunks = len(chunks)
    merged = graph.merged_chunks(tour.tour_id)
    shortlist: list[int] = []
    perceive_s = merge_s = 0.0
    last_print = time.perf_counter()
    report.has_geometry = any(kf.pose is not None for kf in keyframes) or not keyframes
    if not report.has_geometry:
        log.warning("%s: no keyframe has a pose (pose topic %s): the memory has no geometry, so "
                    "objects get no positions and answers no goal poses; objects are told apart by "
                    "place and time only", tour.tour_id, tour.pose_topic)
    for i, kfs in enumerate(chunks):
        if chunk_id(tour.tour_id, kfs[0].index) in merged:
            report.chunks_skipped += 1
            continue
        if report.backend_stopped and not builder.chunk_path(tour.tour_id, kfs[0].index).exists():
            report.chunks_queued += 1  # already perceived ones still merge below
            continue
        ta = time.perf_counter()
        cached = builder.chunk_path(tour.tour_id, kfs[0].index).exists()
        try:
            cg = builder.perceive(tour.tour_id, kfs)
        except PerceptionUnavailable as e:
            report.backend_stopped = str(e)
            report.chunks_queued += 1
            log.error("%s: perception stopped at chunk %d: %s", tour.tour_id, kfs[0].index, e)
            continue
        except PerceptionError as e:
            report.chunks_failed += 1
            log.error("%s chunk %d: perception failed (%s); it stays queued for the next build",
                      tour.tour_id, kfs[0].index, e)
            continue
        tb = time.perf_counter()
        cost = cg.perception
        if not cached and cost.get("calls"):  # perceived now by a model (not the cache, not annotations)
            report.chunk_latency_s.append(float(cost.get("seconds") or 0.0))
            report.input_tokens += int(cost.get("input_tokens") or 0)
            report.output_tokens += int(cost.get("output_tokens") or 0)
            report.perception_model = str(cost.get("model") or report.perception_model)
        mr = builder.merge(cg)
        perceive_s += tb - ta
        merge_s += time.perf_counter() - tb
        report.warnings += len(mr.warnings)
        if mr.skipped:
            report.chunks_skipped += 1
            continue
        report.chunks_merged += 1
        report.objects_created += len(mr.created)
        report.objects_matched += len(mr.matched)
        report.objects_moved += len(mr.moved)
        shortlist += mr.shortlist_sizes
        if progress and time.perf_counter() - last_print > 2.0:
            last_print = time.perf_counter()
            _say(True, f"{tour.tour_id}: chunk {i + 1}/{len(chunks)} "
                       f"({graph.count_objects()} objects so far)")
    if report.backend_stopped:
        log.error("%s: %d chunks stay queued (keyframes are stored); fix the backend and run build "
                  "again to perceive them", tour.tour_id, report.chunks_queued)
    line = report.perception_line()
    if line:
        _say(progress, f"{tour.tour_id}: {line}")
    report.seconds["perceive"] = perceive_s
    report.seconds["merge"] = merge_s
    report.seconds["total"] = time.perf_counter() - t0
    if shortlist:
        report.stoa_shortlist_mean = float(np.mean(shortlist))
        report.stoa_shortlist_max = int(max(shortlist))
    return report


def open_tour(path: "str | Path", cfg: VlkngConfig) -> "Tour":
    """A tour folder opened with the configured image and pose topics."""
    from .tour import Tour

    return Tour.open(path, image_topic=_abs_topic(cfg.image_topic), pose_topic=_abs_topic(cfg.pose_topic))


def _abs_topic(name: str) -> str:
    return name if name.startswith("/") else "/" + name


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _say(enabled: bool, msg: str) -> None:
    if enabled:
        log.info(msg)
