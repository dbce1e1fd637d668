"""Chunk graph builder node: keyframes -> chunks of b -> VLM perception -> ``chunk_graphs``.

Perception runs in a bounded worker pool (``perception.max_concurrency``) with retries and
backoff, so a slow or failing VLM never blocks the subscription. A perceived chunk is written
durably by ``MemoryBuilder.perceive`` before it is published, and the merger also sweeps the disk
queue, so a dropped message loses nothing. On activation the node re-chunks the keyframes that
are in the memory but in no perceived chunk (restart recovery). When no keyframe arrived for
``flush_after_s`` the partial chunk is perceived too, so the tail of a tour is not left out.

The tail is chunked as the offline build chunks the bag: the capture keeps a stream's last view
as it ends (``stream_end_s`` after the last image), so a partial chunk of keyframes that came in
live waits for the capture's ``stream_end`` announcement and for the last keyframe it names (the
keyframe topic is not ordered against it). A capture that never announces is waited for at most
``stream_end_wait_s`` beyond ``flush_after_s``; with none publishing ``stream_end`` (an older
capture node, or one that stopped or crashed) the partial chunk goes after ``flush_after_s``.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from std_msgs.msg import Header
from vlkng_msgs.msg import ChunkGraph as ChunkGraphMsg
from vlkng_msgs.msg import Keyframe as KeyframeMsg

from .. import conversions as conv
from ..core.chunking import Chunker
from ..core.memory import Memory
from ..core.model import Keyframe
from ..core.perception.base import PerceptionUnavailable, Perceiver
from ..core.pipeline import MemoryBuilder
from .common import VlkngLifecycleNode, param, spin_main

RESUME_GRACE = 6  # recovered keyframes wait this many flush periods for the tour to go on

PARAMS = {
    "tour_dir": ("", "Tour folder whose annotations.jsonl feeds perception.backend 'annotations'."),
    "flush_after_s": (5.0, "Perceive a partial chunk when no keyframe arrived for this long (s) and the capture "
                           "announced the stream's end (its last keyframe is in)."),
    "stream_end_wait_s": (30.0, "A partial chunk waits for the capture's stream-end announcement at most this "
                                "long beyond flush_after_s (s); keep it above the capture's stream_end_s. No "
                                "capture publishing stream_end_topic: no wait."),
    "stream_end_topic": ("stream_end", "The capture's stream-end announcements (std_msgs/Header: frame_id = "
                                       "tour id, stamp = its last keyframe)."),
    "retries": (3, "Retries of a failed chunk (after the backend's own), with backoff."),
    "retry_backoff_s": (2.0, "First retry delay (s); doubles each retry."),
    "keyframe_topic": ("keyframes", "Keyframes to chunk (vlkng_msgs/Keyframe)."),
    "chunk_topic": ("chunk_graphs", "Where chunk graphs are published (vlkng_msgs/ChunkGraph)."),
}


def load_annotations(tour_dir: str) -> dict[int, dict[str, Any]]:
    """stamp_ns -> annotation line of a tour folder (the simulated-perception input)."""
    from ..core.tour import Tour

    return Tour.open(Path(tour_dir)).annotations or {}


class ChunkBuilderNode(VlkngLifecycleNode):
    def __init__(self, memory: Memory | None = None, perceiver: Perceiver | None = None,
                 **kwargs: Any) -> None:
        super().__init__("vlkng_chunk_builder", PARAMS, memory, **kwargs)
        self._given_perceiver = perceiver
        self.pool: ThreadPoolExecutor | None = None
        self.chunks_published = 0
        self.chunks_failed = 0
        self.keyframes_received = 0

    def setup(self) -> None:
        assert self.memory is not None
        perceiver = self._given_perceiver
        self._unavailable_said = False
        if perceiver is None:
            from ..core.perception.base import PerceptionNotConfigured
            from ..core.perception.registry import make_perceiver

            annotations = None
            tour_dir = param(self, "tour_dir")
            if tour_dir and self.cfg.perception.backend in ("annotations", "auto"):
                annotations = load_annotations(tour_dir)
            try:
                perceiver = make_perceiver(self.cfg, annotations=annotations)
            except PerceptionNotConfigured as e:  # no usable backend: capture goes on, chunks wait
                self.get_logger().warning(
                    f"no perception backend ({e}): keyframes are captured and stored, and chunks stay "
                    f"queued until a perception backend is configured (then restart)")
                self._unavailable_said = True
                perceiver = None
        self.builder = MemoryBuilder(self.memory, self.cfg, perceiver)
        self.pool = ThreadPoolExecutor(max(1, self.cfg.perception.max_concurrency),
                                       thread_name_prefix="vlkng-perceive")
        self.chunkers: dict[str, Chunker] = {}
        self.seen: dict[str, set[int]] = {}  # stamps chunked or waiting, per tour
        self.last_keyframe_at = time.monotonic()
        self.in_flight = 0
        self._flight_lock = threading.Lock()
        self.flush_after_s = float(param(self, "flush_after_s"))
        self.stream_end_wait_s = max(0.0, float(param(self, "stream_end_wait_s")))
        self._end_topic = param(self, "stream_end_topic")
        self._last_live: dict[str, int] = {}  # tour -> stamp of the last keyframe received on the topic
        self._stream_end: dict[str, int] = {}  # tour -> last keyframe named by the capture's stream end
        self._live_partial: set[str] = set()  # tours whose partial chunk holds keyframes that came live
        self._waiting_said: set[str] = set()
        self.retries = int(param(self, "retries"))
        self.backoff_s = float(param(self, "retry_backoff_s"))
        self.pub = self.keep(self.create_publisher(ChunkGraphMsg, param(self, "chunk_topic"), 100))
        self.keep(self.create_subscription(KeyframeMsg, param(self, "keyframe_topic"), self._on_keyframe, 100))
        self.keep(self.create_subscription(Header, self._end_topic, self._on_stream_end, 10))
        self.keep(self.create_timer(max(0.2, min(1.0, self.flush_after_s / 4)), self._on_timer))

    def on_activated(self) -> None:
        """Restart recovery: chunk what is stored but was never perceived. The recovered
        keyframes wait in the chunker for the tour's next keyframes (the boundaries an
        uninterrupted run would have made); they are flushed as a partial chunk only once
        keyframes flowed again and then stopped, or when no keyframe arrives for
        ``RESUME_GRACE`` x flush_after_s (the tour really ended at the kill)."""
        self.last_keyframe_at = time.monotonic() + (RESUME_GRACE - 1) * self.flush_after_s
        if self.builder.perceiver is None:
            return  # nothing can be perceived: keyframes stay unchunked until a backend is set
        for tour_id in self.memory.graph.tours():
            leftovers = self.builder.unchunked_keyframes(tour_id)
            if leftovers:
                self.get_logger().info(f"{tour_id}: resuming {len(leftovers)} unchunked keyframes")
            for kf in leftovers:
                self._add(kf)

    def teardown(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)  # perceived chunks are on disk
            self.pool = None

    # --- chunking --------------------------------------------------------------------------
    def _on_keyframe(self, msg: KeyframeMsg) -> None:
        if not self.active:
            return
        self.last_keyframe_at = time.monotonic()
        self.keyframes_received += 1
        kf = conv.keyframe_from_msg(msg)
        with self._lock:  # one publisher's keyframes come in order: the last one received so far
            self._last_live[kf.tour_id] = kf.stamp_ns
            self._live_partial.add(kf.tour_id)
        self._add(kf)

    def _on_stream_end(self, msg: Header) -> None:
        if not self.active:
            return
        if not msg.frame_id:
            self.get_logger().error(f"{self.resolve_topic_name(self._end_topic)}: a stream end without a tour id "
                                    "(header.frame_id) ignored", throttle_duration_sec=60.0)
            return
        with self._lock:
            self._stream_end[msg.frame_id] = conv.ns_from_time(msg.stamp)

    def _add(self, kf: Keyframe) -> None:
        with self._lock:
            seen = self.seen.get(kf.tour_id)
            if seen is None:  # first keyframe of a tour in this run: what is already perceived
                seen = {s for c in self.builder.perceived_chunks(kf.tour_id) for s in c.frames}
                self.seen[kf.tour_id] = seen
            if kf.stamp_ns in seen:
                return  # already chunked (replayed, or resumed and then republished)
            if self.builder.perceiver is None:
                return  # no backend: stored keyframes are chunked on a later start
            seen.add(kf.stamp_ns)
            chunk = self.chunkers.setdefault(kf.tour_id, Chunker(self.cfg.chunk_size)).add(kf)
        if chunk:
            self._submit(kf.tour_id, chunk)

    def _on_timer(self, force: bool = False) -> None:
        idle_s = time.monotonic() - self.last_keyframe_at
        if not self.active or (idle_s < self.flush_after_s and not force):
            return
        capture_there = None  # asked once per tick, only when a tour waits for its stream end
        partial = []
        with self._lock:
            for tour_id, chunker in self.chunkers.items():
                if not chunker.pending:
                    continue
                warn = ""
                if tour_id in self._live_partial and not force and \
                        self._stream_end.get(tour_id) != self._last_live.get(tour_id):
                    if capture_there is None:
                        capture_there = self.count_publishers(self._end_topic) > 0
                    if capture_there and idle_s < self.flush_after_s + self.stream_end_wait_s:
                        if tour_id not in self._waiting_said:  # its last keyframe may be on the way
                            self._waiting_said.add(tour_id)
                            self.get_logger().info(f"{tour_id}: no keyframe for {idle_s:.0f} s: the last "
                                                   f"{chunker.pending} wait for the capture's stream end")
                        continue
                    warn = (f"no stream end from the capture {idle_s:.0f} s after its last keyframe (its "
                            "stream_end_s above this node's flush_after_s + stream_end_wait_s, or it is stuck)"
                            if capture_there else
                            f"nothing publishes {self.resolve_topic_name(self._end_topic)} (an older capture "
                            "node, or it stopped): the tail is not waited for")
                self._live_partial.discard(tour_id)
                self._waiting_said.discard(tour_id)
                partial.append((tour_id, chunker.flush(), warn))
        for tour_id, chunk, warn in partial:
            what = f"perceiving the last {len(chunk)} keyframes"
            if warn:
                self.get_logger().warning(f"{tour_id}: {warn}; {what}")
            else:
                self.get_logger().info(f"{tour_id}: " + ("flushed: " if force else
                                                         f"no keyframe for {idle_s:.0f} s: ") + what)
            self._submit(tour_id, chunk)

    def flush_now(self) -> None:
        """Perceive every partial chunk now (end of a replay, tests)."""
        self._on_timer(force=True)

    # --- perception ------------------------------------------------------------------------
    def _submit(self, tour_id: str, chunk: list[Keyframe]) -> None:
        if self.pool is None:
            return
        with self._flight_lock:
            self.in_flight += 1
        self.pool.submit(self._perceive, tour_id, chunk)

    @property
    def idle(self) -> bool:
        with self._lock, self._flight_lock:
            return self.in_flight == 0 and not any(c.pending for c in self.chunkers.values())

    def _perceive(self, tour_id: str, chunk: list[Keyframe]) -> None:
        try:
            for attempt in range(self.retries + 1):
                if not self.active:
                    return  # shutting down: the keyframes stay unchunked and resume on restart
                try:
                    graph = self.builder.perceive(tour_id, chunk)
                except PerceptionUnavailable as e:
                    # down or not configured: every retry would fail alike; say it once, keep queued
                    if not self._unavailable_said:
                        self._unavailable_said = True
                        self.get_logger().error(f"perception stopped ({e}); chunks stay queued for "
                                                "the next start")
                    self.chunks_failed += 1
                    with self._lock:
                        self.seen.get(tour_id, set()).difference_update(k.stamp_ns for k in chunk)
                    return
                except Exception as e:
                    delay = self.backoff_s * (2 ** attempt)
                    last = attempt == self.retries
                    self.get_logger().error(
                        f"{tour_id} chunk {chunk[0].index}: perception failed ({type(e).__name__}: {e}); "
                        + ("left queued for the next start" if last else f"retry in {delay:.1f} s"))
                    if last:
                        self.chunks_failed += 1
                        with self._lock:  # let a later start pick these keyframes up again
                            self.seen.get(tour_id, set()).difference_update(k.stamp_ns for k in chunk)
                        return
                    time.sleep(delay)
                    continue
                self.pub.publish(conv.chunk_graph_to_msg(graph))
                self.chunks_published += 1
                return
        finally:
            with self._flight_lock:
                self.in_flight -= 1


def main(args: list[str] | None = None) -> int:
    return spin_main(ChunkBuilderNode, args)
