"""Session-wide fixtures: one generated tour and one memory built from it, shared (read-only)
by the test modules that need a realistic memory, so the suite builds it once."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def sim_home(tmp_path_factory) -> Path:
    """A 1.2-minute generated tour (seed 5) with annotations, questions and world.json."""
    from vlkng_ros.eval.sim import generate_tour

    out = tmp_path_factory.mktemp("shared") / "home"
    generate_tour(out, minutes=1.2, seed=5, log_progress=False)
    return out


@pytest.fixture(scope="session")
def built_home(sim_home, tmp_path_factory) -> Path:
    """The memory directory built from ``sim_home`` with the default configuration.
    Treat it as read-only (copy it to modify)."""
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.pipeline import build_tour

    mem_dir = tmp_path_factory.mktemp("shared") / "home-mem"
    cfg = VlkngConfig()
    with Memory.open(mem_dir, cfg) as mem:
        build_tour(sim_home, mem, cfg, progress=False)
    return mem_dir


# A "ROS test" (pytest -m ros: what `make test ROS_DISTRO=jazzy` and CI run on the second distro)
# is a module that imports rclpy, a message package or the ROS side of vlkng_ros, or that says
# `pytestmark = pytest.mark.ros` (e.g. one that only starts `vlkng run` in a subprocess).
_ROS_IMPORT = re.compile(
    r"^\s*(?:from|import)\s+(?:rclpy|vlkng_msgs|\w+_(?:msgs|srvs|interfaces)"
    r"|vlkng_ros\.(?:nodes|conversions|ros_env))\b|pytest\.mark\.ros\b", re.M)


def pytest_collection_modifyitems(config, items):
    seen: dict[str, bool] = {}
    for item in items:
        path = str(item.fspath)
        if path not in seen:
            try:
                seen[path] = bool(_ROS_IMPORT.search(Path(path).read_text(encoding="utf-8")))
            except OSError:
                seen[path] = False
        if seen[path]:
            item.add_marker(pytest.mark.ros)
