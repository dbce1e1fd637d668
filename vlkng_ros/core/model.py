"""Typed data model shared by every part of vlkng.

Units: stamps are integer nanoseconds (ROS time of the image header); positions are metres in
the map frame; boxes are ``(x1, y1, x2, y2)`` pixels of the image they were detected in.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

BBox = tuple[float, float, float, float]


def replace_word(text: str, old: str, new: str) -> str:
    """``text`` with every whole-word ``old`` (any case) replaced by ``new``."""
    if not text or not old:
        return text
    return re.sub(rf"\b{re.escape(old)}\b", new, text, flags=re.IGNORECASE)


def clip_bbox(bbox: BBox | list[float], width: int, height: int) -> BBox | None:
    """Clip a box to the image; None when it is degenerate or entirely outside."""
    x1, y1, x2, y2 = (float(v) for v in bbox)
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)):
        return None
    x1, x2 = sorted((x1, x2))
    y1, y2 = sorted((y1, y2))
    x1, x2 = max(0.0, x1), min(float(width), x2)
    y1, y2 = max(0.0, y1), min(float(height), y2)
    if x2 - x1 < 1.0 or y2 - y1 < 1.0:
        return None
    return (x1, y1, x2, y2)


@dataclass(frozen=True)
class Pose:
    """A pose in the map frame (position in metres, orientation as a unit quaternion)."""

    x: float
    y: float
    z: float = 0.0
    qx: float = 0.0
    qy: float = 0.0
    qz: float = 0.0
    qw: float = 1.0
    frame_id: str = "map"

    @property
    def yaw(self) -> float:
        """Heading about +z in radians."""
        return math.atan2(2.0 * (self.qw * self.qz + self.qx * self.qy),
                          1.0 - 2.0 * (self.qy * self.qy + self.qz * self.qz))

    @staticmethod
    def from_xy_yaw(x: float, y: float, yaw: float, frame_id: str = "map") -> "Pose":
        return Pose(x, y, 0.0, 0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0), frame_id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any] | None) -> "Pose | None":
        return None if d is None else Pose(**d)


@dataclass(frozen=True)
class CameraModel:
    """Pinhole intrinsics (pixels). Built from CameraInfo, or from a horizontal FOV."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @staticmethod
    def from_hfov(width: int, height: int, hfov_deg: float) -> "CameraModel":
        fx = (width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
        return CameraModel(width, height, fx, fx, width / 2.0, height / 2.0)

    @staticmethod
    def from_k(width: int, height: int, k: Any) -> "CameraModel | None":
        """From a CameraInfo's size and row-major 3x3 K; None when K or the size is unusable."""
        k = [float(v) for v in k]
        if int(width) <= 0 or int(height) <= 0 or len(k) < 6 or not (k[0] > 0 and k[4] > 0):
            return None
        return CameraModel(int(width), int(height), k[0], k[4], k[2], k[5])

    def bearing(self, u: float) -> float:
        """Angle (rad, left positive) of image column ``u`` relative to the optical axis."""
        return math.atan2(self.cx - u, self.fx)

    def project(self, points: Any) -> Any:
        """Nx3 points in the optical frame (x right, y down, z forward, metres) -> Nx2 pixels
        (u, v); points at or behind the camera get NaN."""
        import numpy as np

        p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(p[:, 2] > 1e-6, p[:, 2], np.nan)
            return np.column_stack([self.fx * p[:, 0] / z + self.cx, self.fy * p[:, 1] / z + self.cy])

    def back_project(self, u: Any, v: Any, depth: Any) -> Any:
        """Pixels (u, v) with optical depth z (m) -> Nx3 points in the optical frame."""
        import numpy as np

        u, v, z = (np.asarray(a, dtype=np.float64).ravel() for a in (u, v, depth))
        return np.column_stack([(u - self.cx) / self.fx * z, (v - self.cy) / self.fy * z, z])


@dataclass
class Keyframe:
    """A kept camera frame: the unit that is stored, chunked, retrieved and ranked."""

    tour_id: str
    stamp_ns: int
    index: int  # 0-based order among the tour's keyframes
    width: int
    height: int
    pose: Pose | None = None  # None when no pose was close enough in time (never made up)
    image_ref: str = ""  # frame-store key of the JPEG
    place: str | None = None  # set from perception when it names the kind of place
    frame_id: str = ""  # the image's header.frame_id (the camera frame its pose is of, with TF)

    @property
    def key(self) -> str:
        return frame_key(self.tour_id, self.stamp_ns)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pose"] = self.pose.to_dict() if self.pose else None
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Keyframe":
        d = dict(d)
        d["pose"] = Pose.from_dict(d.get("pose"))
        return Keyframe(**d)


def frame_key(tour_id: str, stamp_ns: int) -> str:
    return f"{tour_id}/{int(stamp_ns)}"


@dataclass
class ChunkObject:
    """One object as the VLM saw it inside one chunk. ``local_id`` is meaningful only there."""

    local_id: str
    label: str
    boxes: dict[int, BBox]  # stamp_ns -> bbox, frames of this chunk only
    attributes: dict[str, str] = field(default_factory=dict)  # color, material, size, ...
    affordances: list[str] = field(default_factory=list)
    description: str = ""

    def text(self) -> str:
        """The descriptor text used for embeddings and prompts."""
        attrs = " ".join(v for _, v in sorted(self.attributes.items()) if v)
        desc = self.description or f"{attrs} {self.label}".strip()
        aff = ", ".join(self.affordances)
        return f"{desc}. used to: {aff}" if aff else desc


@dataclass
class ChunkRelation:
    subject: str  # local id
    predicate: str  # "on", "next to", "under", ...
    object: str  # local id
    stamps: list[int] = field(default_factory=list)


@dataclass
class ChunkGraph:
    """The VLM's 'local' knowledge graph for b consecutive keyframes of one tour."""

    tour_id: str
    chunk_index: int
    frames: list[int]  # keyframe stamps, increasing
    objects: list[ChunkObject] = field(default_factory=list)
    relations: list[ChunkRelation] = field(default_factory=list)
    places: dict[int, str] = field(default_factory=dict)  # stamp_ns -> kind of place
    warnings: list[str] = field(default_factory=list)  # what was dropped while parsing, and why
    # what perceiving it cost: backend, model, seconds, input/output tokens, calls, retries
    perception: dict[str, Any] = field(default_factory=dict)

    @property
    def chunk_id(self) -> str:
        return chunk_id(self.tour_id, self.chunk_index)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for o in d["objects"]:
            o["boxes"] = {str(k): list(v) for k, v in o["boxes"].items()}
        d["places"] = {str(k): v for k, v in self.places.items()}
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "ChunkGraph":
        objects = [ChunkObject(**{**o, "boxes": {int(k): tuple(v) for k, v in o["boxes"].items()}})
                   for o in d.get("objects", [])]
        relations = [ChunkRelation(**r) for r in d.get("relations", [])]
        return ChunkGraph(d["tour_id"], int(d["chunk_index"]), [int(s) for s in d["frames"]],
                          objects, relations, {int(k): v for k, v in d.get("places", {}).items()},
                          list(d.get("warnings", [])), dict(d.get("perception") or {}))


def chunk_id(tour_id: str, chunk_index: int) -> str:
    return f"{tour_id}#{int(chunk_index):06d}"


@dataclass
class Observation:
    """One detection an object node was merged from (audit trail and scoring)."""

    tour_id: str
    stamp_ns: int
    bbox: BBox
    chunk_id: str
    local_id: str  # the chunk-local id it had

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["bbox"] = list(self.bbox)
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Observation":
        return Observation(d["tour_id"], int(d["stamp_ns"]), tuple(d["bbox"]), d["chunk_id"],
                           d["local_id"])


@dataclass
class ObjectNode:
    """A physical object in the global graph (one identity across chunks and tours)."""

    id: str
    label: str
    description: str = ""
    attributes: dict[str, str] = field(default_factory=dict)
    affordances: list[str] = field(default_factory=list)
    labels_seen: list[str] = field(default_factory=list)  # every label perception gave it
    places: list[str] = field(default_factory=list)  # kinds of place it was seen in, most frequent first
    first_seen_ns: int = 0
    last_seen_ns: int = 0
    observations: list[Observation] = field(default_factory=list)
    position: tuple[float, float] | None = None  # estimated map xy (m)
    position_var: float | None = None  # rough variance of that estimate (m^2)
    # When-and-where history: (stamp_ns, x, y) each time the estimated position moved notably.
    position_history: list[tuple[int, float, float]] = field(default_factory=list)
    tours: list[str] = field(default_factory=list)
    # Sums of the bearing-ray least squares behind ``position`` (geometry.RayAccumulator), so
    # each new sighting refines the estimate at constant cost. Empty for objects made elsewhere.
    ray_stats: list[float] = field(default_factory=list)
    place_counts: dict[str, int] = field(default_factory=dict)  # keyframes it was seen in, per place
    # How many chunks gave it each label / each attribute value: ``label`` and ``attributes`` are
    # the majorities, so one chunk's misnaming ("armchair" for an office chair) is outvoted.
    label_votes: dict[str, int] = field(default_factory=dict)
    attribute_votes: dict[str, dict[str, int]] = field(default_factory=dict)

    def text(self) -> str:
        attrs = " ".join(v for _, v in sorted(self.attributes.items()) if v)
        desc = self.description or f"{attrs} {self.label}".strip()
        aff = ", ".join(self.affordances)
        return f"{desc}. used to: {aff}" if aff else desc

    @property
    def frames(self) -> list[tuple[str, int]]:
        """(tour_id, stamp_ns) of every keyframe the object was seen in, in time order."""
        return sorted({(o.tour_id, o.stamp_ns) for o in self.observations}, key=lambda t: t[1])

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["observations"] = [o.to_dict() for o in self.observations]
        d["position"] = list(self.position) if self.position else None
        d["position_history"] = [list(p) for p in self.position_history]
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "ObjectNode":
        d = dict(d)
        d["observations"] = [Observation.from_dict(o) for o in d.get("observations", [])]
        d["position"] = tuple(d["position"]) if d.get("position") else None
        d["position_history"] = [tuple(p) for p in d.get("position_history", [])]
        return ObjectNode(**d)


@dataclass
class Relation:
    """A spatial relation between two global objects, with the stamps it was seen at."""

    subject: str
    predicate: str
    object: str
    stamps: list[int] = field(default_factory=list)
    tour_id: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Relation":
        return Relation(**d)
