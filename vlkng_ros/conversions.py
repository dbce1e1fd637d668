"""The one place that converts between ROS messages and vlkng's core types.

Nodes and tools never build or read vlkng_msgs field by field themselves: they call these
functions, so a message change is made here once. Needs rclpy's message packages (std_msgs,
geometry_msgs, sensor_msgs, builtin_interfaces, vlkng_msgs).

Images, depth, point clouds and camera models use the ROS libraries where they are importable,
and say so once in the log: ``cv_bridge`` (image and compressed-image messages),
``sensor_msgs_py.point_cloud2`` (clouds), ``image_geometry.PinholeCameraModel`` (CameraInfo).
None of them has a PyPI wheel, so where they are missing (a venv robot stack) vlkng's own numpy
paths in core/images.py and core/depth.py do the same job from the messages' documented layouts.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Iterable

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, PoseStamped
from vlkng_msgs.msg import ChunkGraph as ChunkGraphMsg
from vlkng_msgs.msg import GraphUpdate as GraphUpdateMsg
from vlkng_msgs.msg import Keyframe as KeyframeMsg
from vlkng_msgs.msg import Object as ObjectMsg
from vlkng_msgs.msg import ObjectBox as ObjectBoxMsg
from vlkng_msgs.msg import RankedFrame as RankedFrameMsg
from vlkng_msgs.msg import Relation as RelationMsg

from .core.ask.types import AskRequest, AskResult, EvidenceObject, EvidenceRelation, RankedFrame, TypedValue
from .core.depth import cloud_xyz
from .core.images import (decode_compressed, decode_compressed_depth, decode_depth, decode_raw,
                          depth_from_array, is_compressed_depth)
from .core.model import CameraModel, ChunkGraph, ChunkObject, ChunkRelation, Keyframe, ObjectNode, Observation, Pose
from .core.model import Relation

log = logging.getLogger("vlkng.conversions")

NS = 1_000_000_000
MAX_FRAMES_PER_OBJECT = 64  # detections carried per object in Ask evidence (the graph has all)


# --- time ----------------------------------------------------------------------------------
def time_from_ns(stamp_ns: int) -> Time:
    """Integer nanoseconds -> builtin_interfaces/Time (non-negative)."""
    stamp_ns = int(stamp_ns)
    if stamp_ns < 0:
        raise ValueError(f"negative stamp {stamp_ns} cannot be a ROS time")
    return Time(sec=stamp_ns // NS, nanosec=stamp_ns % NS)


def ns_from_time(stamp: Any) -> int:
    """builtin_interfaces/Time (or rclpy Time's msg) -> integer nanoseconds."""
    return int(stamp.sec) * NS + int(stamp.nanosec)


# --- poses ---------------------------------------------------------------------------------
def pose_to_msg(pose: Pose, stamp_ns: int = 0) -> PoseStamped:
    msg = PoseStamped()
    msg.header.stamp = time_from_ns(stamp_ns)
    msg.header.frame_id = pose.frame_id
    p, q = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z = float(pose.x), float(pose.y), float(pose.z)
    q.x, q.y, q.z, q.w = float(pose.qx), float(pose.qy), float(pose.qz), float(pose.qw)
    return msg


def pose_from_msg(msg: Any) -> Pose:
    """PoseStamped, PoseWithCovarianceStamped, PoseWithCovariance or Pose -> Pose."""
    frame_id = msg.header.frame_id if hasattr(msg, "header") else "map"
    inner = msg.pose if hasattr(msg, "pose") else msg
    if hasattr(inner, "pose"):  # PoseWithCovariance
        inner = inner.pose
    p, q = inner.position, inner.orientation
    norm = float(np.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w))
    if not np.isfinite(norm) or norm < 1e-9:
        raise ValueError("pose has an invalid (zero or non-finite) quaternion")
    return Pose(float(p.x), float(p.y), float(p.z), q.x / norm, q.y / norm, q.z / norm, q.w / norm,
                frame_id or "map")


def optional_pose(has_pose: bool, msg: PoseStamped) -> Pose | None:
    return pose_from_msg(msg) if has_pose else None


# --- images --------------------------------------------------------------------------------
_LIBS: dict[str, Any] = {}


def ros_library(name: str) -> Any | None:
    """cv_bridge's CvBridge, sensor_msgs_py.point_cloud2 or image_geometry.PinholeCameraModel
    when importable, else None; which one is used is logged once per library."""
    if name not in _LIBS:
        try:
            if name == "cv_bridge":
                from cv_bridge import CvBridge

                lib: Any = CvBridge()
            elif name == "sensor_msgs_py":
                from sensor_msgs_py import point_cloud2 as lib
            elif name == "image_geometry":
                from image_geometry import PinholeCameraModel as lib
            else:
                raise ValueError(f"unknown library {name!r}")
            log.info("%s is installed: using it for %s", name, _USES[name])
        except ImportError:
            lib = None
            log.info("%s is not importable: %s with vlkng's own numpy path", name, _USES[name])
        _LIBS[name] = lib
    return _LIBS[name]


_USES = {"cv_bridge": "image messages", "sensor_msgs_py": "PointCloud2 messages",
         "image_geometry": "CameraInfo"}


def _bridge_call(fn: Any, *args: Any) -> np.ndarray:
    try:
        return np.asarray(fn(*args))
    except Exception as e:  # CvBridgeError and OpenCV errors alike: the one-line ValueError
        raise ValueError(f"cv_bridge could not convert the image: {e}") from e


def image_to_rgb(msg: Any, reduce: int = 1) -> np.ndarray:
    """sensor_msgs/CompressedImage (jpeg/png) or sensor_msgs/Image (every encoding in
    core/images.py) -> RGB uint8 HxWx3. ``reduce`` (1, 2, 4, 8) decodes at 1/reduce size, which
    is several times cheaper for compressed images (numpy path: cv_bridge has no reduced decode).
    Raises ValueError naming what is wrong."""
    compressed = hasattr(msg, "format")
    bridge = ros_library("cv_bridge")
    if bridge is not None and not (compressed and reduce > 1):
        if compressed:
            rgb = _bridge_call(bridge.compressed_imgmsg_to_cv2, msg, "rgb8")
        else:
            rgb = _bridge_call(bridge.imgmsg_to_cv2, msg, "rgb8")
        if reduce > 1:
            import cv2

            rgb = cv2.resize(rgb, (max(1, rgb.shape[1] // reduce), max(1, rgb.shape[0] // reduce)),
                             interpolation=cv2.INTER_AREA)
        return rgb
    if compressed:
        return decode_compressed(bytes(msg.data), msg.format or "", reduce)
    return decode_raw(msg.encoding, int(msg.width), int(msg.height), int(msg.step), bytes(msg.data), reduce,
                      bool(getattr(msg, "is_bigendian", False)))


def depth_to_metres(msg: Any) -> np.ndarray:
    """A depth sensor_msgs/Image (16UC1 mm or 32FC1 m) or a compressedDepth CompressedImage ->
    float32 metres HxW, NaN = no reading. Raises ValueError naming what is wrong."""
    if hasattr(msg, "format"):
        if not is_compressed_depth(msg.format):
            raise ValueError(f"CompressedImage format {msg.format!r} is not compressedDepth")
        return decode_compressed_depth(bytes(msg.data), msg.format)  # an image_transport plugin, not cv_bridge
    bridge = ros_library("cv_bridge")
    if bridge is not None:
        if str(msg.encoding).lower() not in ("16uc1", "mono16", "32fc1"):
            raise ValueError(f"encoding {msg.encoding!r} is not a depth encoding (16UC1 mm or 32FC1 m)")
        return depth_from_array(_bridge_call(bridge.imgmsg_to_cv2, msg, "passthrough"))
    return decode_depth(msg.encoding, int(msg.width), int(msg.height), int(msg.step), bytes(msg.data),
                        bool(getattr(msg, "is_bigendian", False)))


def cloud_to_xyz(msg: Any) -> np.ndarray:
    """sensor_msgs/PointCloud2 -> Nx3 float32 x, y, z in the cloud's frame (NaN points dropped)."""
    pc2 = ros_library("sensor_msgs_py")
    if pc2 is not None:
        try:
            pts = pc2.read_points_numpy(msg, field_names=("x", "y", "z"), skip_nans=True)
        except Exception as e:  # malformed cloud: the one-line ValueError
            raise ValueError(f"sensor_msgs_py could not read the cloud: {e}") from e
        return np.asarray(pts, dtype=np.float32).reshape(-1, 3)
    fields = [(f.name, int(f.offset), int(f.datatype), int(f.count)) for f in msg.fields]
    return cloud_xyz(fields, int(msg.width), int(msg.height), int(msg.point_step), int(msg.row_step),
                     bytes(msg.data), bool(msg.is_bigendian))


def camera_from_info(msg: Any) -> CameraModel | None:
    """sensor_msgs/CameraInfo -> CameraModel (image_geometry's PinholeCameraModel reads it where
    installed); None when the message has no usable intrinsics."""
    geometry = ros_library("image_geometry")
    if geometry is not None and int(msg.width) > 0 and float(msg.k[0]) > 0:
        model = geometry()
        model.fromCameraInfo(msg)
        return CameraModel(int(msg.width), int(msg.height), float(model.fx()), float(model.fy()),
                           float(model.cx()), float(model.cy()))
    return CameraModel.from_k(int(msg.width), int(msg.height), msg.k)


def image_stamp_ns(msg: Any) -> int:
    return ns_from_time(msg.header.stamp)


# --- keyframes -----------------------------------------------------------------------------
def keyframe_to_msg(kf: Keyframe) -> KeyframeMsg:
    msg = KeyframeMsg()
    msg.header.stamp = time_from_ns(kf.stamp_ns)
    msg.header.frame_id = kf.frame_id or "camera"  # the image's own camera frame where known
    msg.tour_id = kf.tour_id
    msg.index = int(kf.index)
    msg.has_pose = kf.pose is not None
    if kf.pose is not None:
        msg.pose = pose_to_msg(kf.pose, kf.stamp_ns)
    msg.image_ref = kf.image_ref
    msg.width, msg.height = int(kf.width), int(kf.height)
    msg.place = kf.place or ""
    return msg


def keyframe_from_msg(msg: KeyframeMsg) -> Keyframe:
    return Keyframe(tour_id=msg.tour_id, stamp_ns=ns_from_time(msg.header.stamp),
                    index=int(msg.index), width=int(msg.width), height=int(msg.height),
                    pose=optional_pose(msg.has_pose, msg.pose), image_ref=msg.image_ref,
                    place=msg.place or None,
                    frame_id="" if msg.header.frame_id == "camera" else msg.header.frame_id)


# --- objects and relations -----------------------------------------------------------------
def _box_msg(tour_id: str, stamp_ns: int, bbox: Iterable[float]) -> ObjectBoxMsg:
    box = ObjectBoxMsg()
    box.tour_id = tour_id
    box.stamp = time_from_ns(stamp_ns)
    box.bbox = [float(v) for v in bbox]
    return box


def _set_descriptor(msg: ObjectMsg, label: str, description: str, attributes: dict[str, str],
                    affordances: list[str]) -> None:
    msg.label, msg.description = label, description
    keys = sorted(attributes)
    msg.attribute_keys = keys
    msg.attribute_values = [str(attributes[k]) for k in keys]
    msg.affordances = list(affordances)


def _attributes(msg: ObjectMsg) -> dict[str, str]:
    if len(msg.attribute_keys) != len(msg.attribute_values):
        raise ValueError(f"object {msg.id!r}: {len(msg.attribute_keys)} attribute keys but "
                         f"{len(msg.attribute_values)} values")
    return dict(zip(msg.attribute_keys, msg.attribute_values))


def _set_position(msg: ObjectMsg, position: tuple[float, float] | None) -> None:
    msg.has_position = position is not None
    if position is not None:
        msg.position = Point(x=float(position[0]), y=float(position[1]), z=0.0)


def object_node_to_msg(node: ObjectNode, max_frames: int = MAX_FRAMES_PER_OBJECT) -> ObjectMsg:
    """A global object; ``frames`` carries its detections (the most recent ``max_frames``)."""
    msg = ObjectMsg()
    msg.id = node.id
    _set_descriptor(msg, node.label, node.description, node.attributes, node.affordances)
    msg.first_seen = time_from_ns(node.first_seen_ns)
    msg.last_seen = time_from_ns(node.last_seen_ns)
    observations = sorted(node.observations, key=lambda o: o.stamp_ns)[-max_frames:]
    msg.frames = [_box_msg(o.tour_id, o.stamp_ns, o.bbox) for o in observations]
    _set_position(msg, node.position)
    return msg


def object_node_from_msg(msg: ObjectMsg) -> ObjectNode:
    observations = [Observation(b.tour_id, ns_from_time(b.stamp), tuple(float(v) for v in b.bbox),
                                "", "") for b in msg.frames]
    return ObjectNode(id=msg.id, label=msg.label, description=msg.description,
                      attributes=_attributes(msg), affordances=list(msg.affordances),
                      first_seen_ns=ns_from_time(msg.first_seen), last_seen_ns=ns_from_time(msg.last_seen),
                      observations=observations,
                      position=(msg.position.x, msg.position.y) if msg.has_position else None,
                      tours=sorted({o.tour_id for o in observations if o.tour_id}))


def relation_to_msg(subject: str, predicate: str, obj: str, stamps: Iterable[int]) -> RelationMsg:
    return RelationMsg(subject=subject, predicate=predicate, object=obj,
                       stamps=[time_from_ns(s) for s in stamps])


def relation_from_msg(msg: RelationMsg, tour_id: str = "") -> Relation:
    return Relation(msg.subject, msg.predicate, msg.object,
                    [ns_from_time(s) for s in msg.stamps], tour_id)


# --- chunk graphs --------------------------------------------------------------------------
def chunk_graph_to_msg(chunk: ChunkGraph) -> ChunkGraphMsg:
    msg = ChunkGraphMsg()
    msg.header.stamp = time_from_ns(chunk.frames[0] if chunk.frames else 0)
    msg.header.frame_id = "map"
    msg.tour_id = chunk.tour_id
    msg.chunk_index = int(chunk.chunk_index)
    msg.chunk_id = chunk.chunk_id
    msg.frames = [time_from_ns(s) for s in chunk.frames]
    objects = []
    for obj in chunk.objects:
        o = ObjectMsg()
        o.id = obj.local_id
        _set_descriptor(o, obj.label, obj.description, obj.attributes, obj.affordances)
        stamps = sorted(obj.boxes)
        o.frames = [_box_msg("", s, obj.boxes[s]) for s in stamps]
        if stamps:
            o.first_seen, o.last_seen = time_from_ns(stamps[0]), time_from_ns(stamps[-1])
        objects.append(o)
    msg.objects = objects
    msg.relations = [relation_to_msg(r.subject, r.predicate, r.object, r.stamps) for r in chunk.relations]
    place_stamps = sorted(chunk.places)
    msg.place_stamps = [time_from_ns(s) for s in place_stamps]
    msg.place_names = [chunk.places[s] for s in place_stamps]
    msg.warnings = list(chunk.warnings)
    return msg


def chunk_graph_from_msg(msg: ChunkGraphMsg) -> ChunkGraph:
    if len(msg.place_stamps) != len(msg.place_names):
        raise ValueError(f"chunk {msg.chunk_id}: place_stamps and place_names differ in length")
    objects = [ChunkObject(local_id=o.id, label=o.label,
                           boxes={ns_from_time(b.stamp): tuple(float(v) for v in b.bbox) for b in o.frames},
                           attributes=_attributes(o), affordances=list(o.affordances),
                           description=o.description) for o in msg.objects]
    relations = [ChunkRelation(r.subject, r.predicate, r.object, [ns_from_time(s) for s in r.stamps])
                 for r in msg.relations]
    return ChunkGraph(msg.tour_id, int(msg.chunk_index), [ns_from_time(s) for s in msg.frames],
                      objects, relations,
                      {ns_from_time(s): n for s, n in zip(msg.place_stamps, msg.place_names)},
                      list(msg.warnings))


# --- graph updates -------------------------------------------------------------------------
def graph_update_msg(report: Any, tour_id: str, now_ns: int, totals: tuple[int, int, int],
                     seconds: float) -> GraphUpdateMsg:
    """A GraphUpdate from a STOA MergeReport (chunk_id, skipped, created, matched)."""
    msg = GraphUpdateMsg()
    msg.header.stamp = time_from_ns(now_ns)
    msg.header.frame_id = "map"
    msg.tour_id = tour_id
    msg.chunk_id = report.chunk_id
    msg.skipped = bool(report.skipped)
    msg.created_ids = list(report.created)
    matched = dict(report.matched)
    msg.matched_local_ids = list(matched.keys())
    msg.matched_ids = [matched[k] for k in msg.matched_local_ids]
    msg.total_objects, msg.total_relations, msg.total_keyframes = (int(v) for v in totals)
    msg.merge_seconds = float(seconds)
    return msg


# --- /ask ----------------------------------------------------------------------------------
def ask_request_from_msg(req: Any) -> AskRequest:
    """An AskRequest from an Ask.Request (top_k 0: the engine's configured ask.top_k)."""
    return AskRequest(question=req.question, options=list(req.options), top_k=int(req.top_k),
                      mode=req.mode or None)


def ask_request_to_msg(request: AskRequest, req: Any) -> Any:
    """Fill an Ask.Request (``req``, passed in so this module needs no srv import)."""
    req.question = request.question
    req.options = list(request.options)
    req.top_k = int(request.top_k)
    req.mode = request.mode or ""
    return req


def ranked_frame_to_msg(frame: RankedFrame) -> RankedFrameMsg:
    msg = RankedFrameMsg()
    msg.tour_id = frame.tour_id
    msg.stamp = time_from_ns(frame.stamp_ns)
    msg.score = float(frame.score)
    msg.has_pose = frame.pose is not None
    if frame.pose is not None:
        msg.pose = pose_to_msg(frame.pose, frame.stamp_ns)
    msg.object_ids = list(frame.object_ids)
    return msg


def evidence_object_to_msg(obj: EvidenceObject, max_frames: int = MAX_FRAMES_PER_OBJECT) -> ObjectMsg:
    msg = ObjectMsg()
    msg.id = obj.id
    _set_descriptor(msg, obj.label, obj.description, obj.attributes, obj.affordances)
    frames = sorted(obj.frames, key=lambda f: f[1])
    if frames:
        msg.first_seen, msg.last_seen = time_from_ns(frames[0][1]), time_from_ns(frames[-1][1])
    msg.frames = [_box_msg(t, s, (0.0, 0.0, 0.0, 0.0)) for t, s in frames[-max_frames:]]
    _set_position(msg, obj.position)
    msg.score = float(obj.score)
    return msg


def ask_result_to_msg(result: AskResult, response: Any) -> Any:
    """Fill an Ask.Response from an AskResult. The goal pose's stamp is that of the best frame."""
    response.success = bool(result.success)
    response.message = result.message
    response.answer = result.answer
    response.choice = result.choice
    response.found = bool(result.found)
    response.frame_stamps = [time_from_ns(f.stamp_ns) for f in result.frames]
    response.frame_scores = [float(f.score) for f in result.frames]
    response.frames = [ranked_frame_to_msg(f) for f in result.frames]
    response.has_goal = result.goal is not None
    if result.goal is not None:
        response.goal = pose_to_msg(result.goal, result.frames[0].stamp_ns if result.frames else 0)
    response.goal_source = result.goal_source
    response.target_object_id = result.target_object_id
    response.evidence_objects = [evidence_object_to_msg(o) for o in result.evidence_objects]
    response.evidence_relations = [relation_to_msg(r.subject, r.predicate, r.object, r.stamps)
                                   for r in result.evidence_relations]
    response.timing_stages = list(result.timings_s)
    response.timing_seconds = [float(v) for v in result.timings_s.values()]
    response.token_stages = list(result.prompt_tokens)
    response.token_counts = [int(v) for v in result.prompt_tokens.values()]
    response.resolved_mode = result.mode
    value = result.value
    response.answer_type = result.answer_type
    response.value_kind = value.kind
    response.value_text = value.text
    response.value_number = float(value.number) if value.number is not None else math.nan
    response.value_yes_no = -1 if value.yes is None else int(bool(value.yes))
    response.value_time = time_from_ns(value.stamp_ns or 0)
    response.value_places = list(value.places)
    response.value_direction = value.direction
    response.evidence_image_path = result.evidence_image
    return response


def ask_result_from_msg(response: Any) -> AskResult:
    frames = [RankedFrame(f.tour_id, ns_from_time(f.stamp), float(f.score),
                          optional_pose(f.has_pose, f.pose), list(f.object_ids))
              for f in response.frames]
    evidence = [EvidenceObject(o.id, o.label, o.description, _attributes(o), list(o.affordances),
                               (o.position.x, o.position.y) if o.has_position else None,
                               [(b.tour_id, ns_from_time(b.stamp)) for b in o.frames], float(o.score))
                for o in response.evidence_objects]
    relations = [EvidenceRelation(r.subject, r.predicate, r.object, [ns_from_time(s) for s in r.stamps])
                 for r in response.evidence_relations]
    return AskResult(success=response.success, message=response.message, answer=response.answer,
                     choice=response.choice, found=response.found, frames=frames,
                     goal=optional_pose(response.has_goal, response.goal),
                     goal_source=response.goal_source, target_object_id=response.target_object_id,
                     evidence_objects=evidence, evidence_relations=relations,
                     timings_s=dict(zip(response.timing_stages, response.timing_seconds)),
                     prompt_tokens=dict(zip(response.token_stages, response.token_counts)),
                     mode=response.resolved_mode, answer_type=response.answer_type,
                     value=TypedValue(response.value_kind, response.value_text,
                                      None if math.isnan(response.value_number) else float(response.value_number),
                                      None if response.value_yes_no < 0 else bool(response.value_yes_no),
                                      ns_from_time(response.value_time) if response.value_kind == "time" else None,
                                      list(response.value_places), response.value_direction),
                     evidence_image=response.evidence_image_path)


# --- operator tools: RViz markers, GetFrame, the Ask action ---------------------------------
MARKER_NS_OBJECTS = "vlkng_objects"
MARKER_NS_LABELS = "vlkng_labels"
MARKER_NS_GOAL = "vlkng_goal"
OBJECT_HEIGHT_M = 0.4  # drawn height of an object's cylinder (the memory holds floor positions)


def object_markers(nodes: Iterable[ObjectNode], goal: PoseStamped | None, stamp_ns: int,
                   frame_id: str = "map", places: Any = None) -> Any:
    """A MarkerArray: each placed object as a cylinder (footprint-sized, coloured by class) and a
    text label (readable name) above it, plus the current goal as an arrow; a DELETEALL first so
    objects consolidated away disappear. Marker ids are stable per object (hash of its id).
    ``places``: the memory's ``present.place_index``, for the room each label names (where the object
    is, as everywhere else); without it the build-time room."""
    import zlib

    from visualization_msgs.msg import Marker, MarkerArray

    from .core.present import class_colour, footprint_m, object_name

    out = MarkerArray()
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id = frame_id
    out.markers.append(clear)
    stamp = time_from_ns(stamp_ns)
    for node in nodes:
        if node.position is None:
            continue
        mid = zlib.crc32(node.id.encode()) & 0x7FFFFFFF
        r, g, b = (c / 255.0 for c in class_colour(node.label))
        size = footprint_m(node)
        body = Marker(ns=MARKER_NS_OBJECTS, id=mid, type=Marker.CYLINDER, action=Marker.ADD)
        body.header.frame_id, body.header.stamp = frame_id, stamp
        body.pose.position.x, body.pose.position.y = float(node.position[0]), float(node.position[1])
        body.pose.position.z = OBJECT_HEIGHT_M / 2
        body.pose.orientation.w = 1.0
        body.scale.x = body.scale.y = float(size)
        body.scale.z = OBJECT_HEIGHT_M
        body.color.r, body.color.g, body.color.b, body.color.a = r, g, b, 0.6
        text = Marker(ns=MARKER_NS_LABELS, id=mid, type=Marker.TEXT_VIEW_FACING, action=Marker.ADD)
        text.header = body.header
        text.pose.position.x, text.pose.position.y = body.pose.position.x, body.pose.position.y
        text.pose.position.z = OBJECT_HEIGHT_M + 0.25
        text.pose.orientation.w = 1.0
        text.scale.z = 0.25
        text.color.r = text.color.g = text.color.b = text.color.a = 1.0
        text.text = object_name(node, places)
        out.markers += [body, text]
    if goal is not None:
        arrow = Marker(ns=MARKER_NS_GOAL, id=0, type=Marker.ARROW, action=Marker.ADD)
        arrow.header.frame_id, arrow.header.stamp = goal.header.frame_id or frame_id, stamp
        arrow.pose = goal.pose
        arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.8, 0.15, 0.15
        arrow.color.r, arrow.color.a = 1.0, 1.0
        out.markers.append(arrow)
    return out


def frame_response(memory: Any, request: Any, response: Any) -> Any:
    """Fill a GetFrame.Response from the memory's frame store (see srv/GetFrame.srv)."""
    from .core.present import boxes_in_frame, frame_jpeg, frame_where

    stamp_ns = ns_from_time(request.stamp)
    try:
        data = frame_jpeg(memory, request.tour_id, stamp_ns, bool(request.draw_boxes),
                          list(request.highlight_ids), int(request.max_side))
    except (ValueError, FileNotFoundError) as e:
        response.success, response.message = False, f"no keyframe {request.tour_id!r} at {stamp_ns}: {e}"
        return response
    response.success, response.message = True, "ok"
    response.image.header.stamp = time_from_ns(stamp_ns)
    response.image.header.frame_id = "map"
    response.image.format = "jpeg"
    response.image.data = data
    boxes = boxes_in_frame(memory, request.tour_id, stamp_ns)
    response.boxes = [_box_msg(request.tour_id, stamp_ns, b["bbox"]) for b in boxes]
    response.box_object_ids = [b["id"] for b in boxes]
    response.box_labels = [b["name"] for b in boxes]
    where = frame_where(memory, request.tour_id, stamp_ns)
    kf = memory.graph.get_keyframe(request.tour_id, stamp_ns)
    response.has_pose = bool(kf and kf.pose)
    if kf and kf.pose:
        response.pose = pose_to_msg(kf.pose, stamp_ns)
    response.place, response.where = where["place"], where["text"]
    return response


def ask_action_result(result: AskResult, payload: dict[str, Any], action_result: Any, service_type: Any) -> Any:
    """Fill an Ask action result: every field it shares with the Ask service's response (filled
    by ``ask_result_to_msg``), the target's readable name, and the whole result as JSON."""
    import json

    response = ask_result_to_msg(result, service_type.Response())
    for name in action_result.get_fields_and_field_types():
        if name in response.get_fields_and_field_types():
            setattr(action_result, name, getattr(response, name))
    action_result.target_name = payload.get("target_name", "")
    action_result.result_json = json.dumps(payload, default=str)
    return action_result
