"""The memory-building pipeline: capture -> chunks -> perception -> STOA -> stores.

`MemoryBuilder` holds the steps that the ROS nodes call one by one (live) and that `build_tour`
runs in sequence for a tour folder (offline). Every step is idempotent and durable:
keyframes are upserted by (tour, stamp); a perceived chunk graph is written to
``memory.chunks_dir/<tour>/<chunk_index>.json`` before it is merged (the durable queue between
perception and STOA, so a crash or a model/DB outage never loses or repeats paid VLM work); a chunk
is merged at most once (the graph store records merged chunks in the same transaction).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Union

import numpy as np

from .capture import KeyframeSelector, PoseBuffer
from .chunking import chunk_keyframes
from .config import VlkngConfig
from .images import decode_image, encode_depth_png, encode_jpeg
from .llm.base import LLM
from .memory import Memory
from .model import CameraModel, ChunkGraph, Keyframe, Pose, chunk_id
from .perception.base import ChunkInput, PerceptionError, PerceptionUnavailable, Perceiver
from .poses import TfPoses, TopicPoses, choose_source
from .stoa import MergeReport, StoaMerger
from .stores.frame_store import validate_tour_id

if TYPE_CHECKING:
    from .tour import Tour

log = logging.getLogger("vlkng.build")


# metres (NaN = none), or how to decode it (None: no depth for this keyframe after all, the
# decoder said why: a cloud TF could not place)
DepthSource = Union[np.ndarray, Callable[[], Optional[np.ndarray]]]


class DepthWriter:
    """Keyframe depth into the frame store, off the capture thread: encoding a 16-bit PNG costs
    tens of milliseconds, decoding the message a few, so capture only hands the message over.

    ``submit`` queues (tour, stamp, depth or a function decoding it; None from it: no depth after
    all, counted ``skipped``); a worker thread decodes, shrinks by ``scale`` (every scale-th
    reading: no made-up depths between surfaces), encodes and writes. A full queue drops the depth
    (counted and logged) unless ``block``: a live robot keeps capturing colour keyframes whatever
    happens to depth. ``flush`` waits until all is written."""

    def __init__(self, frames, scale: int = 2, capacity: int = 64, block: bool = False) -> None:
        self.frames = frames
        self.scale = max(1, int(scale))
        self.block = block
        self._queue: queue.Queue = queue.Queue(maxsize=capacity)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.written = self.dropped = self.failed = self.skipped = 0
        self.seconds = 0.0  # worker time: decode + shrink + PNG encode + write

    def submit(self, tour_id: str, stamp_ns: int, depth: DepthSource) -> bool:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="vlkng-depth-writer", daemon=True)
                self._thread.start()
        try:
            self._queue.put((tour_id, stamp_ns, depth), block=self.block)
            return True
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                log.warning("depth writer behind: %d keyframe depth frame(s) dropped so far", self.dropped)
            return False

    def flush(self) -> None:
        if self._thread is not None:
            self._queue.join()

    def _run(self) -> None:
        while True:
            tour_id, stamp_ns, depth = self._queue.get()
            t0 = time.perf_counter()
            try:
                d = depth() if callable(depth) else depth
                if d is None:
                    self.skipped += 1
                    continue
                if self.scale > 1:
                    d = d[:: self.scale, :: self.scale]
                self.frames.put_depth(tour_id, stamp_ns, encode_depth_png(d))
                self.written += 1
            except Exception as e:  # a bad depth frame or a full disk: logged, capture goes on
                self.failed += 1
                log.error("keyframe %s/%d: depth not stored: %s: %s", tour_id, stamp_ns, type(e).__name__, e)
            finally:
                self.seconds += time.perf_counter() - t0
                self._queue.task_done()


class MemoryBuilder:
    def __init__(self, memory: Memory, cfg: VlkngConfig, perceiver: Perceiver | None,
                 camera: CameraModel | None = None, llm: LLM | None = None, block_on_depth: bool = False) -> None:
        self.memory = memory
        self.cfg = cfg
        self.perceiver = perceiver
        self.camera = camera
        self.merger = StoaMerger(memory, cfg, llm)
        self._selectors: dict[str, KeyframeSelector] = {}
        self._next_index: dict[str, int] = {}
        self.stored_with_depth = 0  # keyframes stored with a depth frame
        self.depth_writer = DepthWriter(memory.frames, cfg.depth.store_scale, block=block_on_depth)

    # --- capture ---------------------------------------------------------------------------
    def set_camera(self, tour_id: str, camera: CameraModel) -> None:
        self.camera = camera
        key = f"camera:{tour_id}"
        value = json.dumps(asdict(camera))
        if self.memory.graph.get_meta(key) != value:
            self.memory.graph.set_meta(key, value)

    def ingest_frame(self, tour_id: str, stamp_ns: int, rgb: np.ndarray, pose: Pose | None,
                     frame_id: str = "", depth: DepthSource | None = None) -> Keyframe | None:
        """``ingest`` for callers that want this frame's keyframe only (None when it is none)."""
        kfs = self.ingest(tour_id, stamp_ns, rgb, pose, frame_id, depth)
        return kfs[-1] if kfs and kfs[-1].stamp_ns == stamp_ns else None

    def ingest(self, tour_id: str, stamp_ns: int, rgb: np.ndarray, pose: Pose | None,
               frame_id: str = "", depth: DepthSource | None = None) -> list[Keyframe]:
        """Offer one camera frame to the tour's keyframe selector; store what it keeps now (JPEG,
        row, and depth: metres registered to ``rgb``, or a function decoding it, called only for a
        keyframe, through the depth writer). Returns the keyframes stored, oldest first: this
        frame's, and earlier frames the selector held back (a blurred frame of a fast turn kept
        after all). ``frame_id``: the image's camera frame (kept on the keyframe)."""
        selector = self._selectors.setdefault(tour_id, KeyframeSelector(self.cfg.capture))
        decision = selector.consider(stamp_ns, rgb, pose, (frame_id, depth))
        kept = [self._store(tour_id, h.stamp_ns, h.rgb, h.pose, *h.payload, h.reason) for h in decision.released]
        if decision.keep:
            kept.append(self._store(tour_id, stamp_ns, rgb, pose, frame_id, depth, decision.reason))
        return kept

    def flush_capture(self, tour_id: str) -> list[Keyframe]:
        """The tour's camera stream ended (bag end, node stopped, stream idle): store what the
        selector still holds worth keeping (core/capture.py ``KeyframeSelector.flush``)."""
        selector = self._selectors.get(tour_id)
        if selector is None:
            return []
        return [self._store(tour_id, h.stamp_ns, h.rgb, h.pose, *h.payload, h.reason) for h in selector.flush()]

    def _store(self, tour_id: str, stamp_ns: int, rgb: np.ndarray, pose: Pose | None, frame_id: str,
               depth: DepthSource | None, reason: str) -> Keyframe:
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
        kf = Keyframe(tour_id, stamp_ns, self._next_index[tour_id], rgb.shape[1], rgb.shape[0], pose, ref,
                      frame_id=frame_id)
        with self.memory.write_lock:
            graph.upsert_keyframes([kf])
            self.memory.touch()
        self._next_index[tour_id] += 1
        if depth is not None:
            self.stored_with_depth += 1
            if self.cfg.depth.enabled:
                self.depth_writer.submit(tour_id, stamp_ns, depth)
        log.debug("keyframe %s #%d (%s)", kf.key, kf.index, reason)
        return kf

    def attach_depth(self, tour_id: str, stamp_ns: int, depth: DepthSource) -> bool:
        """Store depth for the keyframe at ``stamp_ns`` (also when it arrives after the keyframe:
        positions placed without it are re-solved at the next merge). False when depth is off,
        the frame is no keyframe, or the writer dropped it."""
        if not self.cfg.depth.enabled or self.memory.graph.get_keyframe(tour_id, stamp_ns) is None:
            return False
        return self.depth_writer.submit(tour_id, stamp_ns, depth)

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
    keyframes_with_depth: int = 0
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
    keyframes_retagged: int = 0  # keyframes without a pose that a rebuild gave one
    objects_replaced: int = 0  # objects whose position was solved again after a re-tag

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


def tour_pose_lookup(tour: "Tour", cfg: VlkngConfig) -> tuple[str, Callable[[int, str], Pose | None]]:
    """(source, lookup(stamp_ns, camera_frame)) for the tour's frames, per ``capture.pose_source``.
    ``auto`` is TF when the bag's frame tree connects the map frame to the image frame, with
    /pose then /odom for the stamps TF does not cover (as the live capture node does)."""
    from .tour import TF_TOPICS

    has_tf = any(tour.has_topic(t) for t in TF_TOPICS)
    pose_topic, odom_topic = _abs_topic(cfg.pose_topic), _abs_topic(cfg.odom_topic)
    tf_poses = TfPoses(tour.transforms(cfg.capture.tf_max_gap_s), cfg.capture.map_frame) if has_tf else None
    frame = tour.first_frame_id()
    usable = tf_poses is not None and tf_poses.connects(frame)
    requested = cfg.capture.pose_source
    source = choose_source(requested, lambda: usable, tour.has_topic(pose_topic), tour.has_topic(odom_topic))
    if source == "tf" and not usable:
        raise ValueError(f"{tour.tour_id}: capture.pose_source tf, but the bag's /tf and /tf_static do not "
                         f"connect {cfg.capture.map_frame!r} to the image frame {frame!r}")
    if not source:
        log.warning("%s: no pose source in the bag (no /tf to the image frame, no %s, no %s): keyframes "
                    "get no pose", tour.tour_id, pose_topic, odom_topic)
        return "", lambda _s, _f: None

    def topic_lookup(topic: str) -> Callable[[int, str], Pose | None]:
        buf = PoseBuffer(cfg.capture.pose_max_age_s, capacity=10**7)
        for stamp, pose in tour.poses(topic):
            buf.add(stamp, pose)
        return TopicPoses(buf).lookup

    if source in ("pose", "odom"):
        topic = pose_topic if source == "pose" else odom_topic
        if not tour.has_topic(topic):
            raise ValueError(f"{tour.tour_id}: capture.pose_source {source}, but the bag has no {topic}")
    chain: list[Callable[[int, str], Pose | None]] = [tf_poses.lookup] if source == "tf" else []  # type: ignore[union-attr]
    if requested == "auto" or source != "tf":  # auto: the next sources cover what TF does not
        chain += [topic_lookup(t) for t, kind in ((pose_topic, "pose"), (odom_topic, "odom"))
                  if tour.has_topic(t) and (requested == "auto" or kind == source)
                  and not (source == "odom" and kind == "pose")]
    log.info("%s: poses from %s", tour.tour_id, {"tf": f"TF {cfg.capture.map_frame} -> {frame}",
                                                 "pose": pose_topic, "odom": odom_topic}[source]
             + (" (then the next sources)" if len(chain) > 1 else ""))

    def lookup(stamp_ns: int, camera_frame: str) -> Pose | None:
        for one in chain:
            pose = one(stamp_ns, camera_frame)
            if pose is not None:
                return pose
        return None
    return source, lookup


def retag_missing_poses(tour: "Tour", memory: Memory, cfg: VlkngConfig,
                        keyframes: list[Keyframe]) -> tuple[list[Keyframe], int, int]:
    """Give the tour's pose-less keyframes the pose the configured source has for them now, and
    solve again the positions of the objects seen in them (their association stays: it was made
    from places and context, and is kept). Returns (keyframes, re-tagged, objects re-placed)."""
    missing = [kf for kf in keyframes if kf.pose is None]
    if not missing:
        return keyframes, 0, 0
    source, lookup = tour_pose_lookup(tour, cfg)
    fixed = [dataclasses.replace(kf, pose=pose) for kf in missing
             if (pose := lookup(kf.stamp_ns, kf.frame_id)) is not None] if source else []
    if not fixed:
        log.warning("%s: %d keyframes still have no pose (pose source %s; pose_topic %r, odom_topic %r, "
                    "map_frame %r)", tour.tour_id, len(missing), source or "none", cfg.pose_topic,
                    cfg.odom_topic, cfg.capture.map_frame)
        return keyframes, 0, 0
    graph = memory.graph
    with memory.write_lock:
        graph.upsert_keyframes(fixed)
        memory.touch()
    replaced = _resolve_positions(memory, cfg, tour.tour_id, fixed)
    log.warning("%s: %d keyframes that had no pose were re-tagged from %s; %d objects placed again",
                tour.tour_id, len(fixed), source, replaced)
    return graph.keyframes(tour.tour_id), len(fixed), replaced


def _resolve_positions(memory: Memory, cfg: VlkngConfig, tour_id: str, retagged: list[Keyframe]) -> int:
    """Bearing (and floor-contact) least squares of every object seen in ``retagged`` keyframes,
    over all its sightings that have a pose now; written in one transaction."""
    from .calibration import memory_camera_height
    from .geometry import RayAccumulator, ray_for

    graph = memory.graph
    ids = sorted({i for row in graph.objects_in_frames([(tour_id, kf.stamp_ns) for kf in retagged]).values()
                  for i in row})
    height = memory_camera_height(memory, cfg)
    on_floor = cfg.capture.camera_height_m >= 0
    pitch = math.radians(cfg.capture.camera_pitch_deg)
    cameras: dict[str, CameraModel] = {}
    out = []
    for node in graph.get_objects(ids):
        acc = RayAccumulator()
        for ob in node.observations:
            kf = graph.get_keyframe(ob.tour_id, ob.stamp_ns)
            if kf is None or kf.pose is None:
                continue
            if ob.tour_id not in cameras:
                raw = graph.get_meta(f"camera:{ob.tour_id}")
                cameras[ob.tour_id] = CameraModel(**json.loads(raw)) if raw else CameraModel.from_hfov(
                    kf.width, kf.height, cfg.capture.camera_hfov_deg)
            acc.add(ray_for(kf.pose, ob.bbox, cameras[ob.tour_id], on_floor=on_floor, pitch_rad=pitch))
        est = acc.solve(height)
        if est is not None:
            out.append(dataclasses.replace(node, position=est[0], position_var=est[1], ray_stats=acc.to_list()))
    if out:
        with memory.write_lock:
            graph.apply_merge(f"{tour_id}#retag-{time.time_ns()}", out, [])
            memory.touch()
    return len(out)


def build_tour(tour: "Tour | str | Path", memory: Memory, cfg: VlkngConfig, progress: bool = True,
               perceiver: Perceiver | None = None, llm: LLM | None = None,
               tour_id: str | None = None) -> BuildReport:
    """Build (or extend) ``memory`` from a tour folder. Re-running changes nothing.

    The tour's id in the memory comes from its content (core/tour_identity.py); ``tour_id``
    names it instead (refused when that name already holds other content)."""
    from .perception.registry import make_perceiver
    from .tour import Tour
    from .tour_identity import resolve_tour_id

    if tour_id:
        validate_tour_id(tour_id)
    if not isinstance(tour, Tour):
        tour = open_tour(tour, cfg)
    graph = memory.graph
    tour.tour_id = resolve_tour_id(graph, tour, tour_id)
    report = BuildReport(tour.tour_id)
    graph.set_meta(f"tour_path:{tour.tour_id}", str(Path(tour.path).resolve()))
    if perceiver is None:
        perceiver = make_perceiver(cfg, annotations=tour.annotations)
    report.perception_backend = getattr(perceiver, "name", "")
    camera = tour.camera_model(cfg.capture.camera_hfov_deg)
    builder = MemoryBuilder(memory, cfg, perceiver, camera, llm, block_on_depth=True)
    builder.set_camera(tour.tour_id, camera)

    t0 = time.perf_counter()
    capture_key = f"captured:{tour.tour_id}"
    if graph.get_meta(capture_key) == "done":
        keyframes = graph.keyframes(tour.tour_id)
        report.frames = tour.frame_count()
        _say(progress, f"{tour.tour_id}: capture already done ({len(keyframes)} keyframes)")
        # "done" never freezes a mistake: keyframes that lacked a pose get one if the (fixed) pose
        # source has it now, and the objects seen in them are placed again
        keyframes, report.keyframes_retagged, report.objects_replaced = retag_missing_poses(
            tour, memory, cfg, keyframes)
        report.frames_without_pose = sum(1 for kf in keyframes if kf.pose is None)
    else:
        source, lookup = tour_pose_lookup(tour, cfg)
        total = max(tour.frame_count(), 1)
        last_print = time.perf_counter()
        for fm in tour.frames():
            report.frames += 1
            if fm.rgb is None:
                report.frames_unreadable += 1
                log.error("%s frame %d skipped: %s", tour.tour_id, fm.stamp_ns, fm.error)
                continue
            pose = lookup(fm.stamp_ns, fm.frame_id)
            kept = builder.ingest(tour.tour_id, fm.stamp_ns, fm.rgb, pose, fm.frame_id,
                                  depth=fm.depth if cfg.depth.enabled else None)
            report.frames_without_pose += sum(1 for kf in kept if kf.pose is None)
            if progress and time.perf_counter() - last_print > 2.0:
                last_print = time.perf_counter()
                _say(True, f"{tour.tour_id}: capture {report.frames}/{total} frames")
        # the bag ended: what the selector held back (a last turn, the final view) is kept now
        report.frames_without_pose += sum(1 for kf in builder.flush_capture(tour.tour_id) if kf.pose is None)
        report.keyframes_with_depth = builder.stored_with_depth
        builder.depth_writer.flush()
        report.seconds["depth_store"] = builder.depth_writer.seconds
        keyframes = graph.keyframes(tour.tour_id)
        if not tour.read_errors():
            graph.set_meta(capture_key, "done")
        if report.frames_without_pose:
            log.warning("%s: %d keyframes have no pose (pose source: %s)", tour.tour_id,
                        report.frames_without_pose, source or "none")
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
        log.warning("%s: no keyframe has a pose (capture.pose_source %s, pose_topic %r, odom_topic %r, "
                    "map_frame %r): the memory has no geometry, so objects get no positions and answers "
                    "no goal poses; objects are told apart by place, context and time only",
                    tour.tour_id, cfg.capture.pose_source, cfg.pose_topic, cfg.odom_topic, cfg.capture.map_frame)
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

    return Tour.open(path, image_topic=_abs_topic(cfg.image_topic), pose_topic=_abs_topic(cfg.pose_topic),
                     depth=cfg.depth)


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
