"""STOA merger node: ``chunk_graphs`` -> ``MemoryBuilder.merge`` -> ``graph_updates``.

Merges run one at a time (one mutually exclusive callback group). On activation, and every
``pending_scan_s``, the node merges every chunk that was perceived (on disk) but not merged:
a chunk graph message dropped while the merger was down is never lost, and a chunk merged
before is skipped by the store (recorded in the same transaction), never merged twice.
"""

from __future__ import annotations

import time
from typing import Any

from vlkng_msgs.msg import ChunkGraph as ChunkGraphMsg
from vlkng_msgs.msg import GraphUpdate as GraphUpdateMsg

from .. import conversions as conv
from ..core.memory import Memory
from ..core.model import ChunkGraph
from ..core.pipeline import MemoryBuilder
from .common import VlkngLifecycleNode, param, spin_main, warm_up

PARAMS = {
    "pending_scan_s": (10.0, "Merge perceived-but-unmerged chunks from the disk queue this often (s)."),
    "chunk_topic": ("chunk_graphs", "Chunk graphs to merge (vlkng_msgs/ChunkGraph)."),
    "update_topic": ("graph_updates", "Where merge results are published (vlkng_msgs/GraphUpdate)."),
}


class MergerNode(VlkngLifecycleNode):
    def __init__(self, memory: Memory | None = None, **kwargs: Any) -> None:
        super().__init__("vlkng_merger", PARAMS, memory, **kwargs)
        self.merged = 0
        self.skipped = 0

    def setup(self) -> None:
        assert self.memory is not None
        from ..core.llm.registry import make_llm

        self.builder = MemoryBuilder(self.memory, self.cfg, None, llm=make_llm(self.cfg.llm))
        warm_up(self.memory)
        self.pub = self.keep(self.create_publisher(GraphUpdateMsg, param(self, "update_topic"), 100))
        self.keep(self.create_subscription(ChunkGraphMsg, param(self, "chunk_topic"), self._on_chunk, 100))
        self.keep(self.create_timer(float(param(self, "pending_scan_s")), self.merge_pending))

    def on_activated(self) -> None:
        self.merge_pending()

    def merge_pending(self) -> int:
        """Merge every perceived chunk not yet merged (restart recovery). Returns how many."""
        if not self.active:
            return 0
        count = 0
        for tour_id in self.memory.graph.tours():
            for chunk in self.builder.pending_chunks(tour_id):
                count += self._merge(chunk)
        if count:
            self.get_logger().info(f"merged {count} queued chunks")
        return count

    def _on_chunk(self, msg: ChunkGraphMsg) -> None:
        if not self.active:
            return
        try:
            chunk = conv.chunk_graph_from_msg(msg)
        except ValueError as e:
            self.get_logger().error(f"chunk graph {msg.chunk_id} ignored: {e}")
            return
        self._merge(chunk)

    def _merge(self, chunk: ChunkGraph) -> int:
        t0 = time.perf_counter()
        try:
            with self._lock:
                report = self.builder.merge(chunk)
        except Exception as e:  # DB down: stays queued on disk, the next scan retries it
            self.get_logger().error(f"{chunk.chunk_id}: merge failed ({type(e).__name__}: {e}); "
                                    "it stays queued")
            return 0
        if report.skipped:
            self.skipped += 1
            return 0
        self.merged += 1
        graph = self.memory.graph
        totals = (graph.count_objects(), graph.count_relations(), graph.count_keyframes())
        self.pub.publish(conv.graph_update_msg(report, chunk.tour_id, self.get_clock().now().nanoseconds,
                                               totals, time.perf_counter() - t0))
        return 1


def main(args: list[str] | None = None) -> int:
    return spin_main(MergerNode, args)
