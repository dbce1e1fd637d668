#!/usr/bin/env python3
"""Live capture throughput: a generated tour replayed over real DDS at 1x, 2x, 4x into the nodes.

For each rate, a fresh memory and a fresh rclpy context: the capture node (or, with ``--suite``,
every node in one process as ``vlkng run`` starts them: the chunk builder perceiving with the
tour's annotations, the merger, the ask server) spins in a multi-threaded executor while
``vlkng replay --rate R`` publishes the tour's bag from a separate process (images 5 fps, /tf 30 Hz,
/odom 10 Hz, /pose 4 Hz, /tf_static, /clock). Printed per rate:

  images published / received by the capture node, keyframes kept (and the offline build's count
  for the same tour and pose source: what live capture must reproduce), frames that fell back from
  TF to another source, and the capture node's callback time in this process (ms per callback:
  images, transforms, /pose + /odom; p50 / p95 / max and the total) and the time it took to
  process each frame that passed the stride gate (decode, select, store: ``frame``).

    python bench/bench_capture_live.py [--seed 11] [--minutes 0.75] [--rates 1 2 4] [--suite]

Poses come from TF over DDS (``tf2_msgs`` from the test-only interface package, built as the
tests build it); where it cannot be built, from /pose.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))


class Timings:
    """Wall time of each callback, by kind (wrapped around the node's bound methods)."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.lock = threading.Lock()

    def wrap(self, kind: str, fn):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = (time.perf_counter() - t0) * 1e3
                with self.lock:
                    self.ms[kind].append(dt)
        return timed

    def row(self, kind: str) -> str:
        xs = sorted(self.ms.get(kind, []))
        if not xs:
            return f"{kind:>10}: -"
        p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
        return (f"{kind:>10}: n={len(xs):5d}  p50 {statistics.median(xs):7.2f}  p95 {p95:7.2f}  "
                f"max {xs[-1]:7.1f}  total {sum(xs) / 1e3:6.2f} s")


def instrument(capture, timings: Timings) -> None:
    """Time the capture node's callbacks (before configure: subscriptions bind these attributes;
    the TF subscriptions call ``tf._on_tf`` through a lambda, so that one is wrapped after)."""
    for name, kind in (("_on_image", "image"), ("_on_pose", "pose/odom"), ("_on_odom", "pose/odom"),
                       ("_on_timer", "timer"), ("_process", "frame")):
        if hasattr(capture, name):  # _on_timer: before the worker thread took the processing over
            setattr(capture, name, timings.wrap(kind, getattr(capture, name)))


def offline_keyframes(tour: Path, workdir: Path, source: str) -> int:
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.pipeline import build_tour

    cfg = VlkngConfig()
    cfg.capture.pose_source = source
    cfg.embeddings.text_backend = "hashing"
    mem_dir = workdir / f"offline-{source}"
    shutil.rmtree(mem_dir, ignore_errors=True)
    with Memory.open(mem_dir, cfg) as mem:
        build_tour(tour, mem, cfg, progress=False)
        return mem.graph.count_keyframes()


def run_rate(tour: Path, workdir: Path, rate: float, source: str, suite_mode: bool, domain: int,
             stress: int = 0) -> dict:
    import rclpy
    from rclpy.executors import MultiThreadedExecutor

    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.nodes.suite import make_suite

    try:
        from vlkng_ros.nodes.suite import SuiteExecutors
    except ImportError:  # an older checkout (for before/after numbers)
        SuiteExecutors = None

    rclpy.init(args=["--ros-args", "-p", f"capture.pose_source:={source}"], domain_id=domain)
    mem_dir = workdir / f"live-{rate:g}x"
    shutil.rmtree(mem_dir, ignore_errors=True)
    timings = Timings()
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    memory = Memory.open(mem_dir, cfg)
    overrides = {"tour_id": tour.name, "tour_dir": str(tour), "embeddings.text_backend": "hashing",
                 "capture.pose_source": source, "flush_after_s": 1.5}
    suite = make_suite(mem_dir, None, node_overrides=overrides, memory=memory,
                       config_overrides={"embeddings.text_backend": "hashing"})
    capture = suite.capture
    instrument(capture, timings)
    if suite_mode and SuiteExecutors is not None:  # as vlkng run / the launch file spin it
        executor = SuiteExecutors(suite, 8).start()
    elif suite_mode:  # a checkout from before SuiteExecutors: one executor for every node
        executor = MultiThreadedExecutor(num_threads=8)
        for node in suite.nodes:
            executor.add_node(node)
        threading.Thread(target=executor.spin, daemon=True).start()
    else:
        executor = MultiThreadedExecutor(num_threads=8)
        executor.add_node(capture)
        threading.Thread(target=executor.spin, daemon=True).start()
    try:
        if suite_mode:
            suite.start()
        else:
            from vlkng_ros.nodes.common import autostart
            assert autostart(capture), "capture did not start"
        if capture.tf is not None and hasattr(capture.tf, "_on_tf"):
            capture.tf._on_tf = timings.wrap("tf", capture.tf._on_tf)
        env = {**os.environ, "ROS_DOMAIN_ID": str(domain)}
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(stress)]
        try:
            t0 = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "vlkng_ros.cli", "replay", str(tour), "--rate",
                                   f"{rate:g}", "--wait-for-subscribers", "60"],
                                  env=env, cwd=ROOT, capture_output=True, text=True)
            wall = time.monotonic() - t0
        finally:
            for hog in hogs:  # only the processes started here, by their handles
                hog.kill()
                hog.wait()
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-2000:])
        published = 0
        for part in proc.stderr.split("(")[-1].split(","):
            if "image" in part:
                published = int(part.split(":")[1].strip(" )\n"))
        deadline = time.monotonic() + 15
        while capture._pending and time.monotonic() < deadline:
            time.sleep(0.05)
        capture.flush_pending()
        stats = dict(capture.stats)
    finally:
        executor.shutdown()
        suite.destroy()
        rclpy.shutdown()
    return {"rate": rate, "published": published, "stats": stats, "timings": timings, "wall": wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--minutes", type=float, default=0.75)
    ap.add_argument("--rates", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    ap.add_argument("--suite", action="store_true", help="every node in the process (as vlkng run), not capture alone")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/vlkng-bench-capture"))
    ap.add_argument("--source", default="auto", help="the capture node's capture.pose_source (auto: what a robot runs)")
    ap.add_argument("--stress", type=int, default=0, metavar="N",
                    help="N busy-loop processes during each replay (a saturated CPU, as on a loaded robot)")
    ap.add_argument("--domain", type=int, default=90 + int(os.environ.get("VLKNG_TEST_DOMAIN_OFFSET", "0")))
    args = ap.parse_args()

    from helpers import build_test_interfaces
    from vlkng_ros.eval.sim.generate import generate_tour

    why = build_test_interfaces()
    source = "pose" if why else "tf"
    if why:
        print(f"no tf2_msgs ({why}): poses from /pose")
    args.workdir.mkdir(parents=True, exist_ok=True)
    tour = args.workdir / f"tour-{args.seed}-{args.minutes:g}"
    if not (tour / "world.json").is_file():
        shutil.rmtree(tour, ignore_errors=True)
        generate_tour(tour, minutes=args.minutes, seed=args.seed, log_progress=False)
    offline = offline_keyframes(tour, args.workdir, source)
    print(f"tour seed {args.seed}, {args.minutes:g} min, live poses {args.source}, offline {source}, "
          f"{'suite' if args.suite else 'capture node alone'}, {args.stress} busy processes; offline build: {offline} keyframes; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for rate in args.rates:
        r = run_rate(tour, args.workdir, rate, args.source if not why else "pose", args.suite, args.domain,
                     args.stress)
        s = r["stats"]
        print(f"\n{rate:g}x: images published {r['published']}, received {s.get('received', 0)}, "
              f"keyframes kept {s.get('keyframes', 0)} (offline {offline}), decoded {s.get('decoded', 0)}, "
              f"TF late {s.get('tf_late', 0)}, without pose {s.get('keyframes_without_pose', 0)}; "
              f"replay {r['wall']:.1f} s")
        for kind in ("image", "tf", "pose/odom", "timer", "frame"):
            print("   " + r["timings"].row(kind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
