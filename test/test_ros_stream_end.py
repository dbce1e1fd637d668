"""The tail of a live tour is chunked as the offline build chunks its bag (issue 11 item 5), with
the capture and the chunk builder as separate nodes over DDS (as the launch file's separate
processes run them), whatever their stream_end_s and flush_after_s; the capture announces the
stream's end (std_msgs/Header on ``stream_end``), and a builder that gets no announcement still
perceives the tail."""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import Header
from vlkng_msgs.msg import Keyframe as KeyframeMsg

from vlkng_ros import conversions as conv
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.model import Keyframe
from vlkng_ros.core.pipeline import MemoryBuilder, build_tour
from vlkng_ros.eval.sim.generate import generate_tour
from vlkng_ros.nodes.capture import CaptureNode
from vlkng_ros.nodes.chunk_builder import ChunkBuilderNode
from vlkng_ros.nodes.common import TransitionCallbackReturn

from helpers import domain_id, frames_perceiver, replay_tour, wait_progress, wait_until

DOMAIN_ID = domain_id(79)  # unique per ROS test module
OK = TransitionCallbackReturn.SUCCESS


@pytest.fixture(scope="module")
def ros():
    rclpy.init(args=["--ros-args", "-p", "embeddings.text_backend:=hashing"], domain_id=DOMAIN_ID)
    yield
    rclpy.shutdown()


def _cfg() -> VlkngConfig:
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    cfg.capture.pose_source = "pose"
    return cfg


class Spinning:
    """Each node on an executor and thread of its own (as if in processes of their own)."""

    def __init__(self, *nodes: Node) -> None:
        self.executors = []
        for node in nodes:
            ex = SingleThreadedExecutor(context=node.context)
            ex.add_node(node)
            self.executors.append(ex)
            threading.Thread(target=self._spin, args=(ex,), daemon=True).start()

    @staticmethod
    def _spin(ex) -> None:
        try:
            ex.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass

    def stop(self) -> None:
        for ex in self.executors:
            ex.shutdown(timeout_sec=5)


def _chunks(memory: Memory, tour_id: str) -> list[list[int]]:
    return [c.frames for c in MemoryBuilder(memory, memory.cfg, None).perceived_chunks(tour_id)]


def test_separate_capture_and_builder_chunk_the_tail_as_the_offline_build(ros, tmp_path):
    """stream_end_s (2 s) above flush_after_s (1 s): the stream's last view, kept by the capture
    2 s after the last image, joins the tour's last chunk as in ``vlkng build`` of the bag (it
    used to be perceived alone after the tail: one chunk more than offline)."""
    tour = tmp_path / "home"
    generate_tour(tour, minutes=0.4, seed=11, log_progress=False)  # 33 keyframes + 1 kept at the end
    with Memory.open(tmp_path / "offline", _cfg()) as off:
        tour_id = build_tour(tour, off, _cfg(), progress=False, perceiver=frames_perceiver()).tour_id
        offline_keyframes = [k.stamp_ns for k in off.graph.keyframes()]
        offline_chunks = _chunks(off, tour_id)
    assert len(offline_chunks[-1]) > 1, "the tour's tail must be a partial chunk of several keyframes"

    with Memory.open(tmp_path / "live", _cfg()) as mem:
        builder = ChunkBuilderNode(memory=mem, perceiver=frames_perceiver(), parameter_overrides=[
            Parameter("flush_after_s", value=1.0),
            Parameter("stream_end_wait_s", value=300.0)])  # the announcement, not the fallback
        capture = CaptureNode(memory=mem, parameter_overrides=[
            Parameter("tour_id", value="live"), Parameter("stream_end_s", value=2.0),
            Parameter("capture.pose_source", value="pose")])
        spinning = Spinning(builder, capture)
        try:
            assert builder.trigger_configure() == OK and builder.trigger_activate() == OK
            assert capture.trigger_configure() == OK and capture.trigger_activate() == OK
            def moving() -> tuple:  # what changes while the two nodes take the tour in
                return (capture.stats["received"], capture.stats["keyframes"], builder.keyframes_received,
                        builder.chunks_published)

            replay_tour(tour, DOMAIN_ID, moving, quiet=True)

            def done() -> bool:  # the stream ended, its keyframes all came, each is in a perceived chunk
                if capture._last_image_at is not None or capture._drain_lock.locked():
                    return False  # images still come, or the stream's end is being processed
                stored = {k.stamp_ns for k in mem.graph.keyframes("live")}
                chunked = {s for c in _chunks(mem, "live") for s in c}
                return (builder.keyframes_received == capture.stats["keyframes"] == len(stored) > 0
                        and builder.idle and stored == chunked)

            # the tail waits for the stream end (2 s) and the flush (1 s): nothing moves meanwhile
            wait_progress(done, moving, "the tail of the live tour: not chunked")
            live_keyframes = [k.stamp_ns for k in mem.graph.keyframes("live")]
            assert live_keyframes == offline_keyframes  # the same keyframes were kept live
            assert _chunks(mem, "live") == offline_chunks
            assert capture.stats["stream_ends"] == 1
        finally:
            spinning.stop()
            capture.destroy_node()
            builder.destroy_node()


class StandInCapture(Node):
    """Publishes keyframes (and stream ends) as a capture node would."""

    def __init__(self, announces: bool) -> None:
        super().__init__("stand_in_capture")
        self.kf_pub = self.create_publisher(KeyframeMsg, "keyframes", 100)
        self.end_pub = self.create_publisher(Header, "stream_end", 10) if announces else None

    def send(self, kf: Keyframe) -> None:
        self.kf_pub.publish(conv.keyframe_to_msg(kf))

    def stream_end(self, tour_id: str, last_ns: int) -> None:
        self.end_pub.publish(Header(stamp=conv.time_from_ns(last_ns), frame_id=tour_id))


def _kf(i: int) -> Keyframe:
    return Keyframe("t", 1_000_000_000 * (i + 1), i, 64, 48, None, "")


@pytest.fixture
def nodes(ros, tmp_path, request):
    """A chunk builder (flush_after_s 0.4 s, stream_end_wait_s 1.5 s) and a stand-in capture
    (announcing stream ends when the test's parameter says so), each spinning."""
    with Memory.open(tmp_path / "mem", _cfg()) as mem:
        mem.graph.upsert_keyframes([_kf(i) for i in range(4)])
        builder = ChunkBuilderNode(memory=mem, perceiver=frames_perceiver(), parameter_overrides=[
            Parameter("flush_after_s", value=0.4), Parameter("stream_end_wait_s", value=1.5)])
        capture = StandInCapture(announces=request.param)
        spinning = Spinning(builder, capture)
        try:
            assert builder.trigger_configure() == OK and builder.trigger_activate() == OK
            assert wait_until(lambda: capture.kf_pub.get_subscription_count() == 1, 10)
            if capture.end_pub is not None:
                assert wait_until(lambda: builder.count_publishers("stream_end") == 1, 10)
            yield mem, builder, capture
        finally:
            spinning.stop()
            builder.destroy_node()
            capture.destroy_node()


@pytest.mark.parametrize("nodes", [True], indirect=True)
def test_the_tail_waits_for_the_keyframe_the_stream_end_names(nodes):
    """The announcement comes before its keyframe (topics are not ordered): the tail waits for it."""
    mem, builder, capture = nodes
    for i in range(3):
        capture.send(_kf(i))
    capture.stream_end("t", _kf(3).stamp_ns)  # the stream ended on keyframe 3, still on its way
    time.sleep(1.0)  # 2.5 flush periods without keyframes
    assert _chunks(mem, "t") == [], "the tail was perceived without the stream's last keyframe"
    capture.send(_kf(3))
    assert wait_until(lambda: _chunks(mem, "t"), 5)
    assert _chunks(mem, "t") == [[_kf(i).stamp_ns for i in range(4)]]


@pytest.mark.parametrize("nodes", [True], indirect=True)
def test_a_capture_that_never_announces_is_waited_for_a_bounded_time(nodes):
    """A capture publishing stream_end that stays silent (its stream_end_s too long, or stuck):
    the tail goes after flush_after_s + stream_end_wait_s (0.4 + 1.5 s), not before."""
    mem, builder, capture = nodes
    for i in range(4):
        capture.send(_kf(i))
    assert wait_until(lambda: builder.keyframes_received == 4, 5)
    t0 = time.monotonic()
    assert not wait_until(lambda: _chunks(mem, "t"), 1.2)
    assert wait_until(lambda: _chunks(mem, "t"), 5)
    assert 1.5 <= time.monotonic() - t0 < 4.0
    assert _chunks(mem, "t") == [[_kf(i).stamp_ns for i in range(4)]]


@pytest.mark.parametrize("nodes", [False], indirect=True)
def test_without_any_stream_end_publisher_the_tail_goes_after_flush_after_s(nodes):
    """No node publishes stream_end (an older capture node, or one that stopped): the builder does
    not wait for an announcement that cannot come."""
    mem, builder, capture = nodes
    for i in range(4):
        capture.send(_kf(i))
    assert wait_until(lambda: builder.keyframes_received == 4, 5)
    t0 = time.monotonic()
    assert wait_until(lambda: _chunks(mem, "t"), 1.3)  # flush_after_s 0.4 s (+ a timer period)
    assert time.monotonic() - t0 < 1.3
    assert _chunks(mem, "t") == [[_kf(i).stamp_ns for i in range(4)]]
