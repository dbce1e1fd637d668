"""What the launch file decides, without launch: the argument -> parameter logic, the params file
through rclpy's own parsing on real nodes under a namespace, the default params starting the
suite, and lifecycle transitions driven from outside as nav2_lifecycle_manager drives them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import yaml

from helpers import domain_id
from vlkng_ros.launch_logic import (LAUNCH_ARGUMENTS, NODE_EXECUTABLES, SUITE_EXECUTABLE, node_actions,
                                    overrides_yaml, ros_arguments)

REPO = Path(__file__).resolve().parents[1]
PARAMS = REPO / "config" / "vlkng.yaml"
DOMAIN_ID = domain_id(78)


def test_defaults_start_one_suite_with_the_file_then_the_arguments():
    (suite,) = node_actions({"params_file": str(PARAMS)})
    assert suite.executable == SUITE_EXECUTABLE
    file, over = suite.parameters
    assert file == str(PARAMS)  # the file first, the launch arguments after it: they win
    assert over["memory_dir"] == os.path.expanduser("~/.vlkng/mem") and over["use_sim_time"] is False
    assert over["params_file"] == str(PARAMS)
    assert suite.ros_arguments == ["--log-level", "info"] and suite.respawn is False


def test_arguments_become_parameters_log_level_and_respawn(tmp_path):
    acts = node_actions({"params_file": str(PARAMS), "separate_processes": "true", "memory_dir": str(tmp_path),
                         "use_sim_time": "True", "log_level": "DEBUG", "respawn": "true", "respawn_delay": "5"})
    assert [a.executable for a in acts] == NODE_EXECUTABLES
    for a in acts:
        assert a.parameters == [str(PARAMS), {"memory_dir": str(tmp_path), "use_sim_time": True}]
        assert a.ros_arguments == ["--log-level", "debug"] and a.respawn and a.respawn_delay == 5.0
    assert ros_arguments(acts[0], "robot1") == ["--ros-args", "-r", "__ns:=/robot1", "--params-file", str(PARAMS),
                                                "--log-level", "debug"]


@pytest.mark.parametrize("args,message", [
    ({"log_level": "loud"}, "log_level"), ({"respawn": "maybe"}, "respawn"),
    ({"params_file": "/nowhere.yaml"}, "no such file"), ({"respawn_delay": "soon"}, "respawn_delay"),
])
def test_bad_arguments_say_which_and_why(args, message):
    with pytest.raises(ValueError, match=message):
        node_actions({"params_file": str(PARAMS), **args})


def test_the_launch_file_declares_every_argument_and_makes_the_logics_nodes(monkeypatch):
    """launch/vlkng.launch.py run against stand-ins of launch/launch_ros (not installable here)."""
    made: dict[str, list] = {"declared": [], "nodes": [], "ns": []}

    def record(kind):
        def make(*args, **kwargs):
            made[kind].append((args, kwargs))
            return (kind, args, kwargs)
        return make

    class LaunchConfiguration:
        def __init__(self, name):
            self.name = name

        def perform(self, context):
            return context[self.name]

    class OpaqueFunction:
        def __init__(self, function):
            self.function = function

    mods = {
        "ament_index_python.packages": types.SimpleNamespace(get_package_share_directory=lambda _p: str(REPO)),
        "launch": types.SimpleNamespace(LaunchDescription=lambda entities: entities),
        "launch.actions": types.SimpleNamespace(DeclareLaunchArgument=record("declared"), OpaqueFunction=OpaqueFunction,
                                                GroupAction=lambda actions: ("group", actions)),
        "launch.substitutions": types.SimpleNamespace(LaunchConfiguration=LaunchConfiguration),
        "launch_ros.actions": types.SimpleNamespace(Node=record("nodes"), PushRosNamespace=record("ns")),
    }
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    code = compile((REPO / "launch" / "vlkng.launch.py").read_text(), "vlkng.launch.py", "exec")
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - our own launch file
    entities = scope["generate_launch_description"]()
    declared = {a[0]: kw["default_value"] for a, kw in made["declared"]}
    assert set(declared) == set(LAUNCH_ARGUMENTS)
    assert declared["params_file"] == str(REPO / "config" / "vlkng.yaml")
    context = {**declared, "namespace": "robot1", "memory_dir": "/data/mem", "log_level": "warn"}
    entities[-1].function(context)
    (node_args,) = [kw for _, kw in made["nodes"]]
    assert node_args["executable"] == SUITE_EXECUTABLE and node_args["package"] == "vlkng_ros"
    assert node_args["parameters"][1]["memory_dir"] == "/data/mem"
    assert node_args["ros_arguments"] == ["--log-level", "warn"]
    assert made["ns"] == [(("robot1",), {})]


@pytest.fixture
def ros_context():
    import rclpy
    from rclpy.context import Context

    contexts = []

    def make(args):
        ctx = Context()
        rclpy.init(args=args, context=ctx, domain_id=DOMAIN_ID)
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        rclpy.shutdown(context=ctx)


def _params_file(tmp_path, plain_keys: bool = False) -> Path:
    """config/vlkng.yaml with per-node values a test can tell from the defaults."""
    doc = yaml.safe_load(PARAMS.read_text())
    doc["/**"]["ros__parameters"]["chunk_size"] = 6
    doc["/**/vlkng_chunk_builder"]["ros__parameters"]["flush_after_s"] = 7.5
    doc["/**/vlkng_navigator"]["ros__parameters"]["nav_server_timeout_s"] = 9.0
    if plain_keys:  # what the file had before: keys without the namespace wildcard
        doc = {k.replace("/**/", ""): v for k, v in doc.items()}
    out = tmp_path / ("plain.yaml" if plain_keys else "params.yaml")
    out.write_text(yaml.safe_dump(doc))
    return out


def _launched_nodes(ros_context, tmp_path, params: Path):
    """Real nodes given the command line launch_ros gives them (namespace, file, the arguments' file)."""
    from vlkng_ros.nodes.chunk_builder import ChunkBuilderNode
    from vlkng_ros.nodes.navigator import NavigatorNode

    (action,) = node_actions({"params_file": str(params), "memory_dir": str(tmp_path / "launched-mem"),
                              "separate_processes": "true", "log_level": "warn"})[1:2]
    over = tmp_path / "overrides.yaml"
    over.write_text(overrides_yaml(action.parameters[1]))
    ctx = ros_context(ros_arguments(action, "robot1", [str(params), str(over)]))
    return ChunkBuilderNode(context=ctx), NavigatorNode(context=ctx)


def test_params_file_applies_per_node_sections_under_a_namespace(ros_context, tmp_path):
    builder, nav = _launched_nodes(ros_context, tmp_path, _params_file(tmp_path))
    try:
        assert builder.get_fully_qualified_name() == "/robot1/vlkng_chunk_builder"
        value = lambda node, name: node.get_parameter(name).value  # noqa: E731
        assert value(builder, "flush_after_s") == 7.5  # its own /**/vlkng_chunk_builder section
        assert value(nav, "nav_server_timeout_s") == 9.0
        assert value(builder, "chunk_size") == 6  # /** for everyone
        assert value(builder, "memory_dir") == str(tmp_path / "launched-mem")  # the launch argument wins
    finally:
        builder.destroy_node()
        nav.destroy_node()


def test_plain_node_keys_would_not_apply_under_a_namespace(ros_context, tmp_path):
    """Why the shipped file says /**/<node>: rcl matches a plain key to the root namespace only."""
    builder, nav = _launched_nodes(ros_context, tmp_path, _params_file(tmp_path, plain_keys=True))
    try:
        assert builder.get_parameter("flush_after_s").value == 5.0  # the node's default, not 7.5
        assert builder.get_parameter("chunk_size").value == 6
    finally:
        builder.destroy_node()
        nav.destroy_node()


def _suite_process(tmp_path, extra: dict) -> subprocess.Popen:
    """``vlkng_suite`` as the launch file starts it, with the shipped params under /robot1."""
    (action,) = node_actions({"params_file": str(PARAMS), "memory_dir": str(tmp_path / "mem")})
    over = tmp_path / "overrides.yaml"
    over.write_text(overrides_yaml({**action.parameters[1], "embeddings.text_backend": "hashing", **extra}))
    args = ros_arguments(action, "robot1", [str(PARAMS), str(over)])
    env = {**os.environ, "ROS_DOMAIN_ID": str(DOMAIN_ID)}
    return subprocess.Popen([sys.executable, "-c", "import sys; from vlkng_ros.nodes.suite import main; "
                             "sys.exit(main())", *args], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _lifecycle(probe, node: str, transition: int | None = None, timeout_s: float = 300.0) -> str:
    """The node's lifecycle state label, after ``transition`` (lifecycle_msgs) when given: what a
    lifecycle manager calls (``<node>/get_state``, ``<node>/change_state``)."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState, GetState
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=probe.context)
    executor.add_node(probe)

    if transition is not None:
        client = probe.create_client(ChangeState, f"/robot1/{node}/change_state")
        assert client.wait_for_service(timeout_sec=timeout_s), f"no {node}/change_state"
        future = client.call_async(ChangeState.Request(transition=Transition(id=transition)))
        executor.spin_until_future_complete(future, timeout_sec=60)
        assert future.result() is not None and future.result().success, (node, transition)
        probe.destroy_client(client)
    client = probe.create_client(GetState, f"/robot1/{node}/get_state")
    deadline = time.monotonic() + timeout_s
    try:
        if not client.wait_for_service(timeout_sec=timeout_s):
            return "no service"
        while True:  # the suite answers once it spins: after every node's autostart
            future = client.call_async(GetState.Request())
            executor.spin_until_future_complete(future, timeout_sec=10)
            if future.result() is not None:
                return future.result().current_state.label
            if time.monotonic() > deadline:
                return "no answer"
    finally:
        probe.destroy_client(client)
        executor.remove_node(probe)
        executor.shutdown()


def _stop(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return proc.returncode, out


def test_default_params_start_under_a_namespace_and_a_manager_can_drive_them(ros_context, tmp_path):
    """The shipped params (perception auto, no model configured) start every lifecycle node of
    ``vlkng_suite`` under /robot1; then a lifecycle manager's calls (get_state, change_state:
    deactivate, activate) work on them, as nav2_lifecycle_manager makes them (with
    bond_timeout: 0.0 - rclpy has no bond)."""
    from lifecycle_msgs.msg import Transition
    from rclpy.node import Node

    proc = _suite_process(tmp_path, {})
    probe = Node("launch_probe", context=ros_context(["--ros-args"]))
    try:
        # a loaded 2-core machine takes minutes to open a memory and load the lexicon
        for node in ("vlkng_merger", "vlkng_ask", "vlkng_navigator", "vlkng_chunk_builder", "vlkng_capture"):
            assert _lifecycle(probe, node) == "active", node
        assert _lifecycle(probe, "vlkng_merger", Transition.TRANSITION_DEACTIVATE) == "inactive"
        assert _lifecycle(probe, "vlkng_merger", Transition.TRANSITION_ACTIVATE) == "active"
        assert proc.poll() is None
    finally:
        probe.destroy_node()
        code, out = _stop(proc)
    assert code == 0, out[-2000:]
    assert "configure failed" not in out and "/robot1/camera/image_raw/compressed" in out
