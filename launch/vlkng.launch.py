"""ros2 launch vlkng_ros vlkng.launch.py params_file:=... namespace:=... use_sim_time:=... memory_dir:=...

Starts the vlkng node suite. By default all nodes run in ONE process (``vlkng_suite``), sharing
one memory: Qdrant's embedded local mode allows one client per folder. With a Qdrant server
(``stores.qdrant_url``) and Neo4j (``stores.graph_backend: neo4j``) the nodes can run as separate
processes: ``separate_processes:=true``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node, PushRosNamespace

NODES = ["vlkng_capture", "vlkng_chunk_builder", "vlkng_merger", "vlkng_ask_server", "vlkng_navigator"]


def generate_launch_description() -> LaunchDescription:
    default_params = os.path.join(get_package_share_directory("vlkng_ros"), "config", "vlkng.yaml")
    params_file = LaunchConfiguration("params_file")
    memory_dir = LaunchConfiguration("memory_dir")
    use_sim_time = LaunchConfiguration("use_sim_time")
    separate = LaunchConfiguration("separate_processes")
    common = [params_file, {"use_sim_time": use_sim_time, "memory_dir": memory_dir}]

    one_process = Node(package="vlkng_ros", executable="vlkng_suite", output="screen",
                       parameters=[*common, {"params_file": params_file}],
                       condition=UnlessCondition(separate))
    per_node = [Node(package="vlkng_ros", executable=name, output="screen", parameters=common,
                     condition=IfCondition(separate)) for name in NODES]
    return LaunchDescription([
        DeclareLaunchArgument("params_file", default_value=default_params,
                              description="ROS 2 parameters file (config/vlkng.yaml form)"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of every node"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="follow /clock"),
        DeclareLaunchArgument("memory_dir", default_value=os.path.expanduser("~/.vlkng/mem"),
                              description="memory directory"),
        DeclareLaunchArgument("separate_processes", default_value="false",
                              description="one process per node (needs Qdrant/Neo4j servers)"),
        GroupAction([PushRosNamespace(LaunchConfiguration("namespace")), one_process, *per_node]),
    ])
