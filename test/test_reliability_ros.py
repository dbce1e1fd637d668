"""Restart continuity and live defaults of the nodes (issue 11), over real rclpy."""

from __future__ import annotations

import time

import pytest
from helpers import domain_id
import rclpy
from rclpy.parameter import Parameter

from vlkng_ros.core.chunking import chunk_keyframes
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.model import ChunkGraph, Keyframe
from vlkng_ros.core.perception.base import ChunkInput, Perceiver
from vlkng_ros.nodes.ask_server import LATENCY_WINDOW, AskServerNode
from vlkng_ros.nodes.chunk_builder import ChunkBuilderNode
from vlkng_ros.nodes.common import TransitionCallbackReturn

DOMAIN_ID = domain_id(73)
OK = TransitionCallbackReturn.SUCCESS


class EmptyPerceiver(Perceiver):
    name = "empty"

    def perceive(self, chunk: ChunkInput) -> ChunkGraph:
        return ChunkGraph(chunk.tour_id, chunk.chunk_index, [k.stamp_ns for k in chunk.keyframes])


@pytest.fixture(scope="module")
def ros():
    rclpy.init(args=["--ros-args", "-p", "embeddings.text_backend:=hashing"], domain_id=DOMAIN_ID)
    yield
    rclpy.shutdown()


@pytest.fixture
def memory(tmp_path):
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    mem = Memory.open(tmp_path / "mem", cfg)
    yield mem
    mem.close()


def _kf(i: int) -> Keyframe:
    return Keyframe("t", 1_000_000_000 * (i + 1), i, 64, 48, None, "")


def _chunk_files(memory) -> list[str]:
    return sorted(p.name for p in (memory.chunks_dir / "t").glob("*.json"))


def test_restart_continues_chunking_where_it_stopped(ros, memory):
    """Killed after 11 keyframes (one chunk perceived, 3 waiting): after the restart the 3 wait
    for the tour's next keyframes and form the chunk an uninterrupted run makes (no partial)."""
    from vlkng_ros.core.pipeline import MemoryBuilder

    memory.graph.upsert_keyframes([_kf(i) for i in range(11)])
    MemoryBuilder(memory, memory.cfg, EmptyPerceiver()).perceive("t", [_kf(i) for i in range(8)])
    node = ChunkBuilderNode(memory=memory, perceiver=EmptyPerceiver(),
                            parameter_overrides=[Parameter("flush_after_s", value=0.2)])
    try:
        assert node.trigger_configure() == OK and node.trigger_activate() == OK
        deadline = time.monotonic() + 1.0  # five flush periods: the replay is still starting up
        while time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        assert _chunk_files(memory) == ["000000.json"], "recovered keyframes were flushed as a partial chunk"
        for i in range(11, 16):  # the tour goes on
            memory.graph.upsert_keyframes([_kf(i)])
            node._add(_kf(i))
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and len(_chunk_files(memory)) < 2:
            rclpy.spin_once(node, timeout_sec=0.05)
        uninterrupted = [c[0].index for c in chunk_keyframes([_kf(i) for i in range(16)], memory.cfg.chunk_size)]
        assert [int(n.split(".")[0]) for n in _chunk_files(memory)] == uninterrupted == [0, 8]
    finally:
        node.trigger_deactivate()
        node.destroy_node()


def test_chunk_builder_starts_without_a_tour_dir(ros, memory):
    """`vlkng run --memory M` on a robot: no tour_dir (simulated perception is opt-in)."""
    node = ChunkBuilderNode(memory=memory)
    try:
        assert node.trigger_configure() == OK and node.trigger_activate() == OK
        node._add(_kf(0))  # keyframes stay stored and unchunked until a backend is configured
        assert node.idle
    finally:
        node.trigger_deactivate()
        node.destroy_node()


def test_ask_server_latency_list_is_bounded(ros, memory):
    node = AskServerNode(memory=memory)
    try:
        assert node.trigger_configure() == OK
        for _ in range(LATENCY_WINDOW + 50):
            node.latencies_s.append(0.01)
        assert len(node.latencies_s) == LATENCY_WINDOW
    finally:
        node.destroy_node()
