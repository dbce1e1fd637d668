"""Helpers shared by the test modules (import from here, never from another test file)."""

from __future__ import annotations

import os


def domain_id(base: int) -> int:
    """A ROS domain id for one test module: ``base`` plus ``VLKNG_TEST_DOMAIN_OFFSET`` (default 0),
    so several checkouts testing on one machine at once do not see each other's nodes."""
    return base + int(os.environ.get("VLKNG_TEST_DOMAIN_OFFSET", "0"))


# --- test-only interface packages (test/interfaces: tf2_msgs, nav2_msgs) ----------------------
# The venv has no tf2 or Nav2 wheel. These packages carry the documented definitions of
# tf2_msgs/msg/TFMessage and nav2_msgs/action/NavigateToPose (same names and fields, so the types
# match a robot's); colcon builds them once into build/test-interfaces (never into install/, the
# product's install base) and test_interfaces() makes them importable in this process.
TEST_INTERFACES = ("tf2_msgs", "nav2_msgs")


def build_test_interfaces() -> str:
    """Build (when their sources changed) and load the test-only interface packages. Returns ''
    when they are importable, else why not (the caller skips)."""
    import ctypes
    import fcntl
    import hashlib
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    src = root / "test" / "interfaces"
    # one build per ROS distro venv (.venv: Kilted, .venv-jazzy: Jazzy): their libraries differ
    distro = os.environ.get("VLKNG_ROS_DISTRO", "kilted")
    base = root / "build" / ("test-interfaces" if distro == "kilted" else f"test-interfaces-{distro}")
    install = base / "install"
    digest = hashlib.sha1()
    for f in sorted(p for pkg in TEST_INTERFACES for p in (src / pkg).rglob("*") if p.is_file()):
        digest.update(f.name.encode() + f.read_bytes())
    stamp = install / f".built-{digest.hexdigest()[:12]}"
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time (parallel test runs)
        if not stamp.exists():
            venv = Path(os.environ.get("VIRTUAL_ENV") or sys.prefix)
            env = dict(os.environ, AMENT_PREFIX_PATH=str(venv), CMAKE_PREFIX_PATH=str(venv))
            cmd = ["colcon", "--log-base", str(base / "log"), "build", "--base-paths",
                   *(str(src / p) for p in TEST_INTERFACES), "--build-base", str(base / "build"),
                   "--install-base", str(install), "--cmake-args", "-DBUILD_TESTING=OFF",
                   f"-DPython3_EXECUTABLE={sys.executable}"]
            try:
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as e:
                return f"colcon could not build test/interfaces: {e}"
            if out.returncode != 0:
                return f"colcon build of test/interfaces failed: {(out.stdout + out.stderr)[-800:]}"
            for old in install.glob(".built-*"):
                old.unlink()
            stamp.touch()
    pyver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for pkg in TEST_INTERFACES:
        lib = install / pkg / "lib"
        site = str(lib / pyver / "site-packages")
        if site not in sys.path:
            sys.path.insert(0, site)
        # rosidl finds a package's type support libraries on LD_LIBRARY_PATH (read when a type is
        # first used) and the extension modules link them: put them on the path and preload them.
        if str(lib) in os.environ.get("LD_LIBRARY_PATH", ""):
            continue  # loaded already
        os.environ["LD_LIBRARY_PATH"] = f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"
        os.environ["AMENT_PREFIX_PATH"] = f"{install / pkg}:{os.environ.get('AMENT_PREFIX_PATH', '')}"
        os.environ["PYTHONPATH"] = f"{site}:{os.environ.get('PYTHONPATH', '')}"  # for child processes
        for suffix in ("rosidl_generator_c", "rosidl_typesupport_c", "rosidl_typesupport_introspection_c",
                       "rosidl_typesupport_fastrtps_c", "rosidl_generator_py"):
            so = lib / f"lib{pkg}__{suffix}.so"
            if so.exists():
                ctypes.CDLL(str(so), mode=ctypes.RTLD_GLOBAL)
    try:
        import nav2_msgs.action  # noqa: F401
        import tf2_msgs.msg  # noqa: F401
    except ImportError as e:
        return f"test/interfaces built but not importable: {e}"
    return ""


def transform_stamped(stamp_ns: int, parent: str, child: str, t, q):
    """A geometry_msgs/TransformStamped ``parent -> child`` (translation t, quaternion q = x, y, z, w)
    for a tf2_msgs/TFMessage on /tf or /tf_static."""
    from geometry_msgs.msg import TransformStamped

    from vlkng_ros import conversions as conv

    msg = TransformStamped()
    msg.header.stamp = conv.time_from_ns(stamp_ns)
    msg.header.frame_id, msg.child_frame_id = parent, child
    tr, rot = msg.transform.translation, msg.transform.rotation
    tr.x, tr.y, tr.z = (float(v) for v in t)
    rot.x, rot.y, rot.z, rot.w = (float(v) for v in q)
    return msg


# --- an RGB-D camera without alignment: its depth camera beside the colour camera ---------------
WALL_Z, BOX_FACE = 3.0, (-0.3, -0.25, 0.1, 0.25, 1.0)  # colour optical frame: x1, y1, x2, y2 at z (m)


def render_wall_and_box(camera, origin=(0.0, 0.0, 0.0), rot=None, wall_z: float = WALL_Z, box=BOX_FACE):
    """Depth (float32 m, z along ``camera``'s own optical axis) of a wall facing the colour camera
    at ``wall_z`` and a box's front face (``box``: x1, y1, x2, y2 at z, colour optical frame) in
    front of it, seen by ``camera`` standing at ``origin`` with its axes ``rot`` (columns: its x,
    y, z in the colour optical frame). Rays through pixel centres (u + 0.5, v + 0.5)."""
    import numpy as np

    rot = np.eye(3) if rot is None else np.asarray(rot, dtype=float)
    us, vs = np.meshgrid(np.arange(camera.width) + 0.5, np.arange(camera.height) + 0.5)
    ray = np.stack([(us - camera.cx) / camera.fx, (vs - camera.cy) / camera.fy, np.ones_like(us)], axis=-1)
    d = ray @ rot.T  # the rays in the colour frame (their own z = 1)
    o = np.asarray(origin, dtype=float)
    t_wall = (wall_z - o[2]) / d[..., 2]
    x1, y1, x2, y2, bz = box
    t_box = (bz - o[2]) / d[..., 2]
    hx, hy = o[0] + t_box * d[..., 0], o[1] + t_box * d[..., 1]
    on_box = (hx >= x1) & (hx <= x2) & (hy >= y1) & (hy <= y2) & (t_box > 0)
    return np.where(on_box, t_box, t_wall).astype(np.float32)


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1000"]


def chromium_driver():
    """A headless Debian Chromium driven by Selenium through /usr/bin/chromedriver; the test is
    skipped, with the reason, where either is not installed (apt install chromium chromium-driver)."""
    import shutil

    import pytest

    browser = shutil.which("chromium") or (CHROMIUM if os.path.exists(CHROMIUM) else None)
    driver = shutil.which("chromedriver") or (CHROMEDRIVER if os.path.exists(CHROMEDRIVER) else None)
    if not browser or not driver:
        pytest.skip("browser test: chromium and chromedriver are not installed "
                    "(apt install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="browser test: pip install selenium")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=opts)


def wait_until(predicate, timeout_s: float = 10.0, step_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` passed; its last value."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return bool(value)
        time.sleep(step_s)


def wait_progress(done, progress, what: str, stall_s: float = 120.0, cap_s: float = 900.0,
                  step_s: float = 0.05) -> None:
    """Wait for ``done()`` as long as the work behind it moves: ``progress()`` returns what changes
    while it does (counters: frames received, chunks built, objects merged). Fails naming ``what``
    when that stood still for ``stall_s`` (stuck, or the data lost on the way) or after ``cap_s`` in
    all: a loaded machine is slower, never failed for that. ``progress`` may fail on its own (an
    executor thread that died). ``done`` may block briefly itself (``event.wait(0.05)``)."""
    import time

    start = moved = time.monotonic()
    last = progress()
    while not done():
        now = time.monotonic()
        value = progress()
        if value != last:
            last, moved = value, now
        assert now - moved < stall_s, f"{what}: nothing moved for {stall_s:.0f} s ({now - start:.0f} s in; at {last!r})"
        assert now - start < cap_s, f"{what}: not done after {cap_s:.0f} s, still moving (at {last!r})"
        time.sleep(step_s)


def replay_tour(tour, domain: int, progress, quiet: bool = False) -> str:
    """``vlkng replay`` of ``tour`` at 2x in a process of its own (the robot side, out of this
    process's GIL) on ROS domain ``domain``, waited for while ``progress()`` moves (the nodes taking
    the tour in). Returns what it logged; fails with its tail if it exits non-zero."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    cmd = [sys.executable, "-m", "vlkng_ros.cli", *(["-q"] if quiet else []), "replay", str(tour), "--rate", "2",
           "--wait-for-subscribers", "60"]
    with tempfile.TemporaryFile("w+") as log:  # a file, not a pipe: a full pipe would stall it
        proc = subprocess.Popen(cmd, env={**os.environ, "ROS_DOMAIN_ID": str(domain)},
                                cwd=Path(__file__).resolve().parents[1], stdout=log, stderr=subprocess.STDOUT,
                                text=True)
        try:
            wait_progress(lambda: proc.poll() is not None, progress, f"vlkng replay of {Path(tour).name}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        log.seek(0)
        out = log.read()
    assert proc.returncode == 0, out[-2000:]
    return out


def frames_perceiver():
    """A perceiver that sees nothing: a chunk's graph is its frames (tests of chunking)."""
    from vlkng_ros.core.model import ChunkGraph
    from vlkng_ros.core.perception.base import Perceiver

    class FramesPerceiver(Perceiver):
        name = "frames"

        def perceive(self, chunk):
            return ChunkGraph(chunk.tour_id, chunk.chunk_index, [k.stamp_ns for k in chunk.keyframes])

    return FramesPerceiver()


def write_tour(out, frames, poses=(), hfov_deg: float = 90.0, jpeg_quality: int = 85):
    """A tour folder (bag/ only: no annotations) from ``frames`` [(stamp_ns, RGB uint8)] and
    optional ``poses`` [(stamp_ns, x, y, yaw)] on /pose, written with the simulator's bag writer.
    Returns the folder."""
    import math
    from pathlib import Path

    import cv2

    from vlkng_ros.eval.sim.generate import _BagWriter

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    h, w = frames[0][1].shape[:2]
    bag = _BagWriter(out / "bag", w, h, (w / 2) / math.tan(math.radians(hfov_deg) / 2))
    events = [(s, 0, rgb) for s, rgb in frames] + [(p[0], 1, p) for p in poses]
    bag.camera_info(frames[0][0], frames[0][0] - 1)
    for stamp, kind, item in sorted(events, key=lambda e: (e[0], -e[1])):
        if kind == 1:
            bag.pose(stamp, stamp, *item[1:])
        else:
            ok, buf = cv2.imencode(".jpg", cv2.cvtColor(item, cv2.COLOR_RGB2BGR),
                                   [int(cv2.IMWRITE_JPEG_QUALITY), jpeg_quality])
            bag.image(stamp, stamp, buf.tobytes())
    bag.close()
    return out


def demo_home_memory(path):
    """A small hand-built memory of a walk like OpenEQA's HM3D demo (entrance by the plants,
    living room, kitchen, a dining table with eight chairs, a bedroom with an exercise bike),
    written through the store APIs as a build would: keyframes with poses and places, objects
    with observations and positions, relations and text vectors. The robot walks along +x."""
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.model import Keyframe, ObjectNode, Observation, Pose, Relation

    tour, t0, sec = "demo", 1_700_000_000_000_000_000, 1_000_000_000
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "minilm"
    memory = Memory.open(path, cfg)
    places = ["hallway"] * 4 + ["living room"] * 5 + ["kitchen"] * 4 + ["dining room"] * 4 + ["bedroom"] * 5
    memory.graph.upsert_keyframes(Keyframe(tour, t0 + i * sec, i, 640, 480, Pose.from_xy_yaw(0.5 * i, 0.0, 0.0),
                                           place=p) for i, p in enumerate(places))
    specs = [("plant-a", "potted plant", "a green potted plant by the front door", {"color": "green"}, (0.6, 1.0), [0, 1, 2]),
             ("plant-b", "potted plant", "a tall green potted plant", {"color": "green"}, (0.6, -1.0), [0, 1, 2]),
             ("sofa", "sofa", "a grey fabric sofa", {"color": "grey", "material": "fabric"}, (3.5, 1.8), [5, 6, 7, 8]),
             ("tv", "television", "a black flat screen television", {"color": "black"}, (3.5, -1.8), [6, 7, 8]),
             ("fridge", "refrigerator", "a silver refrigerator", {"color": "silver", "material": "metal"}, (5.5, 1.5), [9, 10, 11]),
             ("kettle", "kettle", "a white electric kettle", {"color": "white"}, (6.0, 1.3), [10, 11, 12]),
             ("table", "dining table", "a long wooden dining table", {"color": "brown", "material": "wood"}, (8.0, 2.0), [13, 14, 15, 16]),
             ("bed", "bed", "a double bed with a white duvet", {"color": "white"}, (10.0, 1.5), [17, 18, 19, 20, 21]),
             ("bike", "exercise bike", "a black stationary exercise bike", {"color": "black"}, (10.5, -1.2), [18, 19, 20]),
             ("desk-chair", "chair", "a black office chair at a desk", {"color": "black"}, (10.8, 1.9), [19, 20, 21])]
    chairs = [(7.3, 2.85), (8.0, 2.85), (8.7, 2.85), (7.3, 1.15), (8.0, 1.15), (8.7, 1.15), (6.7, 2.0), (9.3, 2.0)]
    specs += [(f"chair-{i}", "chair", "a brown wooden dining chair", {"color": "brown", "material": "wood"}, xy,
               [13, 14, 15, 16]) for i, xy in enumerate(chairs)]
    # one chair was split in two by association: a fragment seen later, 0.2 m away, never beside it
    specs.append(("chair-0b", "chair", "a brown wooden dining chair", {"color": "brown"}, (7.4, 2.75), [17]))
    nodes = []
    for oid, label, desc, attrs, xy, seen in specs:
        obs = [Observation(tour, t0 + s * sec, (200.0 + 10 * (hash(oid) % 20), 180.0, 300.0 + 10 * (hash(oid) % 20), 300.0),
                           "demo#000000", oid) for s in seen]
        nodes.append(ObjectNode(oid, label, desc, attrs, [], [label], [places[seen[0]]], obs[0].stamp_ns,
                                obs[-1].stamp_ns, obs, xy, 0.05, [], [tour]))
    rels = [Relation(f"chair-{i}", "next to", "table", [t0 + 14 * sec], tour) for i in range(8)]
    rels += [Relation("kettle", "on", "fridge", [t0 + 10 * sec], tour)]
    memory.graph.apply_merge("demo#000000", nodes, rels)
    emb = memory.text_embedder
    memory.vectors.ensure_collection(memory.text_collection, emb.dim)
    memory.vectors.upsert(memory.text_collection, [f"{n.id}|demo#000000" for n in nodes],
                          emb.embed_texts([n.text() for n in nodes]),
                          [{"object_id": n.id, "tour_id": tour, "chunk_id": "demo#000000", "stamp_ns": n.first_seen_ns,
                            "label": n.label} for n in nodes])
    memory.touch()
    return memory
