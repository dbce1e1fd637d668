"""ros2 launch vlkng_ros vlkng.launch.py [params_file:=...] [namespace:=robot1] [memory_dir:=...]
    [use_sim_time:=true] [separate_processes:=true] [log_level:=debug] [respawn:=true]

Starts the vlkng node suite. By default all nodes run in ONE process (``vlkng_suite``), sharing
one memory: Qdrant's embedded local mode allows one client per folder. With a Qdrant server
(``stores.qdrant_url``) and Neo4j (``stores.graph_backend: neo4j``) the nodes can run as separate
processes: ``separate_processes:=true``. What each argument does is decided by
``vlkng_ros.launch_logic`` (plain Python, tested without launch); this file only declares the
arguments and makes the Node actions it returns.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node, PushRosNamespace

from vlkng_ros.launch_logic import LAUNCH_ARGUMENTS, node_actions


def _nodes(context, *args, **kwargs):
    values = {name: LaunchConfiguration(name).perform(context) for name in LAUNCH_ARGUMENTS}
    actions = [Node(package="vlkng_ros", executable=a.executable, output=a.output, parameters=a.parameters,
                    ros_arguments=a.ros_arguments, respawn=a.respawn, respawn_delay=a.respawn_delay)
               for a in node_actions(values)]
    return [GroupAction([PushRosNamespace(values["namespace"]), *actions])]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory("vlkng_ros")
    defaults = {"params_file": os.path.join(share, "config", "vlkng.yaml")}
    return LaunchDescription([
        *[DeclareLaunchArgument(name, default_value=defaults.get(name, default), description=description)
          for name, (default, description) in LAUNCH_ARGUMENTS.items()],
        OpaqueFunction(function=_nodes),
    ])
