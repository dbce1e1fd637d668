"""Each vlkng node starts, configures, activates and shuts down cleanly over real rclpy/DDS."""

from __future__ import annotations

import time

import pytest
from helpers import domain_id
import rclpy
from rclpy.node import Node

from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.model import ChunkGraph
from vlkng_ros.core.perception.base import ChunkInput, Perceiver
from vlkng_ros.nodes.ask_server import AskServerNode
from vlkng_ros.nodes.capture import CaptureNode
from vlkng_ros.nodes.chunk_builder import ChunkBuilderNode
from vlkng_ros.nodes.common import TransitionCallbackReturn
from vlkng_ros.core.intent import parse_intent
from vlkng_ros.nodes.merger import MergerNode
from vlkng_ros.nodes.navigator import NavigatorNode, import_interface, question_for

DOMAIN_ID = domain_id(71)  # unique per ROS test module: parallel CI jobs do not see each other
OK = TransitionCallbackReturn.SUCCESS


class EmptyPerceiver(Perceiver):
    name = "empty"

    def perceive(self, chunk: ChunkInput) -> ChunkGraph:
        return ChunkGraph(chunk.tour_id, chunk.chunk_index, [k.stamp_ns for k in chunk.keyframes])


@pytest.fixture(scope="module")
def ros():
    rclpy.init(args=["--ros-args", "-p", "embeddings.text_backend:=hashing"], domain_id=DOMAIN_ID)
    probe = Node("vlkng_test_probe")
    yield probe
    probe.destroy_node()
    rclpy.shutdown()


@pytest.fixture
def memory(tmp_path):
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    mem = Memory.open(tmp_path / "mem", cfg)
    yield mem
    mem.close()


def _wait_for(predicate, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _topics(probe: Node) -> set[str]:
    return {name for name, _ in probe.get_topic_names_and_types()}


@pytest.mark.parametrize("factory,expect_topic", [
    (lambda m: CaptureNode(memory=m), "/keyframes"),
    (lambda m: ChunkBuilderNode(memory=m, perceiver=EmptyPerceiver()), "/chunk_graphs"),
    (lambda m: MergerNode(memory=m), "/graph_updates"),
    (lambda m: AskServerNode(memory=m), None),
], ids=["capture", "chunk_builder", "merger", "ask_server"])
def test_lifecycle_node_configures_activates_and_shuts_down(ros, memory, factory, expect_topic):
    node = factory(memory)
    try:
        assert node.trigger_configure() == OK
        assert memory is node.memory
        assert node.trigger_activate() == OK and node.active
        if expect_topic:
            assert _wait_for(lambda: expect_topic in _topics(ros)), f"{expect_topic} never appeared"
        else:
            assert _wait_for(lambda: "/ask" in {n for n, _ in ros.get_service_names_and_types()})
        assert node.trigger_deactivate() == OK and not node.active
        assert node.trigger_cleanup() == OK and node.memory is None
        if expect_topic:  # cleanup destroyed its entities
            assert _wait_for(lambda: expect_topic not in _topics(ros))
    finally:
        node.destroy_node()


def test_every_parameter_is_declared_with_a_description(ros, memory):
    node = CaptureNode(memory=memory)
    try:
        names = {n for n, _, _ in VlkngConfig().iter_parameters()} | {"tour_id", "memory_dir", "image_type"}
        for name in names:
            assert node.has_parameter(name), name
            descriptor = node.describe_parameter(name)
            assert descriptor.description.strip(), f"{name} has no description"
    finally:
        node.destroy_node()


def test_bad_parameter_fails_configure_with_a_clear_error(ros, tmp_path):
    from rclpy.parameter import Parameter

    node = ChunkBuilderNode(parameter_overrides=[Parameter("memory_dir", value=str(tmp_path / "m")),
                                                 Parameter("perception.backend", value="bogus"),
                                                 Parameter("embeddings.text_backend", value="hashing")])
    try:
        assert node.trigger_configure() == TransitionCallbackReturn.FAILURE
        assert node.memory is None and not node.active  # nothing half-open
    finally:
        node.destroy_node()


def test_yaml_integer_for_a_float_parameter_is_accepted(ros, memory):
    from rclpy.parameter import Parameter

    node = MergerNode(memory=memory, parameter_overrides=[Parameter("stoa.threshold", value=1)])
    try:
        assert node.trigger_configure() == OK
        assert node.cfg.stoa.threshold == 1.0 and isinstance(node.cfg.stoa.threshold, float)
    finally:
        node.destroy_node()


def test_namespace_applies_to_relative_names(ros, memory):
    node = CaptureNode(memory=memory, namespace="robot7")
    try:
        assert node.trigger_configure() == OK
        assert _wait_for(lambda: "/robot7/keyframes" in _topics(ros))
        assert node.resolve_topic_name(node.cfg.image_topic) == "/robot7/camera/image_raw/compressed"
    finally:
        node.destroy_node()


def test_navigator_starts_without_nav2_and_offers_go_to(ros):
    from vlkng_msgs.action import GoTo

    from rclpy.parameter import Parameter

    # a navigation type that is not installed (as nav2_msgs on a machine without Nav2): the node
    # still starts, says so, and offers go_to
    node = NavigatorNode(parameter_overrides=[Parameter("nav_action_type", value="no_nav2_msgs/action/NavigateToPose")])
    try:
        assert node.nav_client is None and "no_nav2_msgs" in node.nav_error
        assert _wait_for(lambda: "/go_to/_action/feedback" in _topics(ros))
        assert import_interface("vlkng_msgs/action/GoTo") is GoTo
        with pytest.raises(ValueError, match="not installed"):
            import_interface("no_nav2_msgs/action/NavigateToPose")
    finally:
        node.destroy_node()


@pytest.mark.parametrize("utterance,kind,text", [
    ("take me to the coffee machine", "goto", "the coffee machine"),
    ("Hey robot, go to the kitchen please.", "goto", "the kitchen"),
    ("Could you navigate to my red backpack?", "goto", "my red backpack"),
    ("where is my backpack?", "ask", "where is my backpack?"),
    ("What was next to the red sofa", "ask", "What was next to the red sofa?"),
    ("stop", "stop", ""),
    ("cancel that", "stop", ""),
    ("   ", "none", ""),
])
def test_voice_intents(utterance, kind, text):
    intent = parse_intent(utterance)
    assert (intent.kind, intent.text) == (kind, text)


def test_goto_query_becomes_a_question():
    assert question_for("the coffee machine") == "Where is the coffee machine?"
    assert question_for("where did I see a kettle?") == "where did I see a kettle?"
