#!/usr/bin/env bash
# Source ROS 2 and the workspace, then run the given command (default: the launch file).
set -e
. "/opt/ros/${ROS_DISTRO:-jazzy}/setup.bash"
. /ws/install/setup.bash
exec "$@"
