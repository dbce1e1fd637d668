"""What an operator is shown: readable object names, where a frame was taken, frame files, keyframe
images with boxes, the top-down map and an object's history. Shared by `vlkng ask`, the tablet web
app, the GetFrame service and the RViz markers (pure: no rclpy, no web framework).
"""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import cv2
import numpy as np

from .model import Keyframe, ObjectNode, Pose

if TYPE_CHECKING:
    from .ask.graph_retrieval import TourIndex

# Rough footprint (m) per perceived size word, for objects with no measured extent.
SIZE_WORDS_M = {"tiny": 0.15, "small": 0.3, "medium": 0.6, "large": 1.2, "huge": 2.0}
DEFAULT_FOOTPRINT_M = 0.5  # drawn footprint of an object with no size word


def main_place(node: ObjectNode, shares: dict[str, float] | None = None) -> str:
    """The kind of place the object is in ("" when perception never named one): the heaviest of
    ``shares`` (``TourIndex.place_shares``: its sightings' keyframe places, a near view counting
    far more than one through a door) when given, else the place its sightings were counted in
    most at build time (a memory-less caller: RViz markers)."""
    if shares:
        return max(sorted(shares), key=lambda p: shares[p])
    if node.place_counts:
        return max(sorted(node.place_counts.items()), key=lambda kv: kv[1])[0]
    return node.places[0] if node.places else ""


def place_index(memory) -> "TourIndex":
    """Where a memory's objects are (``TourIndex.main_place``), for one payload: each tour's
    keyframes are read once, whatever the number of objects named."""
    from .ask.graph_retrieval import TourIndex

    return TourIndex(memory)


def shown_place(node: ObjectNode, places: "TourIndex | None" = None) -> str:
    """The place shown for an object: ``places.main_place`` (weighted sightings) when a memory's
    index is at hand, else the build-time ``main_place``."""
    return places.main_place(node) if places is not None else main_place(node)


def place_words(node: ObjectNode, places: "TourIndex | None" = None) -> str:
    """Where the object is, for people: "in the kitchen" (``shown_place``); "seen through a door
    from the hallway" for a thing that stands beyond every room the robot walked and is in no
    other walked room (``TourIndex.seen_through``: it is not in the room it was seen from); "" when
    unknown."""
    place = shown_place(node, places)
    through = places.seen_through(node) if places is not None and not place else ""
    return f"in the {place}" if place else f"seen through a door from the {through}" if through else ""


def object_name(node: ObjectNode, places: "TourIndex | None" = None) -> str:
    """'red mug in the kitchen': the label with its colour and where it is (``place_words``), for people."""
    colour = (node.attributes or {}).get("color") or (node.attributes or {}).get("colour") or ""
    name = f"{colour} {node.label}".strip() if colour and colour.lower() not in node.label.lower() else node.label
    where = place_words(node, places)
    return f"{name} {where}" if where else name


def footprint_m(node: ObjectNode) -> float:
    """The object's extent on the floor (m): a measured one when the memory has it, else from the
    perceived size word ('small', 'large'), else a default."""
    measured = getattr(node, "footprint_m", None)
    if isinstance(measured, (int, float)) and measured > 0:
        return float(measured)
    size = (node.attributes or {}).get("size", "").lower()
    return next((v for k, v in SIZE_WORDS_M.items() if k in size), DEFAULT_FOOTPRINT_M)


def utc_time(stamp_ns: int) -> str:
    return _dt.datetime.fromtimestamp(stamp_ns / 1e9, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def pose_text(pose: Pose | None) -> str:
    if pose is None:
        return "no pose (none was recorded near this frame)"
    return f"at ({pose.x:.1f}, {pose.y:.1f}) m facing {math.degrees(pose.yaw):.0f} deg"


def frame_where(memory, tour_id: str, stamp_ns: int, tour_start_ns: int | None = None) -> dict[str, Any]:
    """Where and when a keyframe was taken, for people: place, position and heading, time."""
    kf = memory.graph.get_keyframe(tour_id, stamp_ns)
    pose = kf.pose if kf else None
    place = (kf.place or "") if kf else ""
    start = tour_start_ns if tour_start_ns is not None else tour_start(memory, tour_id)
    into = max(0, stamp_ns - start) / 1e9 if start is not None else None
    parts = [f"tour {tour_id}"]
    if into is not None:
        parts.append(f"{int(into // 60)}:{int(into % 60):02d} into it")
    if place:
        parts.append(f"in the {place}")
    parts.append(pose_text(pose))
    return {"tour_id": tour_id, "time": utc_time(stamp_ns), "seconds_into_tour": into, "place": place,
            "pose": pose.to_dict() if pose else None, "text": ", ".join(parts)}


def tour_start(memory, tour_id: str) -> int | None:
    kfs = memory.graph.keyframes(tour_id)
    return min(k.stamp_ns for k in kfs) if kfs else None


def frame_file(memory, tour_id: str, stamp_ns: int) -> Path | None:
    """The keyframe's JPEG file in the memory's frame store (None when the store keeps no files
    or the frame is missing)."""
    path_of = getattr(memory.frames, "path_of", None)
    if path_of is None:
        return None
    try:
        path = Path(path_of(memory.frames.ref_for(tour_id, stamp_ns)))
    except ValueError:
        return None
    return path.resolve() if path.is_file() else None


# --- images --------------------------------------------------------------------------------
def class_colour(label: str) -> tuple[int, int, int]:
    """A stable, saturated RGB colour per class label (same label, same colour everywhere)."""
    h = 0
    for ch in label.lower():
        h = (h * 131 + ord(ch)) % 1_000_003
    hsv = np.uint8([[[h % 180, 200, 230]]])
    r, g, b = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[0, 0]
    return int(r), int(g), int(b)


def boxes_in_frame(memory, tour_id: str, stamp_ns: int) -> list[dict[str, Any]]:
    """Every object box the memory holds for this keyframe: id, label, name, bbox."""
    ids = memory.graph.objects_in_frames([(tour_id, stamp_ns)]).get((tour_id, stamp_ns), [])
    out = []
    places = place_index(memory)
    for node in memory.graph.get_objects(ids):
        for ob in node.observations:
            if ob.tour_id == tour_id and ob.stamp_ns == stamp_ns:
                out.append({"id": node.id, "label": node.label, "name": object_name(node, places),
                            "bbox": [round(float(v), 1) for v in ob.bbox]})
                break
    return out


def draw_boxes(rgb: np.ndarray, boxes: Iterable[dict[str, Any]], highlight: Iterable[str] = ()) -> np.ndarray:
    """The image with each box outlined in its class colour and labelled; ``highlight`` ids thicker."""
    img = np.ascontiguousarray(rgb).copy()
    hl = set(highlight)
    scale = max(0.7, min(img.shape[0], img.shape[1]) / 600.0)
    for b in boxes:
        x1, y1, x2, y2 = (int(round(v)) for v in b["bbox"])
        colour = class_colour(b["label"])
        thick = max(2, int(round(3 * scale))) * (2 if b["id"] in hl else 1)
        cv2.rectangle(img, (x1, y1), (x2, y2), colour, thick)
        text = b["label"]
        (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, 2)
        ty = max(th + base, y1)
        cv2.rectangle(img, (x1, ty - th - base), (x1 + tw + 4, ty), colour, -1)
        cv2.putText(img, text, (x1 + 2, ty - base), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 0, 0), 2,
                    cv2.LINE_AA)
    return img


def frame_jpeg(memory, tour_id: str, stamp_ns: int, boxes: bool = True, highlight: Iterable[str] = (),
               max_side: int = 0, quality: int = 85) -> bytes:
    """The keyframe's JPEG from the frame store, with the memory's object boxes drawn on it when
    ``boxes``. FileNotFoundError when the memory has no such frame, ValueError for a bad id."""
    from .images import decode_compressed, encode_jpeg

    data = memory.frames.get(memory.frames.ref_for(tour_id, stamp_ns))
    if not boxes and not max_side:
        return data
    rgb = decode_compressed(data, "jpeg")
    if boxes:
        rgb = draw_boxes(rgb, boxes_in_frame(memory, tour_id, stamp_ns), highlight)
    return encode_jpeg(rgb, quality, max_side)


# --- the map ---------------------------------------------------------------------------------
def object_summary(node: ObjectNode, places: "TourIndex | None" = None) -> dict[str, Any]:
    return {"id": node.id, "label": node.label, "name": object_name(node, places),
            "place": shown_place(node, places),
            "x": node.position[0] if node.position else None,
            "y": node.position[1] if node.position else None,
            "size_m": footprint_m(node), "colour": "#%02x%02x%02x" % class_colour(node.label),
            "tours": list(node.tours), "sightings": len(node.frames),
            "first_seen": utc_time(node.first_seen_ns) if node.first_seen_ns else "",
            "last_seen": utc_time(node.last_seen_ns) if node.last_seen_ns else ""}


def map_payload(memory, max_keyframes: int = 4000) -> dict[str, Any]:
    """The top-down map: each tour's trajectory (keyframe poses in order), the keyframe poses
    (decimated to ``max_keyframes``), every placed object, and the bounds (map frame, metres)."""
    tours = []
    xs: list[float] = []
    ys: list[float] = []
    all_kf: list[Keyframe] = []
    for tour in memory.graph.tours():
        kfs = [k for k in memory.graph.keyframes(tour) if k.pose is not None]
        all_kf += kfs
        tours.append({"tour_id": tour, "path": [[round(k.pose.x, 3), round(k.pose.y, 3)] for k in kfs]})  # type: ignore[union-attr]
        xs += [k.pose.x for k in kfs]  # type: ignore[union-attr]
        ys += [k.pose.y for k in kfs]  # type: ignore[union-attr]
    step = max(1, math.ceil(len(all_kf) / max_keyframes))
    keyframes = [{"tour_id": k.tour_id, "stamp": str(k.stamp_ns), "x": round(k.pose.x, 3),  # type: ignore[union-attr]
                  "y": round(k.pose.y, 3), "yaw": round(k.pose.yaw, 3), "place": k.place or ""}  # type: ignore[union-attr]
                 for k in all_kf[::step]]
    places = place_index(memory)
    objects = [object_summary(o, places) for o in memory.graph.iter_objects() if o.position is not None]
    xs += [o["x"] for o in objects]
    ys += [o["y"] for o in objects]
    bounds = [min(xs), min(ys), max(xs), max(ys)] if xs else [-5.0, -5.0, 5.0, 5.0]
    return {"tours": tours, "keyframes": keyframes, "objects": objects, "bounds": bounds,
            "places": sorted({o["place"] for o in objects if o["place"]})}


def object_detail(memory, object_id: str, max_frames: int = 24) -> dict[str, Any] | None:
    """One object for the page: its name, attributes, relations, every tour it was seen in, its
    position history and its frames (most recent first, capped), each with where it was taken."""
    nodes = memory.graph.get_objects([object_id])
    if not nodes:
        return None
    node = nodes[0]
    starts: dict[str, int | None] = {}
    frames = []
    for tour, stamp in list(reversed(node.frames))[:max_frames]:
        if tour not in starts:
            starts[tour] = tour_start(memory, tour)
        frames.append({"tour_id": tour, "stamp": str(stamp),
                       "where": frame_where(memory, tour, stamp, starts[tour])})
    names = {}
    places = place_index(memory)
    rels = memory.graph.relations_of([node.id], limit=50)
    others = {r.object if r.subject == node.id else r.subject for r in rels}
    for o in memory.graph.get_objects(sorted(others)):
        names[o.id] = object_name(o, places)
    names[node.id] = object_name(node, places)
    return {**object_summary(node, places), "description": node.description, "attributes": dict(node.attributes),
            "affordances": list(node.affordances), "labels_seen": list(node.labels_seen),
            "history": [{"time": utc_time(s), "x": x, "y": y} for s, x, y in node.position_history],
            "relations": [{"text": f"{names.get(r.subject, r.subject)} {r.predicate} {names.get(r.object, r.object)}",
                           "sightings": len(r.stamps)} for r in rels],
            "frames": frames}


def result_payload(memory, res, with_paths: bool = False) -> dict[str, Any]:
    """An AskResult for people (and the page): the raw result plus readable names for every object,
    where each frame was taken, the frame files (``with_paths``) and the target's name."""
    d = res.to_dict()
    ids = {o.id for o in res.evidence_objects} | {oid for f in res.frames for oid in f.object_ids}
    if res.target_object_id:
        ids.add(res.target_object_id)
    places = place_index(memory)
    names = {node.id: object_name(node, places) for node in memory.graph.get_objects(sorted(ids))}
    starts: dict[str, int | None] = {}
    for f, fd in zip(res.frames, d["frames"]):
        if f.tour_id not in starts:
            starts[f.tour_id] = tour_start(memory, f.tour_id)
        fd["stamp"] = str(f.stamp_ns)
        fd["where"] = frame_where(memory, f.tour_id, f.stamp_ns, starts[f.tour_id])
        fd["objects"] = [names.get(oid, oid) for oid in f.object_ids]
        if with_paths:
            path = frame_file(memory, f.tour_id, f.stamp_ns)
            fd["path"] = str(path) if path else None
    for o, od in zip(res.evidence_objects, d["evidence_objects"]):
        od["name"] = names.get(o.id, o.label)
    for r in d["evidence_relations"]:
        r["text"] = f"{names.get(r['subject'], r['subject'])} {r['predicate']} {names.get(r['object'], r['object'])}"
    d["target_name"] = names.get(res.target_object_id, "") if res.target_object_id else ""
    return d

