"""Frame capture node: camera images + poses -> stored, pose-tagged keyframes.

Subscribes the image topic (CompressedImage or Image, sensor-data QoS) and optionally
``camera/camera_info``; calls ``MemoryBuilder.ingest_frame`` and publishes each kept keyframe on
``keyframes`` (its header.frame_id is the image's). A frame's pose (``capture.pose_source``):
TF ``map -> <image header.frame_id>`` at the image stamp (``tf2_ros`` where installed, else
vlkng's own buffer on ``/tf`` + ``/tf_static``), else ``pose`` (PoseWithCovarianceStamped from
SLAM), else ``odom`` (nav_msgs/Odometry); ``auto`` takes, per frame, the first of these that is
coming in. Images with no pose for ``no_pose_warn_s`` give ONE warning naming what was waited for.

Keeping up with a 30 fps 1280x720 camera on one core: a frame that arrives sooner than
``capture.min_interval_s`` after the last keyframe is dropped before it is decoded (the selector
would reject it anyway); the rest are decoded once. Frames wait (undecoded) until a pose newer
than their stamp has arrived, or until the pose would be too old anyway, so a frame gets the pose
interpolated around its stamp, as SLAM publishes poses late and slower than the camera.

Callbacks only take messages in (microseconds): decoding, selecting and storing run in the
node's own worker thread, so the image subscription is never blocked behind a keyframe being
stored (best-effort images that wait in a full queue are lost), and /tf, /odom, /pose keep their
own callback group. ``bench/bench_capture_live.py`` measures it at 1x, 2x, 4x.

Depth, where the robot has it: ``depth.topic`` (an RGB-D camera's aligned depth, Image 16UC1/32FC1
or a compressedDepth CompressedImage when the name ends in 'compressedDepth') and/or
``depth.cloud_topic`` (PointCloud2). The latest depth messages are kept undecoded; a keyframe takes
the one stamped nearest to it within ``depth.max_offset_ms`` and the depth writer thread decodes
and stores it, so capture pays only the lookup. Depth that arrives after its keyframe was stored
is attached to it then (positions are re-solved at the next merge). A cloud in another frame than
the image is moved by ``depth.cloud_frame_to_camera`` when set, else by TF (image frame <- cloud
frame at the keyframe's stamp, looked up when the writer decodes it: a ``/tf_static`` later than
the cloud still counts); a cloud TF cannot place leaves its keyframe without depth (logged,
counted ``depth_no_tf``), never with a made-up one. A depth image in another frame than the colour
image (a driver without ``align_depth``) is registered to it when the writer decodes it: the depth
camera's CameraInfo (``depth.camera_info_topic``) and TF colour frame <- depth frame at the
keyframe's stamp; without either its keyframe has no depth (a throttled warning saying what to
set, counted ``depth_unregistered``), never depth used as if aligned.

Stream end: when no image came for ``stream_end_s`` (or the node stops) the selector keeps what it
held back, and then ``stream_end`` (std_msgs/Header) announces it: ``frame_id`` = the tour id,
``stamp`` = the image stamp of the last keyframe this node published (0 = none yet). Topics are not
ordered against each other, so the chunk builder perceives a tour's partial chunk only once that
keyframe is in (see chunk_builder.py): the tail of a live run is chunked as the offline build of
its bag chunks it, whatever stream_end_s and flush_after_s are.
"""

from __future__ import annotations

import bisect
import collections
import threading
import time
from datetime import datetime, timezone
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, PointCloud2
from std_msgs.msg import Header
from vlkng_msgs.msg import Keyframe as KeyframeMsg

from .. import conversions as conv
from ..core.capture import PoseBuffer
from ..core.depth import cloud_to_camera, cloud_to_depth, is_unregistered, registered_depth, transform_points
from ..core.memory import Memory
from ..core.model import Pose
from ..core.pipeline import MemoryBuilder
from ..core.poses import check_pose_source
from .common import VlkngLifecycleNode, param, spin_main
from .tf_live import make_live_tf

NS = 1_000_000_000
DEPTH_BUFFER = 60  # depth messages kept (2 s of a 30 fps camera), undecoded
CLOUD_OFFSET_FACTOR = 3  # a cloud may be this many times further from a frame than a depth image

PARAMS = {
    "tour_id": ("", "Tour id of what is captured; empty = 'tour-<UTC date-time>' at configure."),
    "image_type": ("auto", "auto (CompressedImage if the topic ends in 'compressed') | compressed | raw."),
    "camera_info_topic": ("camera/camera_info", "CameraInfo topic for intrinsics; empty = use camera_hfov_deg."),
    "keyframe_topic": ("keyframes", "Where kept keyframes are published (vlkng_msgs/Keyframe)."),
    "image_queue_depth": (30, "Images queued (best effort, sensor-data QoS) while a callback runs."),
    "pose_wait_s": (2.0, "A frame waits (undecoded) up to this much camera time for its pose (TF at its "
                         "stamp, or a later /pose or /odom) (s)."),
    "no_pose_warn_s": (5.0, "Warn once, loudly, when images came for this long without any pose (s)."),
    "stream_end_s": (2.0, "No image for this long (s) ends the camera stream: the keyframe selector keeps what it "
                          "held back (a blurred turn, the last view), then stream_end_topic announces it; 0 = only "
                          "when the node stops."),
    "stream_end_topic": ("stream_end", "Where the end of a camera stream is announced, after its last keyframes "
                                       "(std_msgs/Header: frame_id = tour id, stamp = the last keyframe published, "
                                       "0 = none)."),
    "max_pending_frames": (60, "Frames waiting for a later pose before the oldest is processed; twice "
                               "as many waiting (processing behind the camera) drops the oldest."),
}


class CaptureNode(VlkngLifecycleNode):
    def __init__(self, memory: Memory | None = None, **kwargs: Any) -> None:
        super().__init__("vlkng_capture", PARAMS, memory, **kwargs)
        self.builder: MemoryBuilder | None = None
        self.stats = collections.Counter()
        self._pending: collections.deque = collections.deque()
        self._last_kept_ns: int | None = None
        self._gated: tuple[int, Any] | None = None  # the newest image skipped as too soon (the stream's end?)
        self._last_processed_ns: int | None = None
        self._last_published_ns = 0  # image stamp of the last keyframe published (0: none yet)
        self._last_image_at: float | None = None  # monotonic time of the newest image; None once flushed
        self._offered_depth: collections.OrderedDict = collections.OrderedDict()  # stamp -> depth handed in
        self._latest_pose_ns = -1
        self._latest_odom_ns = -1
        self._busy_s = 0.0
        self._depth: dict[str, tuple[list[int], list[Any]]] = {}  # topic kind -> (stamps, messages)
        self._depth_camera = None  # the depth camera's intrinsics (depth.camera_info_topic), latest
        self._awaiting_depth: collections.OrderedDict = collections.OrderedDict()  # keyframe stamp -> frame_id, no depth yet
        self.tf = None
        self._unposed_since: float | None = None
        self._warned_no_pose = False
        self.no_pose_warning = ""
        # one consumer of _pending at a time (the worker, or flush_pending); callbacks only
        # hold self._lock for a few microseconds, never while a frame is processed
        self._drain_lock = threading.Lock()
        self._builder_lock = threading.Lock()  # MemoryBuilder: the worker, camera info, late depth
        self._wake = threading.Event()
        self._worker: threading.Thread | None = None
        self._stop_worker = threading.Event()

    def setup(self) -> None:
        assert self.memory is not None
        self.tour_id = param(self, "tour_id") or datetime.now(timezone.utc).strftime("tour-%Y%m%d-%H%M%S")
        self.builder = MemoryBuilder(self.memory, self.cfg, None)
        self.poses = PoseBuffer(self.cfg.capture.pose_max_age_s)
        self.odom = PoseBuffer(self.cfg.capture.pose_max_age_s)
        self.max_pending = int(param(self, "max_pending_frames"))
        self.pose_wait_s = float(param(self, "pose_wait_s"))
        self.stream_end_s = float(param(self, "stream_end_s"))
        self.no_pose_warn_s = float(param(self, "no_pose_warn_s"))
        self.pub = self.keep(self.create_publisher(KeyframeMsg, param(self, "keyframe_topic"), 100))
        self.end_pub = self.keep(self.create_publisher(Header, param(self, "stream_end_topic"), 10))
        topic = self.cfg.image_topic
        kind = param(self, "image_type")
        if kind not in ("auto", "compressed", "raw"):
            raise ValueError(f"image_type {kind!r}: use auto, compressed or raw")
        compressed = kind == "compressed" or (kind == "auto" and topic.rstrip("/").endswith("compressed"))
        image_qos = QoSProfile(depth=int(param(self, "image_queue_depth")),
                               reliability=qos_profile_sensor_data.reliability,
                               durability=qos_profile_sensor_data.durability,
                               history=qos_profile_sensor_data.history)
        # images and poses in groups of their own: a multi-threaded executor never holds an image
        # back behind a pose callback (or the other way round)
        self._image_group = MutuallyExclusiveCallbackGroup()
        pose_group = MutuallyExclusiveCallbackGroup()
        self.keep(self.create_subscription(CompressedImage if compressed else Image, topic,
                                           self._on_image, image_qos, callback_group=self._image_group))
        source = self.pose_source = check_pose_source(self.cfg.capture.pose_source)
        self.map_frame = self.cfg.capture.map_frame
        sources = []
        if source in ("auto", "tf"):
            self.tf, why = make_live_tf(self, self.map_frame, self.cfg.capture.tf_max_gap_s)
            if self.tf is None and source == "tf":
                raise ValueError(f"capture.pose_source tf: {why} (install ros-<distro>-tf2-ros)")
            if self.tf is None:
                self.get_logger().info(f"no TF here ({why}): poses from /pose or /odom")
            else:
                sources.append(f"TF {self.map_frame} -> <image frame> ({self.tf.kind})")
        if source in ("auto", "pose"):
            self.keep(self.create_subscription(PoseWithCovarianceStamped, self.cfg.pose_topic,
                                               self._on_pose, QoSProfile(depth=100), callback_group=pose_group))
            sources.append(self.resolve_topic_name(self.cfg.pose_topic))
        if source in ("auto", "odom"):
            self.keep(self.create_subscription(Odometry, self.cfg.odom_topic, self._on_odom, QoSProfile(depth=100),
                                               callback_group=pose_group))
            sources.append(self.resolve_topic_name(self.cfg.odom_topic))
        self._pose_sources = sources
        self._image_topic = self.resolve_topic_name(topic)
        self._subscribe_depth(image_qos)
        info_topic = param(self, "camera_info_topic")
        if info_topic:
            self.keep(self.create_subscription(CameraInfo, info_topic, self._on_camera_info, 10))
        self._camera_set = False
        self._start_worker()
        self.get_logger().info(f"tour {self.tour_id!r}: images from {self._image_topic} "
                               f"({'CompressedImage' if compressed else 'Image'}), poses ({source}) from "
                               f"{', then '.join(sources)}")

    def _subscribe_depth(self, qos: QoSProfile) -> None:
        d = self.cfg.depth
        self._depth, self._depth_camera = {}, None
        if not d.enabled:
            return
        d.cloud_transform()  # ValueError on a malformed transform: configure fails
        if d.topic:
            compressed = d.topic.rstrip("/").lower().endswith("compresseddepth")
            self._depth["image"] = ([], [])
            self.keep(self.create_subscription(CompressedImage if compressed else Image, d.topic,
                                               lambda m: self._on_depth("image", m), qos))
        if d.topic and d.camera_info_topic:  # the depth camera's own intrinsics (depth not aligned)
            self.keep(self.create_subscription(CameraInfo, d.camera_info_topic, self._on_depth_info, 10))
        if d.cloud_topic:
            self._depth["cloud"] = ([], [])
            self.keep(self.create_subscription(PointCloud2, d.cloud_topic, lambda m: self._on_depth("cloud", m), qos))
        self.get_logger().info("depth from " + ", ".join(
            self.resolve_topic_name(t) for t in (d.topic, d.cloud_topic) if t))

    def _start_worker(self) -> None:
        self._stop_worker.clear()
        self._worker = threading.Thread(target=self._work, name=f"{self.get_name()}_frames", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        """Process waiting frames when a frame or a pose came in, and every 0.1 s: a frame waiting
        for its transforms is re-checked as they come in (TF callbacks do not reach this node
        when tf2_ros listens), and not left waiting when the camera stops."""
        while not self._stop_worker.is_set():
            self._wake.wait(0.1)
            self._wake.clear()
            if self.active and self.builder is not None:
                try:
                    self._drain()
                    end_s = float(self.stream_end_s)
                    with self._lock:
                        ended = (end_s > 0 and self._last_image_at is not None
                                 and time.monotonic() - self._last_image_at > end_s)
                    if ended:  # the camera stopped: frames still waiting for a pose will get none newer
                        self.flush_pending()
                except Exception as e:  # the worker must outlive one bad frame
                    self.stats["worker_error"] += 1
                    self.get_logger().error(f"frame processing: {type(e).__name__}: {e}",
                                            throttle_duration_sec=10.0)

    def _release(self) -> None:
        # stop the worker before the base class takes self._lock for teardown (the worker takes
        # it too); then teardown processes what is still waiting
        if self._worker is not None:
            self._stop_worker.set()
            self._wake.set()
            self._worker.join(timeout=30)
            self._worker = None
        super()._release()

    def teardown(self) -> None:
        self.flush_pending()
        if self.builder is not None:
            self.builder.depth_writer.flush()
        if self.tf is not None:
            self.tf.destroy(self)
            self.tf = None

    def flush_pending(self) -> None:
        """End of a stream: process every frame still waiting for a pose, then the newest frame if
        it was skipped as too soon, and keep what the keyframe selector held back (its last view)."""
        if self.builder is None:
            return
        self._drain(force=True)
        with self._drain_lock:
            with self._lock:
                gated, self._gated = self._gated, None
                streaming = self._last_image_at is not None  # images came since the last stream end
                self._last_image_at = None
                processed = self._last_processed_ns
            if gated is not None and (processed is None or gated[0] > processed):
                self._process(*gated, last_of_stream=True)
            with self._builder_lock:
                kfs = self.builder.flush_capture(self.tour_id)
            self._publish_kept(kfs)
            if streaming or kfs:
                self._announce_stream_end()

    def _announce_stream_end(self) -> None:
        """Tell the chunk builder the stream ended, naming the last keyframe published: it
        perceives the tour's partial chunk once it has that keyframe (no other is coming)."""
        with self._lock:
            last = self._last_published_ns
        self.end_pub.publish(Header(stamp=conv.time_from_ns(last), frame_id=self.tour_id))
        self.stats["stream_ends"] += 1
        self.get_logger().info(f"{self.tour_id}: camera stream ended ({self.stats['keyframes']} keyframes "
                               f"published, the last at {last})")

    # --- callbacks -------------------------------------------------------------------------
    def _on_camera_info(self, msg: CameraInfo) -> None:
        if self._camera_set or not self.active or msg.width == 0 or msg.k[0] <= 0:
            return
        camera = conv.camera_from_info(msg)
        if camera is None:
            return
        with self._builder_lock:
            self.builder.set_camera(self.tour_id, camera)
        self._camera_set = True

    def _on_depth_info(self, msg: CameraInfo) -> None:
        camera = conv.camera_from_info(msg)
        if camera is not None:
            self._depth_camera = camera

    def _on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        self._add_pose(msg, "pose")

    def _on_odom(self, msg: Odometry) -> None:
        self._add_pose(msg, "odom")

    def _add_pose(self, msg: Any, kind: str) -> None:
        if not self.active:
            return
        try:
            pose = conv.pose_from_msg(msg)
        except ValueError as e:
            self.get_logger().error(f"{kind} ignored: {e}")
            return
        stamp = conv.ns_from_time(msg.header.stamp)
        with self._lock:
            if kind == "pose":
                self.poses.add(stamp, pose)
                self._latest_pose_ns = max(self._latest_pose_ns, stamp)
            else:
                self.odom.add(stamp, pose)
                self._latest_odom_ns = max(self._latest_odom_ns, stamp)
        if self._pending:
            self._wake.set()

    def _on_depth(self, kind: str, msg: Any) -> None:
        if not self.active:
            return
        stamp = conv.ns_from_time(msg.header.stamp)
        with self._lock:
            stamps, msgs = self._depth[kind]
            if stamps and stamp < stamps[-1] - NS:
                stamps.clear()
                msgs.clear()  # stamps jumped back (replay restarted)
            i = bisect.bisect_left(stamps, stamp)
            stamps.insert(i, stamp)
            msgs.insert(i, msg)
            del stamps[:-DEPTH_BUFFER], msgs[:-DEPTH_BUFFER]
            # a keyframe stored before its depth came: attach it now
            tol = self._tolerance(kind)
            late = [(s, f) for s, f in self._awaiting_depth.items() if abs(s - stamp) <= tol]
            for s, _ in late:
                del self._awaiting_depth[s]
        for s, frame_id in late:
            with self._builder_lock:
                attached = self.builder.attach_depth(self.tour_id, s, self._depth_source(kind, msg, s, frame_id))
            if attached:
                self.stats["depth_late"] += 1

    def _tolerance(self, kind: str) -> int:
        tol = int(self.cfg.depth.max_offset_ms * 1e6)
        return tol * CLOUD_OFFSET_FACTOR if kind == "cloud" else tol

    def _depth_source(self, kind: str, msg: Any, stamp: int, camera_frame: str):
        """How to decode ``msg`` into metres registered to the colour image of the keyframe at
        ``stamp`` in ``camera_frame`` (run by the writer; None: no depth for it, logged here)."""
        if kind == "image" and not is_unregistered(msg.header.frame_id, camera_frame):
            return lambda: conv.depth_to_metres(msg)
        builder, lookup, d = self.builder, (self.tf.lookup if self.tf is not None else None), self.cfg.depth

        def without_depth(counter: str, why: ValueError) -> None:
            self.stats[counter] += 1
            self.get_logger().warning(f"keyframe {stamp} stored without depth: {why}", throttle_duration_sec=10.0)

        def image() -> Any:  # in another frame than the colour image: registered to it
            metres = conv.depth_to_metres(msg)
            try:  # the depth camera's CameraInfo as it is now (it may come after the depth image)
                return registered_depth(metres, msg.header.frame_id, self._depth_camera, builder.camera,
                                        camera_frame, stamp, lookup, d.noise(), d.topic)
            except ValueError as e:
                return without_depth("depth_unregistered", e)

        def cloud() -> Any:
            camera = builder.camera  # read now: the first keyframe sets it when CameraInfo did not
            if camera is None:
                raise ValueError("a point cloud needs the camera model (CameraInfo or the first frame)")
            try:
                rot, trans = cloud_to_camera(d, camera_frame, msg.header.frame_id, stamp, lookup)
            except ValueError as e:
                return without_depth("depth_no_tf", e)
            return cloud_to_depth(transform_points(conv.cloud_to_xyz(msg), rot, trans), camera, d.noise())
        return image if kind == "image" else cloud

    def _depth_for(self, stamp: int, frame_id: str):
        """The depth source nearest to ``stamp`` within tolerance (an aligned image first), for
        the image in ``frame_id``."""
        for kind in ("image", "cloud"):
            if kind not in self._depth:
                continue
            stamps, msgs = self._depth[kind]
            i = bisect.bisect_left(stamps, stamp)
            near = [j for j in (i - 1, i) if 0 <= j < len(stamps)]
            if near:
                j = min(near, key=lambda j: abs(stamps[j] - stamp))
                if abs(stamps[j] - stamp) <= self._tolerance(kind):
                    return self._depth_source(kind, msgs[j], stamp, frame_id)
        return None

    def _on_image(self, msg: Any) -> None:
        """Take the image in: the stride gate and the queue only (processing: the worker)."""
        if not self.active:
            return
        t0 = time.perf_counter()
        stamp = conv.image_stamp_ns(msg)
        with self._lock:
            self.stats["received"] += 1
            self._last_image_at = time.monotonic()
            last = self._last_kept_ns
            if last is not None and stamp < last - NS:
                self._last_kept_ns = last = None  # stamps jumped back (replay restarted): re-gate
            if last is not None and stamp - last < self.cfg.capture.min_interval_s * NS:
                self._skip_too_soon(stamp, msg)  # the selector would say 'too soon': skip decoding
            else:
                self._pending.append((stamp, msg, time.monotonic()))
                if len(self._pending) > 2 * self.max_pending:  # processing far behind: bounded memory
                    self._pending.popleft()
                    self.stats["backlog_dropped"] += 1
        self._wake.set()
        self._busy_s += time.perf_counter() - t0

    def _skip_too_soon(self, stamp: int, msg: Any) -> None:
        """A frame too soon after the last keyframe is not decoded; the newest is kept aside in
        case the stream ends on it (flush_pending). Called with ``self._lock`` held."""
        self.stats["too_soon"] += 1
        if self._gated is None or stamp > self._gated[0]:
            self._gated = (stamp, msg)

    def _drain(self, force: bool = False) -> None:
        """Process waiting frames whose pose can be decided (a later pose came, or never will).
        One consumer at a time; a frame is processed outside ``self._lock``."""
        max_wait = int(self.pose_wait_s * NS)
        with self._drain_lock:
            while True:
                with self._lock:
                    if not self._pending:
                        return
                    stamp, msg, arrived = self._pending[0]
                    newest = self._pending[-1][0]
                    # give up on the pose after pose_wait_s of camera time AND of waiting here: in
                    # a replay faster than real time (or a process starved of CPU) the transforms
                    # come in later than the images, not later in camera time
                    expired = newest - stamp > max_wait and time.monotonic() - arrived > self.pose_wait_s
                    ready = (force or self._pose_ready(stamp, msg.header.frame_id) or expired
                             or len(self._pending) > self.max_pending)
                    if not ready:
                        return
                    self._pending.popleft()
                self._process(stamp, msg)

    # --- poses -----------------------------------------------------------------------------
    def _pose_ready(self, stamp: int, frame_id: str) -> bool:
        """The best source that is coming in can give this stamp's pose (no need to wait more):
        TF once the tree connects the map to the camera, else /pose, else /odom."""
        frame_id = frame_id.lstrip("/")
        if self.tf is not None and self.tf.connected(frame_id):
            return self.tf.ready(stamp, frame_id)
        if self._latest_pose_ns >= 0:
            return self._latest_pose_ns >= stamp
        return 0 <= stamp <= self._latest_odom_ns

    def _pose_at(self, stamp: int, frame_id: str) -> Pose | None:
        """The first source (TF, /pose, /odom) with a pose at the stamp."""
        if self.tf is not None:
            pose = self.tf.pose(stamp, frame_id)
            if pose is not None:
                return pose
            if self.tf.connected(frame_id):
                self.stats["tf_late"] += 1  # TF did not cover the stamp in time: next source
        return self.poses.lookup(stamp) or self.odom.lookup(stamp)

    def _note_pose(self, posed: bool, frame_id: str) -> None:
        """Warn ONCE when images keep coming without any pose for ``no_pose_warn_s``."""
        if posed:
            self._unposed_since = None
            return
        now = time.monotonic()
        if self._unposed_since is None:
            self._unposed_since = now
        if self._warned_no_pose or now - self._unposed_since < self.no_pose_warn_s:
            return
        self._warned_no_pose = True
        waited = []
        if self.tf is not None:
            why = f" (last: {self.tf.last_error})" if self.tf.last_error else ""
            waited.append(f"TF {self.map_frame} -> {frame_id or '<image frame_id is empty>'} on /tf, /tf_static{why}")
        waited += [s for s in self._pose_sources if not s.startswith("TF ")]
        self.stats["no_pose_warnings"] += 1
        self.no_pose_warning = (
            f"NO POSE for {self.no_pose_warn_s:.0f} s of images on {self._image_topic}: waited for "
            f"{'; '.join(waited) or 'nothing (no pose source configured)'}. Keyframes are stored WITHOUT "
            f"poses (no goals for what they show) until a pose arrives. Check that SLAM/odometry run "
            f"and capture.pose_source ({self.pose_source}).")
        self.get_logger().warning(self.no_pose_warning)

    def _process(self, stamp: int, msg: Any, last_of_stream: bool = False) -> None:
        """Decode, pose and offer one frame to the selector. ``last_of_stream``: the stream ended on
        this frame, so it is offered even when too soon (the selector decides at its flush)."""
        with self._lock:
            last = self._last_kept_ns
            if not last_of_stream and last is not None and 0 <= stamp - last < self.cfg.capture.min_interval_s * NS:
                self._skip_too_soon(stamp, msg)
                return
        try:
            rgb = conv.image_to_rgb(msg)
        except ValueError as e:
            self.stats["bad_image"] += 1
            self.get_logger().error(f"image {stamp} skipped: {e}")
            return
        frame_id = msg.header.frame_id.lstrip("/")
        with self._lock:  # pose buffers and depth messages are filled by the callbacks
            pose = self._pose_at(stamp, frame_id)
            depth = self._depth_for(stamp, frame_id) if self._depth else None
        self._note_pose(pose is not None, frame_id)
        try:
            with self._builder_lock:
                kfs = self.builder.ingest(self.tour_id, stamp, rgb, pose, frame_id, depth=depth)
        except Exception as e:  # store down: logged, the stream goes on
            self.stats["store_error"] += 1
            self.get_logger().error(f"keyframe {stamp} not stored: {type(e).__name__}: {e}")
            return
        self.stats["decoded"] += 1
        with self._lock:
            self._last_processed_ns = stamp
            self._offered_depth[stamp] = depth is not None
            while len(self._offered_depth) > DEPTH_BUFFER:
                self._offered_depth.popitem(last=False)
        self._publish_kept(kfs)

    def _publish_kept(self, kfs: list) -> None:
        """Count and publish keyframes just stored (this frame's, or earlier ones held back)."""
        for kf in kfs:
            with self._lock:
                self._last_kept_ns = max(kf.stamp_ns, self._last_kept_ns or kf.stamp_ns)
                self._last_published_ns = kf.stamp_ns
                self.stats["keyframes"] += 1
                if self._offered_depth.get(kf.stamp_ns):
                    self.stats["keyframes_with_depth"] += 1
                elif self._depth:
                    self._awaiting_depth[kf.stamp_ns] = kf.frame_id
                    while len(self._awaiting_depth) > DEPTH_BUFFER:
                        self._awaiting_depth.popitem(last=False)
            if kf.pose is None:
                self.stats["keyframes_without_pose"] += 1
            self.pub.publish(conv.keyframe_to_msg(kf))


def main(args: list[str] | None = None) -> int:
    return spin_main(CaptureNode, args)
