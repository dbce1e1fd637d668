"""Each vlkng node starts, configures, activates and shuts down cleanly over real rclpy/DDS."""

from __future__ import annotations

import time

import pytest
from helpers import domain_id, wait_until
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
            assert wait_until(lambda: expect_topic in _topics(ros)), f"{expect_topic} never appeared"
        else:
            assert wait_until(lambda: "/ask" in {n for n, _ in ros.get_service_names_and_types()})
        assert node.trigger_deactivate() == OK and not node.active
        assert node.trigger_cleanup() == OK and node.memory is None
        if expect_topic:  # cleanup destroyed its entities
            assert wait_until(lambda: expect_topic not in _topics(ros))
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
        assert wait_until(lambda: "/robot7/keyframes" in _topics(ros))
        assert node.resolve_topic_name(node.cfg.image_topic) == "/robot7/camera/image_raw/compressed"
    finally:
        node.destroy_node()


class _Spun:
    """Nodes spun by a multi-threaded executor in a background thread (for the test's duration)."""

    def __init__(self, *nodes) -> None:
        import threading

        from rclpy.executors import MultiThreadedExecutor

        self.executor = MultiThreadedExecutor(num_threads=4)
        for node in nodes:
            self.executor.add_node(node)
        threading.Thread(target=self.executor.spin, daemon=True).start()

    def close(self) -> None:
        self.executor.shutdown()


def _call(client, request, timeout_s: float = 30.0):
    import threading

    assert client.wait_for_service(timeout_sec=timeout_s), client.srv_name
    done = threading.Event()
    future = client.call_async(request)
    future.add_done_callback(lambda _f: done.set())
    assert done.wait(timeout_s), f"{client.srv_name} did not answer"
    return future.result()


def _goto(client, query: str):
    import threading

    from vlkng_msgs.action import GoTo

    def wait(future):
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        assert done.wait(60)
        return future.result()

    assert client.wait_for_server(timeout_sec=20)
    handle = wait(client.send_goal_async(GoTo.Goal(query=query)))
    if not handle.accepted:
        return None
    return wait(handle.get_result_async()).result


class _AskStandIn(Node):
    """An ask server that always found the thing, with a goal pose (what the real one answers)."""

    def __init__(self, name: str) -> None:
        from vlkng_msgs.srv import Ask

        super().__init__("ask_stand_in")
        self.create_service(Ask, name, self._ask)

    def _ask(self, request, response):
        response.success, response.found, response.answer = True, True, "by the window"
        response.has_goal = True
        response.goal.header.frame_id = "map"
        response.goal.pose.position.x, response.goal.pose.orientation.w = 1.5, 1.0
        return response


def test_missing_nav2_is_one_info_line_at_start_not_an_error_per_run(ros):
    """A robot without Nav2 (its action type not installed): configure says so once, at INFO;
    every go_to then answers NAV2_UNAVAILABLE without logging an error. The log is read where an
    operator reads it, /rosout over DDS (captured stderr is buffered differently per distro)."""
    from rcl_interfaces.msg import Log
    from rclpy.action import ActionClient
    from rclpy.logging import LoggingSeverity
    from rclpy.parameter import Parameter
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from vlkng_msgs.action import GoTo

    from vlkng_ros.nodes.common import autostart

    node = NavigatorNode(namespace="nonav", parameter_overrides=[
        Parameter("nav_action_type", value="no_nav2_msgs/action/NavigateToPose"),
        Parameter("ask_service", value="/nonav_ask")])
    # the process-wide default level is whatever an earlier test's --ros-args --log-level left
    node.get_logger().set_level(LoggingSeverity.INFO)
    asker, client = _AskStandIn("/nonav_ask"), Node("goto_client")
    logged: list[Log] = []
    client.create_subscription(Log, "/rosout", logged.append, QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    spun = _Spun(node, asker, client)
    try:
        assert wait_until(lambda: any(p.node_name == "goto_client"
                                     for p in node.get_subscriptions_info_by_topic("/rosout")))
        assert autostart(node)
        assert node.nav_client is None and "no_nav2_msgs" in node.nav_error
        assert wait_until(lambda: "/nonav/go_to/_action/feedback" in _topics(ros))
        assert import_interface("vlkng_msgs/action/GoTo") is GoTo
        with pytest.raises(ValueError, match="not installed"):
            import_interface("no_nav2_msgs/action/NavigateToPose")
        go_to = ActionClient(client, GoTo, "/nonav/go_to")
        for _ in range(2):  # found, with a goal: then there is no Nav2 to drive there
            result = _goto(go_to, "the kettle")
            assert result.error_code == GoTo.Result.NAV2_UNAVAILABLE and "no_nav2_msgs" in result.error_msg
        assert node.trigger_deactivate() == OK and node.trigger_cleanup() == OK
        assert autostart(node)  # configured again: no second line
        time.sleep(1.0)  # the last lines reach the subscriber
    finally:
        spun.close()
        for n in (node, asker, client):
            n.destroy_node()
    lines = [(m.level, m.msg) for m in logged if m.name.endswith("vlkng_navigator")]
    said = [(level, msg) for level, msg in lines if "NAV2_UNAVAILABLE (install Nav2" in msg]
    assert len(said) == 1 and said[0][0] == Log.INFO, lines
    assert not [msg for level, msg in lines if level >= Log.WARN], lines


class _SlowNav(Node):
    """A navigation server that drives until it is canceled."""

    def __init__(self, name: str) -> None:
        from rclpy.action import ActionServer, CancelResponse
        from rclpy.callback_groups import ReentrantCallbackGroup
        from vlkng_msgs.action import NavigateToPoseCompat

        super().__init__("slow_nav")
        self.canceled = self.driving = 0
        self.type = NavigateToPoseCompat
        ActionServer(self, NavigateToPoseCompat, name, self._execute, callback_group=ReentrantCallbackGroup(),
                     cancel_callback=lambda _g: CancelResponse.ACCEPT)

    def _execute(self, goal_handle):
        self.driving += 1
        while not goal_handle.is_cancel_requested:
            goal_handle.publish_feedback(self.type.Feedback(distance_remaining=1.0))
            time.sleep(0.05)
        self.canceled += 1
        goal_handle.canceled()
        return self.type.Result()


def test_deactivating_the_navigator_stops_a_running_go_to(ros):
    import threading

    from rclpy.action import ActionClient
    from rclpy.parameter import Parameter
    from vlkng_msgs.action import GoTo

    from vlkng_ros.nodes.common import autostart

    node = NavigatorNode(namespace="stopping", parameter_overrides=[
        Parameter("ask_service", value="/stopping_ask"), Parameter("nav_action_name", value="/stopping_nav"),
        Parameter("nav_action_type", value="vlkng_msgs/action/NavigateToPoseCompat")])
    asker, nav, client = _AskStandIn("/stopping_ask"), _SlowNav("/stopping_nav"), Node("stop_client")
    spun = _Spun(node, asker, nav, client)
    try:
        assert autostart(node)
        go_to = ActionClient(client, GoTo, "/stopping/go_to")
        results: list = []
        runner = threading.Thread(target=lambda: results.append(_goto(go_to, "the kettle")), daemon=True)
        runner.start()
        assert wait_until(lambda: nav.driving == 1, 20), "never navigating"
        assert node.trigger_deactivate() == OK
        runner.join(30)
        assert results and results[0].error_code == GoTo.Result.CANCELED
        assert results[0].error_msg == "the navigator was deactivated"
        assert wait_until(lambda: nav.canceled == 1)  # Nav2's goal was canceled too
    finally:
        spun.close()
        for n in (node, asker, nav, client):
            n.destroy_node()


def test_navigator_is_a_lifecycle_node_a_manager_drives_over_its_services(ros):
    """What nav2_lifecycle_manager does (bond_timeout 0: rclpy has no bond): get_state and
    change_state over DDS: configure -> inactive (go_to offered, goals rejected), activate ->
    active (goals run), deactivate -> inactive, cleanup -> unconfigured (go_to gone)."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState, GetState
    from rclpy.action import ActionClient
    from rclpy.parameter import Parameter
    from vlkng_msgs.action import GoTo

    node = NavigatorNode(namespace="managed", parameter_overrides=[
        Parameter("autostart", value=False), Parameter("ask_timeout_s", value=2.0),
        Parameter("nav_action_type", value="vlkng_msgs/action/NavigateToPoseCompat"),
        Parameter("nav_server_timeout_s", value=0.5)])
    manager = Node("lifecycle_manager_stand_in")
    spun = _Spun(node, manager)
    get_state = manager.create_client(GetState, "/managed/vlkng_navigator/get_state")
    change = manager.create_client(ChangeState, "/managed/vlkng_navigator/change_state")
    go_to = ActionClient(manager, GoTo, "/managed/go_to")

    def state() -> str:
        return _call(get_state, GetState.Request()).current_state.label

    def transition(tid: int) -> bool:
        return _call(change, ChangeState.Request(transition=Transition(id=tid))).success

    try:
        assert state() == "unconfigured"
        assert not go_to.wait_for_server(timeout_sec=1.0)  # nothing offered before configure
        assert transition(Transition.TRANSITION_CONFIGURE) and state() == "inactive"
        assert _goto(go_to, "the kettle") is None  # offered, but an inactive node rejects goals
        assert transition(Transition.TRANSITION_ACTIVATE) and state() == "active"
        result = _goto(go_to, "the kettle")  # accepted and run: no ask server here
        assert result.error_code == GoTo.Result.ASK_FAILED
        assert transition(Transition.TRANSITION_DEACTIVATE) and state() == "inactive"
        assert _goto(go_to, "the kettle") is None
        assert transition(Transition.TRANSITION_CLEANUP) and state() == "unconfigured"
        assert wait_until(lambda: not go_to.server_is_ready())  # cleanup destroyed the server
        assert transition(Transition.TRANSITION_CONFIGURE) and transition(Transition.TRANSITION_ACTIVATE)
        assert state() == "active"
    finally:
        spun.close()
        node.destroy_node()
        manager.destroy_node()


def test_configuring_the_navigator_while_its_executor_spins_leaves_the_executor_alive(ros):
    """A manager configures the navigator while its executor spins (the test above). Each client
    added to the node wakes the executor, whose next wait set counts the client's entities; rclpy's
    ActionClient took its lock only after joining the node (ros2/rclpy#1589), so the executor
    thread could die of AttributeError '_lock' (CI on a loaded machine: the suite answered nothing
    after). Here the executor's look comes at that worst moment, every time."""
    from rclpy.parameter import Parameter

    node = NavigatorNode(namespace="polled", parameter_overrides=[
        Parameter("autostart", value=False),
        Parameter("nav_action_type", value="vlkng_msgs/action/NavigateToPoseCompat")])
    looked_at: list[str] = []
    add = node.add_waitable

    def add_and_look(waitable) -> None:  # the woken executor, before the constructor returned
        add(waitable)
        waitable.get_num_entities()
        looked_at.append(type(waitable).__name__)

    node.add_waitable = add_and_look
    try:
        assert node.trigger_configure() == OK, node.configure_error
        assert looked_at.count("ActionClient") == 2, looked_at  # Nav2's client and go_to's own
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
    # a command sent as the query: "take" is no part of the thing ("take mattress" is no thing)
    assert question_for("Take me to the mattress.") == "Where is the mattress?"
    assert question_for("please go to the kitchen sink") == "Where is the kitchen sink?"


@pytest.mark.parametrize("how", ["stopped", "idle"])
def test_capture_keeps_the_last_view_when_the_stream_ends(ros, memory, how):
    """A live camera whose last moments show something new (sooner after a keyframe than
    min_interval_s): the view ends up in a keyframe when the node is stopped (flush_pending, as
    ``vlkng run`` and teardown do) or when no image came for stream_end_s."""
    import numpy as np
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import CompressedImage

    from vlkng_ros import conversions as conv
    from vlkng_ros.core.images import decode_image, encode_jpeg
    from helpers_views import panorama, shows_red, view

    pano = panorama(red_at_deg=75)
    node = CaptureNode(memory=memory, parameter_overrides=[
        Parameter("stream_end_s", value=0.5 if how == "idle" else 0.0),
        Parameter("camera_info_topic", value="")])
    try:
        assert node.trigger_configure() == OK and node.trigger_activate() == OK
        views = [0.0] * 126 + [40.0] * 9  # 4.2 s parked (keyframes at 0 s, 4 s), then a look left
        for i, yaw in enumerate(views):  # 30 fps, as the executor calls the subscription
            msg = CompressedImage(format="jpeg", data=encode_jpeg(view(pano, yaw), 90))
            msg.header.stamp = conv.time_from_ns(1_800_000_000_000_000_000 + i * 33_333_333)
            node._on_image(msg)
        if how == "stopped":
            node.flush_pending()
        assert wait_until(lambda: node.stats["keyframes"] == 3, 10), node.stats
        kfs = memory.graph.keyframes()
        assert [round((k.stamp_ns - kfs[0].stamp_ns) / 1e9, 1) for k in kfs[:2]] == [0.0, 4.0]
        assert shows_red(decode_image(memory.frames.get(kfs[-1].image_ref)))
        assert not np.any([shows_red(decode_image(memory.frames.get(k.image_ref))) for k in kfs[:2]])
    finally:
        node.destroy_node()


def test_ctrl_c_between_an_executors_check_and_its_wait_is_a_clean_stop():
    """Ctrl-C shuts the context down while an executor is between its "context ok?" check and
    building its next wait set; rclpy then raises RCLError ("the given context is not valid"). The
    suite's spin loop must take that as the stop asked for (the launch test saw `vlkng_suite` exit
    1 with that traceback on a loaded machine), and still raise a fault while the context lives."""
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from vlkng_ros.nodes.common import spin_until_shutdown

    class Racing(SingleThreadedExecutor):
        def __init__(self, context, shut: bool) -> None:
            super().__init__(context=context)
            self.shut = shut

        def spin(self) -> None:
            if self.shut:
                self.context.try_shutdown()  # the signal handler, just after the check
                self.spin_once(timeout_sec=0.01)
            else:
                raise RuntimeError("a fault in a callback")

    ctx = Context()
    rclpy.init(context=ctx, domain_id=DOMAIN_ID)
    node = Node("vlkng_race_probe", context=ctx)
    try:
        with pytest.raises(RuntimeError, match="a fault"):
            spin_until_shutdown(Racing(ctx, shut=False))
        racing = Racing(ctx, shut=True)
        racing.add_node(node)
        spin_until_shutdown(racing)  # returns: no RCLError
        assert not ctx.ok()
    finally:
        node.destroy_node()
        ctx.try_shutdown()
