#!/usr/bin/env bash
# Container entry point of the vlkng image.
#   entrypoint.sh CMD...       wait (bounded) for the servers in VLKNG_WAIT_FOR ("host:port ..."),
#                              source ROS 2, the workspace and the venv, then exec CMD
#   entrypoint.sh healthcheck  exit 0 once the vlkng nodes are on the ROS graph
# Paths can be overridden (the tests run it outside the image): VLKNG_ROS_SETUP, VLKNG_WS_SETUP,
# VLKNG_VENV.
set -eo pipefail
ROS_SETUP="${VLKNG_ROS_SETUP:-/opt/ros/${ROS_DISTRO:-jazzy}/setup.bash}"
WS_SETUP="${VLKNG_WS_SETUP:-/ws/install/setup.bash}"
VENV="${VLKNG_VENV:-/opt/vlkng-venv}"
WAIT_TIMEOUT_S="${VLKNG_WAIT_TIMEOUT_S:-120}"

say() { printf '[vlkng entrypoint] %s\n' "$*" >&2; }

# wait_for HOST:PORT: until a TCP connection succeeds or WAIT_TIMEOUT_S has passed in all
wait_for() {
  local host="${1%:*}" port="${1##*:}"
  while ! timeout 2 bash -c ": >/dev/tcp/$host/$port" 2>/dev/null; do
    if [ "$SECONDS" -ge "$WAIT_TIMEOUT_S" ]; then
      say "gave up: $host:$port did not accept connections within ${WAIT_TIMEOUT_S} s"
      return 1
    fi
    sleep 1
  done
  say "$host:$port is up after ${SECONDS} s"
}

source_env() {
  local f
  for f in "$ROS_SETUP" "$WS_SETUP"; do
    if [ ! -f "$f" ]; then say "missing $f: is this the vlkng image?"; exit 2; fi
    # ROS setup scripts read unset variables: no 'set -u' here
    # shellcheck disable=SC1090
    . "$f"
  done
  if [ -x "$VENV/bin/python" ]; then
    export VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH"
  fi
}

if [ "${1:-}" = healthcheck ]; then
  source_env
  nodes="$(timeout 15 ros2 node list --no-daemon --spin-time 5 2>/dev/null || true)"
  grep -q 'vlkng_' <<<"$nodes" || { say "no vlkng node on the ROS graph"; exit 1; }
  exit 0
fi

SECONDS=0
for target in ${VLKNG_WAIT_FOR:-}; do
  wait_for "$target" || exit 3
done
source_env
if [ "$#" -eq 0 ]; then set -- ros2 launch vlkng_ros vlkng.launch.py; fi
exec "$@"
