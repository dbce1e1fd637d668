"""Everything ``launch/vlkng.launch.py`` decides, as plain Python (no ``launch`` import).

``launch``/``launch_ros`` exist only on a robot (not on PyPI), so the launch file is a thin shell:
it declares :data:`LAUNCH_ARGUMENTS` and turns each :func:`node_actions` entry into a
``launch_ros.actions.Node``. What those entries say (which executables, in which order the
parameter sources apply, log level, respawn) is tested here; :func:`ros_arguments` gives the
command line launch_ros hands each process, so a test can start real nodes exactly so.

Parameter precedence (later wins, as launch_ros passes them): the params file, then the launch
arguments (``memory_dir``, ``use_sim_time``). The params file's per-node sections are keyed
``/**/<node>:`` so they apply under any namespace.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

NODE_EXECUTABLES = ["vlkng_capture", "vlkng_chunk_builder", "vlkng_merger", "vlkng_ask_server", "vlkng_navigator"]
SUITE_EXECUTABLE = "vlkng_suite"
LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")

# name -> (default, description); a default of None is filled in by the launch file (package paths)
LAUNCH_ARGUMENTS: dict[str, tuple[str | None, str]] = {
    "params_file": (None, "ROS 2 parameters file (config/vlkng.yaml form)"),
    "namespace": ("", "namespace of every node (e.g. robot1)"),
    "use_sim_time": ("false", "follow /clock (replaying a bag)"),
    "memory_dir": (os.path.join("~", ".vlkng", "mem"), "memory directory (overrides the params file's)"),
    "separate_processes": ("false", "one process per node (needs Qdrant and Neo4j servers)"),
    "log_level": ("info", "log level of every node: debug, info, warn, error, fatal"),
    "respawn": ("false", "restart a node process that exits"),
    "respawn_delay": ("2.0", "seconds before a respawn"),
}


@dataclass
class NodeAction:
    """What one ``launch_ros.actions.Node`` gets."""

    executable: str
    parameters: list[Any] = field(default_factory=list)  # params file path(s) and dicts, in order
    ros_arguments: list[str] = field(default_factory=list)
    respawn: bool = False
    respawn_delay: float = 0.0
    output: str = "screen"


def _flag(name: str, value: str) -> bool:
    v = str(value).strip().lower()
    if v in ("true", "1", "yes", "on"):
        return True
    if v in ("false", "0", "no", "off", ""):
        return False
    raise ValueError(f"launch argument {name}:={value!r}: use true or false")


def node_actions(args: dict[str, str]) -> list[NodeAction]:
    """The node processes for these launch argument values (strings, as launch gives them).
    Raises ValueError with a one-line reason on a bad value."""
    values = {k: (args.get(k) if args.get(k) is not None else d) for k, (d, _) in LAUNCH_ARGUMENTS.items()}
    params_file = values["params_file"]
    if not params_file:
        raise ValueError("launch argument params_file is empty")
    if not os.path.isfile(os.path.expanduser(params_file)):
        raise ValueError(f"launch argument params_file:={params_file}: no such file")
    level = str(values["log_level"]).strip().lower()
    if level not in LOG_LEVELS:
        raise ValueError(f"launch argument log_level:={values['log_level']!r}: use one of {', '.join(LOG_LEVELS)}")
    try:
        delay = float(values["respawn_delay"])
    except ValueError:
        raise ValueError(f"launch argument respawn_delay:={values['respawn_delay']!r}: not a number") from None
    overrides = {"use_sim_time": _flag("use_sim_time", values["use_sim_time"]),
                 "memory_dir": os.path.expanduser(str(values["memory_dir"]))}
    respawn = _flag("respawn", values["respawn"])
    common = dict(ros_arguments=["--log-level", level], respawn=respawn, respawn_delay=delay if respawn else 0.0)
    path = os.path.expanduser(params_file)
    if _flag("separate_processes", values["separate_processes"]):
        return [NodeAction(name, [path, dict(overrides)], **common) for name in NODE_EXECUTABLES]
    # one process, one memory (Qdrant's local mode allows one client per folder); it reads the
    # file itself too (the CLI's config) and takes memory_dir from its parameters
    return [NodeAction(SUITE_EXECUTABLE, [path, {**overrides, "params_file": path}], **common)]


def ros_arguments(action: NodeAction, namespace: str = "", param_files: list[str] | None = None) -> list[str]:
    """The ``--ros-args`` command line launch_ros gives the process: the namespace remap, the
    params files (``param_files``: the action's dicts written out as files, in order), and the
    action's own ROS arguments."""
    out = ["--ros-args"]
    if namespace:
        out += ["-r", f"__ns:=/{namespace.strip('/')}"]
    for p in param_files if param_files is not None else [p for p in action.parameters if isinstance(p, str)]:
        out += ["--params-file", p]
    return out + list(action.ros_arguments)


def overrides_yaml(overrides: dict[str, Any]) -> str:
    """A dict of parameters as the params file launch_ros writes for it (every node: ``/**``)."""
    import yaml

    return yaml.safe_dump({"/**": {"ros__parameters": overrides}}, sort_keys=True)
