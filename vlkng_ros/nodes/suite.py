"""All vlkng nodes in one process, sharing one Memory (qdrant local mode: one client per folder).

Used by ``vlkng run`` and by the ``vlkng_suite`` executable that the launch file starts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rclpy
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

from ..core.config import load_config
from ..core.memory import Memory
from ..core.perception.base import Perceiver
from .ask_server import AskServerNode
from .capture import CaptureNode
from .chunk_builder import ChunkBuilderNode
from .common import autostart, spin_until_shutdown
from .merger import MergerNode
from .navigator import NavigatorNode


@dataclass
class Suite:
    memory: Memory
    capture: CaptureNode
    chunk_builder: ChunkBuilderNode
    merger: MergerNode
    ask: AskServerNode
    navigator: NavigatorNode
    extra: list[Node] = field(default_factory=list)

    @property
    def nodes(self) -> list[Node]:
        return [self.capture, self.chunk_builder, self.merger, self.ask, self.navigator, *self.extra]

    def start(self) -> None:
        """Configure and activate the lifecycle nodes (merger before capture: resume first; the
        web app after the ask server, whose engine it shares)."""
        for node in (self.merger, self.ask, *self.extra, self.navigator, self.chunk_builder, self.capture):
            if not autostart(node):
                raise RuntimeError(f"{node.get_name()} failed to start (see the log above)")

    def destroy(self) -> None:
        for node in reversed(self.nodes):
            node.destroy_node()
        self.memory.close()


def make_suite(memory_dir: str | Path, params_file: str | None = None, namespace: str = "",
               node_overrides: dict[str, Any] | None = None, perceiver: Perceiver | None = None,
               memory: Memory | None = None, config_overrides: dict[str, Any] | None = None,
               web: bool = False) -> Suite:
    """Create every node (rclpy must be initialised; parameters come from the init args).

    ``node_overrides`` are parameter overrides applied to every node (``tour_id``, ...)."""
    from rclpy.parameter import Parameter

    cfg = load_config(params_file, config_overrides)
    memory = memory or Memory.open(memory_dir, cfg)
    # parameter_overrides win over the parameters file; a node ignores names it does not declare
    kw: dict[str, Any] = {"namespace": namespace} if namespace else {}
    if node_overrides:
        kw["parameter_overrides"] = [Parameter(k, value=v) for k, v in node_overrides.items()]
    suite = Suite(memory,
                  CaptureNode(memory=memory, **kw),
                  ChunkBuilderNode(memory=memory, perceiver=perceiver, **kw),
                  MergerNode(memory=memory, **kw),
                  AskServerNode(memory=memory, **kw),
                  NavigatorNode(**kw))
    if web:  # the tablet page: shares the ask server's warm engine and the capture counters
        from .web import WebNode

        suite.extra.append(WebNode(memory=memory, engine_source=lambda: suite.ask.engine,
                                   frames_received=lambda: suite.capture.stats["received"],
                                   chunks_failed=lambda: suite.chunk_builder.chunks_failed, **kw))
    return suite


def ros_args(params_file: str | None, use_sim_time: bool) -> list[str]:
    args = ["--ros-args"]
    if params_file:
        args += ["--params-file", str(params_file)]
    if use_sim_time:
        args += ["-p", "use_sim_time:=true"]
    return args


class SuiteExecutors:
    """The capture node on an executor (and thread) of its own, every other node on a
    multi-threaded one. The capture node takes in the high-rate topics (images, /tf, /odom); a
    Python executor rebuilds its wait set from every entity of its nodes on each wake-up, so one
    executor for the whole suite (~150 services, clients, timers) paid that for every transform.
    ``extra`` nodes (tests, tools) join the multi-threaded one."""

    def __init__(self, suite: Suite, threads: int | None = None, extra: tuple[Node, ...] = ()) -> None:
        from rclpy.executors import SingleThreadedExecutor

        self.capture = SingleThreadedExecutor(context=suite.capture.context)
        self.capture.add_node(suite.capture)
        self.main = MultiThreadedExecutor(num_threads=threads, context=suite.capture.context)
        for node in [n for n in suite.nodes if n is not suite.capture] + list(extra):
            self.main.add_node(node)
        self._threads: list[threading.Thread] = []

    def start(self) -> "SuiteExecutors":
        """Spin both in background threads."""
        for executor, name in ((self.capture, "vlkng_capture_executor"), (self.main, "vlkng_executor")):
            thread = threading.Thread(target=spin_until_shutdown, args=(executor,), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def spin(self) -> None:
        """Spin the capture executor in a thread and the rest in this one until shutdown."""
        thread = threading.Thread(target=spin_until_shutdown, args=(self.capture,), name="vlkng_capture_executor",
                                  daemon=True)
        thread.start()
        self._threads.append(thread)
        spin_until_shutdown(self.main)

    def shutdown(self) -> None:
        for executor in (self.main, self.capture):
            executor.shutdown()
        for thread in self._threads:
            thread.join(timeout=10)


def spin_suite(suite: Suite, threads: int | None = None) -> None:
    executors = SuiteExecutors(suite, threads)
    try:
        executors.spin()
    finally:
        # a go_to still driving holds an executor thread until Nav2 answers (nav_timeout_s): the
        # navigator's drive loop ends, cancelling its Nav2 goal, once the node is inactive
        suite.navigator.active = False
        executors.shutdown()


def main(args: list[str] | None = None) -> int:
    """Entry point of the ``vlkng_suite`` executable (launch file): params from --ros-args."""
    rclpy.init(args=args)
    probe = Node("vlkng_suite_params")
    probe.declare_parameter("memory_dir", "mem")
    probe.declare_parameter("params_file", "")
    memory_dir = probe.get_parameter("memory_dir").value
    params_file = probe.get_parameter("params_file").value or None
    probe.destroy_node()
    suite = make_suite(memory_dir, params_file, namespace="")
    try:
        suite.start()
        spin_suite(suite)
    finally:
        suite.destroy()
        rclpy.try_shutdown()
    return 0
