"""`vlkng run`: every vlkng node in one process over real DDS (what `ros2 launch` starts on a robot)."""

from __future__ import annotations

import argparse
import logging
import threading
import time
from pathlib import Path

from ..core.config import VlkngConfig
from ._common import parse_set_args

log = logging.getLogger("vlkng.run")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the node suite (capture, chunks, STOA, /ask, go_to) in one process",
                       description="Runs all vlkng nodes in one process with a multi-threaded executor, "
                                   "sharing one memory. Parameters come from a ROS 2 parameters file.")
    p.add_argument("--params", metavar="YAML", default=None,
                   help="ROS 2 parameters file (default: config/vlkng.yaml if it exists)")
    p.add_argument("--memory", metavar="DIR", required=True, help="memory directory")
    p.add_argument("--namespace", metavar="NS", default="", help="ROS namespace for every node")
    p.add_argument("--tour-id", default="", help="tour id of what is captured (default: from --tour-dir, "
                                                 "else a UTC date-time)")
    p.add_argument("--tour-dir", default="", help="tour folder whose annotations feed simulated perception")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[],
                   help="override one parameter for every node, e.g. --set perception.noise=0 (repeatable)")
    p.add_argument("--web", action="store_true", help="also serve the tablet web app (web.host, web.port; "
                                                      "access token printed once when generated)")
    p.add_argument("--use-sim-time", action="store_true", help="follow /clock (with vlkng replay)")
    p.add_argument("--exit-after-idle", type=float, default=0.0, metavar="S",
                   help="exit once no image arrived for S seconds and all work is merged (batch use)")
    p.set_defaults(func=run)


CONFIG_NAMES = {name for name, _, _ in VlkngConfig().iter_parameters()}


def _yaml_value(text: str) -> object:
    """'1.5' -> 1.5, 'true' -> True, 'abc' -> 'abc' (as a ROS -p value would be read)."""
    import yaml

    value = yaml.safe_load(text) if text else ""
    return value if isinstance(value, (bool, int, float, str)) else text


def default_params() -> str | None:
    candidate = Path(__file__).resolve().parents[2] / "config" / "vlkng.yaml"
    return str(candidate) if candidate.is_file() else None


def run(args: argparse.Namespace) -> int:
    from ..ros_env import ensure_ros_env

    ensure_ros_env()
    import rclpy

    from ..nodes.suite import make_suite, ros_args, spin_suite

    params = args.params or default_params()
    if params and not Path(params).is_file():
        raise FileNotFoundError(f"parameters file {params} does not exist")
    ros = ros_args(params, args.use_sim_time)
    set_params = {name: _yaml_value(value) for name, value in parse_set_args(args.set).items()}
    if args.namespace:
        ros += ["-r", f"__ns:=/{args.namespace.strip('/')}"]
    overrides: dict[str, object] = dict(set_params)  # every node (beats the parameters file)
    from ..core.stores.frame_store import validate_tour_id
    from ..core.tour_identity import derive_tour_id

    tour_id = args.tour_id or (derive_tour_id(Path(args.tour_dir).resolve().name) if args.tour_dir else "")
    if tour_id:
        validate_tour_id(tour_id)  # names are checked before anything starts
        overrides["tour_id"] = tour_id
    if args.tour_dir:
        overrides["tour_dir"] = str(Path(args.tour_dir).resolve())
    rclpy.init(args=ros)
    suite = make_suite(args.memory, params, node_overrides=overrides, config_overrides={k: v for k, v in set_params.items() if k in CONFIG_NAMES},
                       web=args.web)
    try:
        suite.start()
        log.info("running: memory %s, params %s; Ctrl-C to stop", args.memory, params or "(defaults)")
        if args.exit_after_idle > 0:
            threading.Thread(target=_exit_when_idle, args=(suite, args.exit_after_idle), daemon=True).start()
        spin_suite(suite)
    finally:
        suite.destroy()
        rclpy.try_shutdown()
    m = suite.merger
    stats = suite.capture.stats
    log.info("stopped: %d keyframes captured, %d chunks perceived, %d merged",
             stats["keyframes"], suite.chunk_builder.chunks_published, m.merged)
    if stats["keyframes"] and stats["keyframes_without_pose"] == stats["keyframes"]:
        log.warning("NO GEOMETRY: none of the %d keyframes had a pose (capture.pose_source %s, pose_topic "
                    "%r): objects have no positions and answers no goal poses; fix the pose source (live keyframes "
                    "keep no pose; `vlkng build` of a recorded bag re-tags them)", stats["keyframes"],
                    suite.capture.cfg.capture.pose_source, suite.capture.cfg.pose_topic)
    return 0


KEYFRAME_WAIT_S = 5.0  # --exit-after-idle: how long the last keyframes may go without one arriving


def _exit_when_idle(suite, idle_s: float) -> None:
    import rclpy

    last_count, last_change = -1, time.monotonic()
    while rclpy.ok():
        time.sleep(0.5)
        received = suite.capture.stats["received"]
        if received != last_count:
            last_count, last_change = received, time.monotonic()
            continue
        if time.monotonic() - last_change < idle_s or received == 0:
            continue
        suite.capture.flush_pending()
        # the keyframes just flushed travel over DDS: flushing the chunker before they arrive
        # would cut the tail into two chunks (live must make the chunks offline makes)
        # (a starved machine delivers them slowly: the wait lasts while they keep coming)
        got, deadline = -1, 0.0
        while suite.chunk_builder.keyframes_received < suite.capture.stats["keyframes"] and rclpy.ok():
            if suite.chunk_builder.keyframes_received != got:
                got, deadline = suite.chunk_builder.keyframes_received, time.monotonic() + KEYFRAME_WAIT_S
            elif time.monotonic() > deadline:
                log.warning("%d keyframe(s) published were not received in %.0f s; chunking without them",
                            suite.capture.stats["keyframes"] - got, KEYFRAME_WAIT_S)
                break
            time.sleep(0.05)
        suite.chunk_builder.flush_now()
        if suite.chunk_builder.idle and suite.merger.merge_pending() == 0:
            log.info("idle for %.0f s and everything merged: exiting", idle_s)
            rclpy.try_shutdown()
            return
