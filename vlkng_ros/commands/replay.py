"""`vlkng replay TOUR`: publish a tour's bag as a live robot would (images, /pose, camera_info, /clock).

Messages are published as recorded (serialized bytes, so stamps and content are exactly the
bag's) at the recorded pace times ``--rate``, on relative topic names so ``--namespace`` works.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

log = logging.getLogger("vlkng.replay")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="publish a tour's bag in real time x rate (with /clock)",
                       description="Publishes a tour's rosbag2 (images, pose, camera_info) with the "
                                   "recorded stamps, paced by the recorded times / rate, plus /clock.")
    p.add_argument("tour", help="tour folder (with bag/) or a rosbag2 folder")
    p.add_argument("--rate", type=float, default=1.0, help="speed factor (4 = four times real time)")
    p.add_argument("--namespace", default="", help="publish under this namespace")
    p.add_argument("--no-clock", action="store_true", help="do not publish /clock")
    p.add_argument("--topics", nargs="*", default=None, help="only these recorded topics")
    p.add_argument("--start", type=float, default=0.0, metavar="S", help="skip the first S seconds")
    p.add_argument("--duration", type=float, default=0.0, metavar="S", help="stop after S bag seconds")
    p.add_argument("--wait-for-subscribers", type=float, default=30.0, metavar="S",
                   help="wait up to S seconds for a subscriber of the image topic before starting")
    p.set_defaults(func=replay)


def bag_path(tour: str | Path) -> Path:
    path = Path(tour)
    if (path / "bag").is_dir():
        return path / "bag"
    if (path / "metadata.yaml").is_file():
        return path
    raise FileNotFoundError(f"{path}: neither a tour folder with bag/ nor a rosbag2 folder")


def replay(args: argparse.Namespace) -> int:
    from ..ros_env import ensure_ros_env

    ensure_ros_env()
    import rclpy

    ros = ["--ros-args"] + (["-r", f"__ns:=/{args.namespace.strip('/')}"] if args.namespace else [])
    rclpy.init(args=ros)
    try:
        stats = publish_bag(bag_path(args.tour), args.rate, not args.no_clock, args.topics,
                            args.start, args.duration, args.wait_for_subscribers)
    finally:
        rclpy.try_shutdown()
    log.info("replayed %d messages in %.1f s (%s)", stats["messages"], stats["seconds"],
             ", ".join(f"{t}: {n}" for t, n in sorted(stats["per_topic"].items())))
    return 0


def publish_bag(bag: Path, rate: float = 1.0, clock: bool = True, topics: list[str] | None = None,
                start_s: float = 0.0, duration_s: float = 0.0, wait_s: float = 10.0,
                node_name: str = "vlkng_replay", should_stop=lambda: False) -> dict:
    """Publish ``bag`` with its recorded pacing / ``rate``. rclpy must be initialised."""
    from rclpy.node import Node
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from rosbags.highlevel import AnyReader
    from rosgraph_msgs.msg import Clock

    from ..conversions import time_from_ns
    from ..nodes.navigator import import_interface

    if rate <= 0:
        raise ValueError("--rate must be > 0")
    node = Node(node_name)
    qos = QoSProfile(depth=100)
    stats = {"messages": 0, "per_topic": {}, "seconds": 0.0}
    try:
        with AnyReader([bag]) as reader:
            connections = [c for c in reader.connections if topics is None or c.topic in topics]
            pubs = {}
            skipped: dict[str, str] = {}
            for c in connections:
                # TF is global (tf2_ros uses /tf, /tf_static); the rest follows the namespace
                name = c.topic if c.topic in ("/tf", "/tf_static") else c.topic.lstrip("/")
                if name in pubs or c.topic in skipped:
                    continue
                try:
                    msg_type = import_interface(c.msgtype)
                except ValueError:  # e.g. tf2_msgs without tf2: say so once, replay the rest
                    skipped[c.topic] = c.msgtype
                    continue
                # /tf_static is latched (transient local), as tf2_ros publishes and subscribes it
                pubs[name] = node.create_publisher(msg_type, name, QoSProfile(
                    depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                    reliability=ReliabilityPolicy.RELIABLE) if c.topic == "/tf_static" else qos)
            for topic, msgtype in skipped.items():
                log.warning("not replaying %s: its type %s is not installed here", topic, msgtype)
            connections = [c for c in connections if c.topic not in skipped]
            clock_pub = node.create_publisher(Clock, "/clock", 10) if clock else None
            image_pubs = [p for n, p in pubs.items() if "image" in n] or list(pubs.values())
            deadline = time.monotonic() + wait_s
            if wait_s > 0 and not any(p.get_subscription_count() for p in image_pubs):
                log.info("waiting up to %.0f s for a subscriber of %s (start 'vlkng run' or the suite; "
                         "--wait-for-subscribers 0 starts at once)", wait_s,
                         ", ".join(p.topic_name for p in image_pubs))
            while wait_s > 0 and time.monotonic() < deadline and not any(
                    p.get_subscription_count() for p in image_pubs):
                time.sleep(0.05)
            if wait_s > 0 and not any(p.get_subscription_count() for p in image_pubs):
                log.warning("no subscriber after %.0f s: replaying anyway (nothing may be listening)", wait_s)
            log.info("replaying %s at %gx%s", bag, rate, " with /clock" if clock_pub else "")
            t_first = reader.start_time + int(start_s * 1e9)
            t_last = t_first + int(duration_s * 1e9) if duration_s > 0 else None
            wall0 = time.monotonic()
            last_t = t_first
            for conn, t, raw in reader.messages(connections=connections):
                if should_stop():
                    break
                if t < t_first:
                    continue
                if t_last is not None and t > t_last:
                    break
                if t < last_t:
                    log.warning("bag time jumped back %.3f s on %s: publishing without waiting",
                                (last_t - t) / 1e9, conn.topic)
                last_t = max(last_t, t)
                wait = wall0 + (t - t_first) / 1e9 / rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if clock_pub is not None:
                    clock_pub.publish(Clock(clock=time_from_ns(t)))
                pubs[conn.topic if conn.topic in ("/tf", "/tf_static") else conn.topic.lstrip("/")].publish(bytes(raw))
                stats["messages"] += 1
                stats["per_topic"][conn.topic] = stats["per_topic"].get(conn.topic, 0) + 1
            stats["seconds"] = time.monotonic() - wall0
    finally:
        node.destroy_node()
    return stats
