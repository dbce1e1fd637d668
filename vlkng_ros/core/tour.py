"""Reader for tour folders in tour-format v2 (docs/tour-format.md).

A tour is ``bag/`` (rosbag2: metadata.yaml + .mcap or .db3) plus optional ``annotations.jsonl``,
``questions.json`` and ``world.json``. The bag is read with the ``rosbags`` library. A damaged
bag never crashes the caller: when rosbags cannot open it (a truncated MCAP has no footer), the
storage files are scanned record by record and everything readable is returned; every problem is
logged on ``vlkng.tour`` and kept in :meth:`Tour.read_errors`.

Depth (v2, optional): an aligned depth image topic (16UC1 mm / 32FC1 m, or compressedDepth) and/or
a PointCloud2 topic. Each colour frame gets the depth frame stamped nearest to it within
``depth.max_offset_ms`` (clouds: three times that, a LiDAR turns at 10-20 Hz), read in the same
pass over the bag; the depth is decoded only when asked for (``FrameMsg.depth()``), so frames that
do not become keyframes cost nothing more.
"""

from __future__ import annotations

import bisect
import collections
import json
import logging
import math
import sqlite3
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from vlkng_ros.core.config import DepthConfig
from vlkng_ros.core.depth import (cloud_to_camera, cloud_to_depth, cloud_xyz, depth_frame_is_colour, is_unregistered,
                                  registered_depth, transform_points, unregistered_hint)
from vlkng_ros.core.images import (compressed_kind, decode_compressed, decode_compressed_depth, decode_depth,
                                   decode_raw, is_compressed_depth)
from vlkng_ros.core.model import CameraModel, Pose

if TYPE_CHECKING:
    from vlkng_ros.core.tf import TransformBuffer

log = logging.getLogger("vlkng.tour")

IMAGE_TYPES = ("sensor_msgs/msg/CompressedImage", "sensor_msgs/msg/Image")
DEFAULT_IMAGE_TOPICS = ("/camera/image_raw/compressed", "/camera/image_raw")
CLOUD_TYPE = "sensor_msgs/msg/PointCloud2"
CLOUD_OFFSET_FACTOR = 3  # a cloud may be this many times further from a frame than a depth image
POSE_TYPES = ("geometry_msgs/msg/PoseWithCovarianceStamped", "geometry_msgs/msg/PoseStamped",
              "nav_msgs/msg/Odometry")
TF_TOPICS = ("/tf", "/tf_static")
TF_TYPE = "tf2_msgs/msg/TFMessage"
_MCAP_MAGIC = b"\x89MCAP0\r\n"


@dataclass
class FrameMsg:
    """One image message of the bag."""

    stamp_ns: int  # header.stamp as int ns (frame identity)
    rgb: np.ndarray | None  # HxWx3 uint8 RGB; None when it could not be decoded
    error: str | None  # why decoding failed
    width: int  # 0 when unknown
    height: int
    depth: Callable[[], np.ndarray] | None = None  # decodes the matched depth (float32 m, NaN = none)
    frame_id: str = ""  # the image's header.frame_id: the camera frame TF gives the pose of


def _stamp_ns(header: Any) -> int:
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


# ----------------------------------------------------------------------------------------------
# raw storage access


class _Bag:
    """Messages of one rosbag2 folder as (topic, msgtype, log_ns, raw CDR bytes)."""

    def __init__(self, bag_dir: Path, errors: list[str]):
        self.dir = bag_dir
        self.errors = errors
        self.topics: dict[str, tuple[str, int | None]] = {}  # topic -> (msgtype, message count)
        self.use_rosbags = True
        self.files = sorted([*bag_dir.glob("*.mcap"), *bag_dir.glob("*.db3")])
        self.stamp_range = (0, 0)  # first and last message log time (ns), from the bag's index
        try:
            from rosbags.rosbag2 import Reader

            with Reader(bag_dir) as reader:
                if reader.message_count:
                    self.stamp_range = (int(reader.start_time), int(reader.end_time))
                for c in reader.connections:
                    self.topics[c.topic] = (c.msgtype, c.msgcount)
        except Exception as e:  # noqa: BLE001 - any damage: fall back to scanning the files
            if not self.files:
                raise ValueError(f"{bag_dir}: not a readable rosbag2 folder ({e})") from e
            self._error(f"bag {bag_dir} could not be opened normally ({e}); scanning its files for "
                        f"whatever is readable")
            self.use_rosbags = False
            for topic, msgtype, _, _ in self._scan():
                prev = self.topics.get(topic, (msgtype, 0))
                self.topics[topic] = (msgtype, (prev[1] or 0) + 1)

    def _error(self, msg: str) -> None:
        if msg not in self.errors:
            self.errors.append(msg)
            log.error("%s", msg)

    def messages(self, topics: set[str]) -> Iterator[tuple[str, str, int, bytes]]:
        if not self.use_rosbags:
            yield from ((t, m, ts, d) for t, m, ts, d in self._scan() if t in topics)
            return
        from rosbags.rosbag2 import Reader

        count = 0
        try:
            with Reader(self.dir) as reader:
                conns = [c for c in reader.connections if c.topic in topics]
                if not conns:
                    return
                for conn, ts, data in reader.messages(connections=conns):
                    count += 1
                    yield conn.topic, conn.msgtype, int(ts), bytes(data)
        except Exception as e:  # noqa: BLE001 - damaged storage: keep what was read
            self._error(f"bag {self.dir}: reading stopped after {count} messages on {sorted(topics)}: {e}")

    # -- fallbacks for damaged files -----------------------------------------------------------
    def _scan(self) -> Iterator[tuple[str, str, int, bytes]]:
        for f in self.files:
            if f.suffix == ".mcap":
                yield from self._scan_mcap(f)
            else:
                yield from self._scan_db3(f)

    def _scan_db3(self, path: Path) -> Iterator[tuple[str, str, int, bytes]]:
        n = 0
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                topics = {row[0]: (row[1], row[2]) for row in con.execute("SELECT id, name, type FROM topics")}
                for tid, ts, data in con.execute("SELECT topic_id, timestamp, data FROM messages ORDER BY id"):
                    if tid in topics:
                        n += 1
                        yield topics[tid][0], topics[tid][1], int(ts), bytes(data)
            finally:
                con.close()
        except sqlite3.Error as e:
            self._error(f"{path}: database damaged after {n} messages ({e}); the rest is lost")

    def _scan_mcap(self, path: Path) -> Iterator[tuple[str, str, int, bytes]]:
        schemas: dict[int, str] = {}
        channels: dict[int, tuple[str, str]] = {}
        with path.open("rb") as f:
            if f.read(8) != _MCAP_MAGIC:
                self._error(f"{path}: not an MCAP file (bad magic)")
                return
            while True:
                head = f.read(9)
                if len(head) == 0:
                    self._error(f"{path}: file ends without an MCAP footer (truncated)")
                    return
                if len(head) < 9:
                    self._error(f"{path}: truncated in a record header; later messages are lost")
                    return
                op, length = head[0], struct.unpack_from("<Q", head, 1)[0]
                if op == 0x02:  # footer: done
                    return
                if op in (0x03, 0x04, 0x05, 0x06):
                    body = f.read(length)
                    if len(body) < length:
                        self._error(f"{path}: truncated inside a record at byte {f.tell()}; later messages are lost")
                        return
                else:
                    f.seek(length, 1)
                    continue
                yield from self._mcap_records([(op, body)], schemas, channels, path)

    def _mcap_records(self, records: list[tuple[int, bytes]], schemas: dict[int, str],
                      channels: dict[int, tuple[str, str]], path: Path) -> Iterator[tuple[str, str, int, bytes]]:
        for op, body in records:
            try:
                if op == 0x03:
                    sid = struct.unpack_from("<H", body, 0)[0]
                    nlen = struct.unpack_from("<I", body, 2)[0]
                    schemas[sid] = body[6:6 + nlen].decode()
                elif op == 0x04:
                    cid, sid = struct.unpack_from("<HH", body, 0)
                    tlen = struct.unpack_from("<I", body, 4)[0]
                    channels[cid] = (body[8:8 + tlen].decode(), schemas.get(sid, ""))
                elif op == 0x05:
                    cid, _seq, log_time = struct.unpack_from("<HIQ", body, 0)
                    if cid in channels:
                        topic, msgtype = channels[cid]
                        yield topic, msgtype, int(log_time), body[22:]
                elif op == 0x06:
                    yield from self._mcap_records(self._chunk_records(body, path), schemas, channels, path)
            except (struct.error, UnicodeDecodeError) as e:
                self._error(f"{path}: malformed MCAP record (op {op:#x}): {e}")

    def _chunk_records(self, body: bytes, path: Path) -> list[tuple[int, bytes]]:
        clen = struct.unpack_from("<I", body, 28)[0]
        compression = body[32:32 + clen].decode()
        pos = 32 + clen
        rlen = struct.unpack_from("<Q", body, pos)[0]
        data = body[pos + 8:pos + 8 + rlen]
        if compression == "zstd":
            import zstandard

            data = zstandard.ZstdDecompressor().decompress(data, max_output_size=struct.unpack_from("<Q", body, 16)[0])
        elif compression:
            self._error(f"{path}: chunk compression {compression!r} is not supported; chunk skipped")
            return []
        out, i = [], 0
        while i + 9 <= len(data):
            op, length = data[i], struct.unpack_from("<Q", data, i + 1)[0]
            out.append((op, data[i + 9:i + 9 + length]))
            i += 9 + length
        return out


# ----------------------------------------------------------------------------------------------
# validation of the optional files


def _valid_bbox(b: Any) -> bool:
    return (isinstance(b, (list, tuple)) and len(b) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in b))


def _load_annotations(path: Path, errors: list[str]) -> dict[int, dict]:
    out: dict[int, dict] = {}
    if not path.exists():
        return out
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            _problem(errors, f"{path}:{n}: not JSON ({e}); line skipped")
            continue
        stamp = d.get("stamp_ns") if isinstance(d, dict) else None
        if not isinstance(stamp, int) or isinstance(stamp, bool) or not isinstance(d.get("objects", []), list):
            _problem(errors, f"{path}:{n}: needs an integer stamp_ns and an objects list; line skipped")
            continue
        objects = []
        for o in d.get("objects", []):
            if (isinstance(o, dict) and isinstance(o.get("gt_track"), str) and isinstance(o.get("label"), str)
                    and _valid_bbox(o.get("bbox"))):
                objects.append(o)
            else:
                _problem(errors, f"{path}:{n}: object without gt_track/label/bbox dropped: {str(o)[:80]}")
        rels = [r for r in d.get("relations", []) or []
                if isinstance(r, (list, tuple)) and len(r) == 3 and all(isinstance(v, str) for v in r)]
        if stamp in out:
            _problem(errors, f"{path}:{n}: duplicate stamp_ns {stamp}; later line kept")
        out[stamp] = {**d, "objects": objects, "relations": rels}
    return out


def _load_questions(path: Path, errors: list[str]) -> list[dict]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        _problem(errors, f"{path}: not JSON ({e}); no questions loaded")
        return []
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        _problem(errors, f"{path}: expected {{\"questions\": [...]}}; no questions loaded")
        return []
    out = []
    for i, q in enumerate(items):
        why = _question_problem(q)
        if why:
            _problem(errors, f"{path}: question #{i} ({q.get('id') if isinstance(q, dict) else '?'}) skipped: {why}")
        else:
            out.append(q)
    return out


def _question_problem(q: Any) -> str | None:
    if not isinstance(q, dict):
        return "not an object"
    if not isinstance(q.get("id"), str) or not isinstance(q.get("type"), str):
        return "needs string id and type"
    if not isinstance(q.get("question"), str) or not q["question"].strip():
        return "needs a question text"
    frames = q.get("frames", [])
    if not isinstance(frames, list) or not all(
            isinstance(f, (list, tuple)) and len(f) == 2 and all(isinstance(v, int) for v in f) and f[0] <= f[1]
            for f in frames):
        return "frames must be [start_ns, end_ns] integer intervals"
    options = q.get("options")
    if options is not None:
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            return "options must be a list of strings"
        from .ask.options import parse_options  # the engine's reading of options, not a second one

        letters = [k for k, _ in parse_options(options)]
        if str(q.get("answer") or "").upper() not in letters:
            return f"answer {q.get('answer')!r} is not one of the options' letters"
    goal = q.get("goal_xy")
    if goal is not None and not (isinstance(goal, (list, tuple)) and len(goal) == 2
                                 and all(isinstance(v, (int, float)) for v in goal)):
        return "goal_xy must be [x, y]"
    return None


def _problem(errors: list[str], msg: str) -> None:
    errors.append(msg)
    log.warning("%s", msg)


# ----------------------------------------------------------------------------------------------


class Tour:
    """One tour folder. Open with :meth:`Tour.open`."""

    def __init__(self, path: Path, bag: _Bag, image_topic: str, pose_topic: str, camera_info_topic: str,
                 annotations: dict[int, dict], questions: list[dict], world: dict | None, errors: list[str],
                 depth: DepthConfig | None = None):
        from .tour_identity import derive_tour_id

        self.path = path
        # derived from the folder name; build_tour replaces it by the id the memory knows the
        # tour's content under (core/tour_identity.py)
        self.tour_id = derive_tour_id(path.name)
        self._bag = bag
        self.image_topic = image_topic
        self.pose_topic = pose_topic
        self.camera_info_topic = camera_info_topic
        self.annotations = annotations
        self.questions = questions
        self.world = world
        self._errors = errors
        self._pose_cache: dict[str, list[tuple[int, Pose]]] = {}
        self._tf: "TransformBuffer | None" = None
        self._frame_count: int | None = None
        self.depth_cfg = depth if depth is not None else DepthConfig()
        topics = bag.topics
        want = _abs(self.depth_cfg.topic)
        self.depth_topic = want if (self.depth_cfg.enabled and want and want in topics) else None
        cloud = _abs(self.depth_cfg.cloud_topic) or ("/points" if self.depth_cfg.enabled else "")
        self.cloud_topic = cloud if (self.depth_cfg.enabled and cloud in topics
                                     and topics[cloud][0] == CLOUD_TYPE) else None
        self._camera: CameraModel | None = None
        self._depth_camera: list[CameraModel | None] = []  # read once: [] = not yet
        self._warned_unregistered = False

    @staticmethod
    def open(path: str | Path, image_topic: str | None = None, pose_topic: str = "/pose",
             camera_info_topic: str = "/camera/camera_info", depth: DepthConfig | None = None) -> "Tour":
        root = Path(path).expanduser()
        if not root.exists():
            raise FileNotFoundError(f"tour folder {root} does not exist")
        if not root.is_dir():
            raise ValueError(f"{root} is not a tour folder (tour-format v2 is a folder with bag/ inside)")
        bag_dir = root / "bag"
        if not bag_dir.is_dir():
            raise FileNotFoundError(f"{root} is not a tour: no bag/ folder (tour-format v2 needs bag/ with "
                                    f"metadata.yaml and a .mcap or .db3 file)")
        errors: list[str] = []
        bag = _Bag(bag_dir, errors)
        topics = bag.topics
        if not bag.use_rosbags and not any(m in IMAGE_TYPES for m, _ in topics.values()):
            raise ValueError(f"{bag_dir}: the bag is damaged and no image message could be recovered "
                             f"(0 frames): {errors[-1] if errors else 'unreadable'}")
        if image_topic is None:
            image_topic = next((t for t in DEFAULT_IMAGE_TOPICS if t in topics), None) or next(
                (t for t, (m, _) in sorted(topics.items()) if m in IMAGE_TYPES), None)
            if image_topic is None:
                raise ValueError(f"{bag_dir}: no image topic (CompressedImage or Image) among {sorted(topics)}")
        elif image_topic not in topics:
            raise ValueError(f"{bag_dir}: image topic {image_topic} not in the bag (topics: {sorted(topics)})")
        elif topics[image_topic][0] not in IMAGE_TYPES:
            raise ValueError(f"{bag_dir}: {image_topic} is {topics[image_topic][0]}, not an image type")
        annotations = _load_annotations(root / "annotations.jsonl", errors)
        questions = _load_questions(root / "questions.json", errors)
        world = None
        if (root / "world.json").exists():
            try:
                world = json.loads((root / "world.json").read_text())
                if not isinstance(world, dict) or not isinstance(world.get("objects", []), list):
                    raise ValueError("expected an object with an objects list")
            except (ValueError, UnicodeDecodeError) as e:
                _problem(errors, f"{root / 'world.json'}: unusable ({e}); ignored")
                world = None
        return Tour(root, bag, image_topic, pose_topic, camera_info_topic, annotations, questions, world, errors,
                    depth)

    # ------------------------------------------------------------------------------------------
    @property
    def _typestore(self):
        from rosbags.typesys import Stores, get_typestore

        if not hasattr(self, "_ts"):
            self._ts = get_typestore(Stores.ROS2_HUMBLE)
        return self._ts

    def _deserialize(self, raw: bytes, msgtype: str, log_ns: int) -> Any | None:
        try:
            return self._typestore.deserialize_cdr(raw, msgtype)
        except Exception as e:  # noqa: BLE001 - a damaged message is skipped, not fatal
            _problem(self._errors, f"{self.tour_id}: {msgtype} message logged at {log_ns} is unreadable ({e}); skipped")
            return None

    @property
    def has_depth(self) -> bool:
        """The bag has an aligned depth topic or a point cloud (and depth is enabled)."""
        return self.depth_topic is not None or self.cloud_topic is not None

    def frames(self) -> Iterator[FrameMsg]:
        """Image messages in stamp order; non-increasing stamps (clock jumps) are skipped. With
        depth in the bag, each frame carries its matched depth frame (``FrameMsg.depth``)."""
        if not self.has_depth:
            last: list[int] = []
            for _, msgtype, log_ns, raw in self._bag.messages({self.image_topic}):
                frame = self._colour_frame(msgtype, log_ns, raw, last)
                if frame is not None:
                    yield frame
            return
        yield from self._frames_with_depth()

    def _colour_frame(self, msgtype: str, log_ns: int, raw: bytes, last: list[int]) -> FrameMsg | None:
        """One decoded colour frame; None for an unreadable message or a stamp not after ``last``
        (a one-element list carrying the previous stamp between calls)."""
        msg = self._deserialize(raw, msgtype, log_ns)
        if msg is None:
            return None
        stamp = _stamp_ns(msg.header)
        if last and stamp <= last[0]:
            _problem(self._errors, f"{self.tour_id}: image stamp {stamp} is not after {last[0]} (clock jump?); "
                                   f"frame skipped")
            return None
        last[:] = [stamp]
        frame = _decode(msg, msgtype, stamp)
        frame.frame_id = str(msg.header.frame_id).lstrip("/")
        if frame.error:
            _problem(self._errors, f"{self.tour_id}: frame {stamp}: {frame.error}")
        return frame

    def _frames_with_depth(self) -> Iterator[FrameMsg]:
        """One pass over colour and depth: a colour frame waits (decoded, without depth) until a
        depth message stamped after it plus the tolerance was read, or the bag ends."""
        tol = int(self.depth_cfg.max_offset_ms * 1e6)
        depth_topics = {t for t in (self.depth_topic, self.cloud_topic) if t}
        pending: collections.deque = collections.deque()
        buffers: dict[str, tuple[list[int], list[Any]]] = {t: ([], []) for t in depth_topics}
        latest: dict[str, int] = {t: -1 for t in depth_topics}
        last: list[int] = []

        def ready(frame: FrameMsg) -> bool:
            return all(latest[t] > frame.stamp_ns + self._tolerance(t, tol) for t in depth_topics)

        def emit(frame: FrameMsg) -> FrameMsg:
            for t in (self.depth_topic, self.cloud_topic):  # an aligned image first, then a cloud
                if t and frame.depth is None:
                    frame.depth = self._match(t, buffers[t], frame.stamp_ns, self._tolerance(t, tol), frame.frame_id)
            return frame

        for topic, msgtype, log_ns, raw in self._bag.messages({self.image_topic, *depth_topics}):
            if topic == self.image_topic:
                frame = self._colour_frame(msgtype, log_ns, raw, last)
                if frame is not None:
                    pending.append(frame)
            else:
                msg = self._deserialize(raw, msgtype, log_ns)
                if msg is None:
                    continue
                stamp = _stamp_ns(msg.header)
                stamps, msgs = buffers[topic]
                i = bisect.bisect_left(stamps, stamp)
                stamps.insert(i, stamp)
                msgs.insert(i, (msgtype, msg))
                latest[topic] = max(latest[topic], stamp)
            while pending and ready(pending[0]):
                yield emit(pending.popleft())
            oldest = pending[0].stamp_ns if pending else max(latest.values())
            for t, (stamps, msgs) in buffers.items():  # depth older than every waiting frame can go
                cut = bisect.bisect_left(stamps, oldest - 2 * self._tolerance(t, tol))
                del stamps[:cut], msgs[:cut]
        while pending:
            yield emit(pending.popleft())

    def _tolerance(self, topic: str, tol: int) -> int:
        return tol * CLOUD_OFFSET_FACTOR if topic == self.cloud_topic else tol

    def _match(self, topic: str, buffer: tuple[list[int], list[Any]], stamp: int,
               tol: int, camera_frame: str = "") -> Callable[[], np.ndarray] | None:
        stamps, msgs = buffer
        i = bisect.bisect_left(stamps, stamp)
        best = min((j for j in (i - 1, i) if 0 <= j < len(stamps)), key=lambda j: abs(stamps[j] - stamp), default=None)
        if best is None or abs(stamps[best] - stamp) > tol:
            return None
        msgtype, msg = msgs[best]
        if topic == self.cloud_topic:
            return lambda: self._cloud_depth(msg, camera_frame, stamp)
        depth_frame = str(msg.header.frame_id)
        if not is_unregistered(depth_frame, camera_frame):
            return lambda: _decode_depth_msg(msg, msgtype)
        depth_camera = self.depth_camera()
        if depth_camera is None and not depth_frame_is_colour(depth_frame, camera_frame, stamp, self._tf_lookup()):
            # never a depth image used as if it were registered
            if not self._warned_unregistered:
                self._warned_unregistered = True
                info = _abs(self.depth_cfg.camera_info_topic)
                log.warning("%s: %s%s", self.tour_id, unregistered_hint(depth_frame, camera_frame, self.depth_topic or ""),
                            f" ({info} has no usable CameraInfo in the bag)" if info else "")
            return None
        return lambda: registered_depth(_decode_depth_msg(msg, msgtype), depth_frame, depth_camera, self._colour_camera(),
                                        camera_frame, stamp, self._tf_lookup(), self.depth_cfg.noise(),
                                        self.depth_topic or "")

    def depth_camera(self) -> CameraModel | None:
        """The depth camera's intrinsics (``depth.camera_info_topic`` in the bag), for a depth image
        in its own frame; None without one."""
        if not self._depth_camera:
            topic = _abs(self.depth_cfg.camera_info_topic)
            self._depth_camera.append(self._camera_info(topic) if topic else None)
        return self._depth_camera[0]

    def _colour_camera(self) -> CameraModel:
        if self._camera is None:
            self._camera = self.camera_model(90.0)
        return self._camera

    def _tf_lookup(self) -> Callable[[str, str, int], Any] | None:
        """The bag's TF as ``lookup(target, source, stamp_ns)``; None when it has no /tf or /tf_static."""
        if not any(t in self._bag.topics for t in TF_TOPICS):
            return None
        return lambda *a: self.transforms().lookup(*a)

    def _cloud_depth(self, msg: Any, camera_frame: str = "", stamp_ns: int = 0) -> np.ndarray:
        """A PointCloud2 moved into the camera's optical frame and projected into a depth image
        of the colour frame's size. The move: ``depth.cloud_frame_to_camera`` when set, else TF
        in the bag (camera frame <- cloud frame at the image's stamp: a moving robot), else none
        (the cloud is taken as in the optical frame): ``core.depth.cloud_to_camera``, as live."""
        fields = [(f.name, int(f.offset), int(f.datatype), int(f.count)) for f in msg.fields]
        pts = cloud_xyz(fields, int(msg.width), int(msg.height), int(msg.point_step), int(msg.row_step),
                        np.asarray(msg.data, dtype=np.uint8), bool(msg.is_bigendian))
        rot, trans = cloud_to_camera(self.depth_cfg, camera_frame, str(msg.header.frame_id), stamp_ns,
                                     self._tf_lookup())
        return cloud_to_depth(transform_points(pts, rot, trans), self._colour_camera(), self.depth_cfg.noise())

    def frame_count(self) -> int:
        """Number of image messages in the bag (from the bag's index when it has one)."""
        if self._frame_count is None:
            count = self._bag.topics.get(self.image_topic, ("", None))[1]
            if not count:
                count = sum(1 for _ in self._bag.messages({self.image_topic}))
            self._frame_count = int(count)
        return self._frame_count

    def has_topic(self, topic: str) -> bool:
        return topic in self._bag.topics

    def first_frame_id(self) -> str:
        """The camera frame the first readable image names (its header.frame_id)."""
        for _, msgtype, log_ns, raw in self._bag.messages({self.image_topic}):
            msg = self._deserialize(raw, msgtype, log_ns)
            if msg is not None:
                return str(msg.header.frame_id).lstrip("/")
        return ""

    def transforms(self, max_gap_s: float | None = 1.0) -> "TransformBuffer":
        """Every transform of ``/tf`` and ``/tf_static`` in one buffer (the whole bag, no cache limit)."""
        from vlkng_ros.core.tf import TransformBuffer

        if self._tf is None or self._tf.max_gap_ns != (None if max_gap_s is None else int(max_gap_s * 1e9)):
            buf = TransformBuffer(cache_s=None, max_gap_s=max_gap_s)
            bad = 0
            for topic, msgtype, log_ns, raw in self._bag.messages(set(TF_TOPICS) & set(self._bag.topics)):
                if msgtype != TF_TYPE:
                    _problem(self._errors, f"{self.tour_id}: {topic} has type {msgtype}, not {TF_TYPE}; skipped")
                    continue
                msg = self._deserialize(raw, msgtype, log_ns)
                for ts in msg.transforms if msg is not None else []:
                    tr, rot = ts.transform.translation, ts.transform.rotation
                    try:
                        buf.set_transform(ts.header.frame_id, ts.child_frame_id, _stamp_ns(ts.header),
                                          (tr.x, tr.y, tr.z), (rot.x, rot.y, rot.z, rot.w),
                                          static=topic == "/tf_static")
                    except ValueError as e:
                        bad += 1
                        if bad <= 3:
                            _problem(self._errors, f"{self.tour_id}: {topic}: {e}; transform skipped")
            self._tf = buf
        return self._tf

    def poses(self, topic: str | None = None) -> list[tuple[int, Pose]]:
        """(stamp_ns, Pose) of every message of a pose topic (default ``pose_topic``;
        PoseWithCovarianceStamped, PoseStamped or Odometry), sorted by stamp."""
        topic = topic or self.pose_topic
        if topic not in self._pose_cache:
            out: list[tuple[int, Pose]] = []
            for _, msgtype, log_ns, raw in self._bag.messages({topic}):
                if msgtype not in POSE_TYPES:
                    _problem(self._errors, f"{self.tour_id}: {topic} has type {msgtype}; no poses read")
                    break
                msg = self._deserialize(raw, msgtype, log_ns)
                if msg is None:
                    continue
                p = msg.pose if msgtype.endswith("/PoseStamped") else msg.pose.pose
                vals = (p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
                        p.orientation.z, p.orientation.w)
                if not all(math.isfinite(v) for v in vals):
                    _problem(self._errors, f"{self.tour_id}: pose at {_stamp_ns(msg.header)} is not finite; skipped")
                    continue
                out.append((_stamp_ns(msg.header), Pose(*(float(v) for v in vals), frame_id=msg.header.frame_id or "map")))
            out.sort(key=lambda sp: sp[0])
            self._pose_cache[topic] = out
        return list(self._pose_cache[topic])

    def camera_model(self, default_hfov_deg: float) -> CameraModel:
        """Intrinsics from the first usable CameraInfo, else ``default_hfov_deg`` and the frame size."""
        camera = self._camera_info(self.camera_info_topic)
        if camera is not None:
            return camera
        for frame in self.frames():
            if frame.width > 0 and frame.height > 0:
                return CameraModel.from_hfov(frame.width, frame.height, default_hfov_deg)
        raise ValueError(f"{self.tour_id}: no CameraInfo and no decodable frame to size the camera from")

    def _camera_info(self, topic: str) -> CameraModel | None:
        """Intrinsics from the first usable CameraInfo on ``topic``; None when the bag has none."""
        if topic in self._bag.topics:
            for _, msgtype, log_ns, raw in self._bag.messages({topic}):
                msg = self._deserialize(raw, msgtype, log_ns)
                if msg is None:
                    continue
                k = [float(v) for v in msg.k]
                if msg.width > 0 and msg.height > 0 and k[0] > 0 and k[4] > 0:
                    return CameraModel(int(msg.width), int(msg.height), k[0], k[4], k[2], k[5])
        return None

    def stamp_range(self) -> tuple[int, int]:
        """First and last message log time of the bag (ns); (0, 0) for a damaged bag."""
        return self._bag.stamp_range

    def storage_files(self) -> list[Path]:
        """The bag's storage files (.mcap / .db3), sorted by name."""
        return list(self._bag.files)

    def read_errors(self) -> list[str]:
        """Problems met so far while reading (damaged bag, bad messages, bad annotation lines)."""
        return list(self._errors)


def _abs(topic: str) -> str:
    return "" if not topic else (topic if topic.startswith("/") else "/" + topic)


def _decode_depth_msg(msg: Any, msgtype: str) -> np.ndarray:
    if msgtype == "sensor_msgs/msg/CompressedImage":
        if not is_compressed_depth(str(msg.format)):
            raise ValueError(f"depth CompressedImage format {msg.format!r} is not compressedDepth")
        return decode_compressed_depth(np.asarray(msg.data, dtype=np.uint8), str(msg.format))
    return decode_depth(str(msg.encoding), int(msg.width), int(msg.height), int(msg.step),
                        np.asarray(msg.data, dtype=np.uint8), bool(msg.is_bigendian))


def _decode(msg: Any, msgtype: str, stamp: int) -> FrameMsg:
    if msgtype == "sensor_msgs/msg/CompressedImage":
        try:
            # the format string only names the codec; the bytes decide (an unlabelled PNG works)
            rgb = decode_compressed(np.asarray(msg.data, dtype=np.uint8), "")
        except ValueError:
            kind = compressed_kind(str(msg.format))
            return FrameMsg(stamp, None, f"corrupt {kind}" if kind else
                            f"unknown compressed format {msg.format!r}", 0, 0)
        return FrameMsg(stamp, rgb, None, rgb.shape[1], rgb.shape[0])
    w, h = int(msg.width), int(msg.height)
    try:
        rgb = decode_raw(str(msg.encoding), w, h, int(msg.step), np.asarray(msg.data, dtype=np.uint8),
                         is_bigendian=bool(msg.is_bigendian))
    except ValueError as e:
        return FrameMsg(stamp, None, str(e), w, h)
    return FrameMsg(stamp, rgb, None, w, h)
