"""The chunk-graph prompt, its JSON schema, and the validating JSON -> ChunkGraph parser.

Shared by every VLM backend (Gemini, local transformers VLMs).

Box convention asked of the model: ``box_2d = [ymin, xmin, ymax, xmax]`` normalised to 0-1000
(Gemini's native detection format), per image. The parser converts to pixel
``(x1, y1, x2, y2)`` of that keyframe with ``x = xmin / 1000 * width``.

What the parser drops, each with a reason in ``ChunkGraph.warnings``: objects without a label or
without any usable box, boxes in images that were not sent (frame index outside the chunk), boxes
entirely outside the image or degenerate (partly outside ones are clipped, with a warning),
duplicate object ids, relations naming ids that are not objects (hallucinated), relations of an
object to itself, places for unknown frames. Output that is not a JSON object with an
``objects`` list raises PerceptionError (nothing usable).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..model import BBox, ChunkGraph, ChunkObject, ChunkRelation, Keyframe, clip_bbox
from .base import ChunkInput, PerceptionError

BOX_SCALE = 1000.0  # VLMs (Gemini, Qwen) give boxes on a 0-1000 grid, whatever the image size

_STR = {"type": "string"}
CHUNK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "objects": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "id": _STR, "label": _STR, "color": _STR, "material": _STR, "size": _STR,
                "affordances": {"type": "array", "items": _STR},
                "description": _STR,
                "boxes": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"image": {"type": "integer"},
                                   "box_2d": {"type": "array", "items": {"type": "number"}}},
                    "required": ["image", "box_2d"]}},
            },
            "required": ["id", "boxes"]}},
        "relations": {"type": "array", "items": {
            "type": "object",
            "properties": {"subject": _STR, "predicate": _STR, "object": _STR,
                           "images": {"type": "array", "items": {"type": "integer"}}},
            "required": ["subject", "predicate", "object"]}},
        "places": {"type": "array", "items": {
            "type": "object",
            "properties": {"image": {"type": "integer"}, "place": _STR},
            "required": ["image", "place"]}},
    },
    "required": ["objects"],
}


def build_chunk_prompt(n_images: int) -> str:
    """The instruction sent after the images (numbered ``Image 0`` .. ``Image n-1``)."""
    last = n_images - 1
    return (
        f"You are the perception module of a mobile robot. The {n_images} images above "
        f"(Image 0 to Image {last}) are consecutive keyframes from its camera, in time order.\n"
        "Build a small knowledge graph of what they show, as JSON:\n"
        "- objects: every distinct physical object (furniture, appliances, devices, small items). "
        "Give each a short id unique in this answer (\"o1\", \"o2\", ...) and use the SAME id for "
        "the same physical object in every image it appears in. For each: label (a short common "
        "noun), color, material, size (small | medium | large), affordances (what a person can "
        "do with it, short verb phrases), description (one sentence), and boxes: one entry per "
        "image where it is visible, {\"image\": i, \"box_2d\": [ymin, xmin, ymax, xmax]} with "
        "coordinates normalised to 0-1000.\n"
        "- relations: spatial relations between objects you listed, {\"subject\": id, "
        "\"predicate\": one of \"on\", \"under\", \"in\", \"next to\", \"in front of\", \"behind\", "
        "\"left of\", \"right of\", \"above\", \"below\", \"object\": id, \"images\": [i, ...]}.\n"
        "- places: for each image, the kind of place it shows ({\"image\": i, \"place\": "
        "\"kitchen\"}).\n"
        f"Only use image indices 0 to {last} and only ids of objects you listed. Answer with JSON "
        "only.")


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _to_pixels(box: Any, kf: Keyframe) -> tuple[BBox | None, bool]:
    """[ymin, xmin, ymax, xmax] in 0-1000 -> clipped pixel box; (box or None, was_clipped)."""
    if not isinstance(box, (list, tuple)) or len(box) != 4:
        return None, False
    try:
        ymin, xmin, ymax, xmax = (float(v) for v in box)
    except (TypeError, ValueError):
        return None, False
    sx, sy = kf.width / BOX_SCALE, kf.height / BOX_SCALE
    raw = (xmin * sx, ymin * sy, xmax * sx, ymax * sy)
    clipped = clip_bbox(raw, kf.width, kf.height)
    if clipped is None:
        return None, False
    lo, hi = min(ymin, xmin, ymax, xmax), max(ymin, xmin, ymax, xmax)
    return clipped, (lo < -5.0 or hi > BOX_SCALE + 5.0)


def parse_chunk_graph(data: Any, chunk: ChunkInput, sent: Sequence[int]) -> ChunkGraph:
    """Validate a model's chunk JSON. ``sent[i]`` is the keyframe index (in ``chunk``) shown to
    the model as ``Image i``. Local ids are renumbered ``o1``, ``o2``, ... in answer order."""
    if not isinstance(data, dict) or not isinstance(data.get("objects"), list):
        raise PerceptionError(f"chunk {chunk.tour_id}#{chunk.chunk_index}: model output is not a "
                              "JSON object with an 'objects' list")
    frames = [kf.stamp_ns for kf in chunk.keyframes]
    graph = ChunkGraph(chunk.tour_id, chunk.chunk_index, frames)
    warn = graph.warnings.append

    def image_keyframe(value: Any, where: str) -> Keyframe | None:
        idx = _as_int(value)
        if idx is None or not 0 <= idx < len(sent):
            warn(f"{where}: image index {value!r} is not one of the {len(sent)} images sent; dropped")
            return None
        return chunk.keyframes[sent[idx]]

    id_map: dict[str, str] = {}
    for n, item in enumerate(data["objects"]):
        where = f"object #{n}"
        if not isinstance(item, dict):
            warn(f"{where}: not a JSON object; dropped")
            continue
        raw_id = str(item.get("id", "")).strip()
        label = _text(item.get("label"))
        where = f"object #{n} ({raw_id or 'no id'}, {label or 'no label'!s})"
        if not raw_id:
            warn(f"{where}: missing id; dropped")
            continue
        if raw_id in id_map:
            warn(f"{where}: duplicate id; dropped")
            continue
        if not label:
            warn(f"{where}: missing label; dropped")
            continue
        boxes: dict[int, BBox] = {}
        raw_boxes = item.get("boxes") if isinstance(item.get("boxes"), list) else []
        for entry in raw_boxes:
            if not isinstance(entry, dict):
                warn(f"{where}: box entry is not an object; dropped")
                continue
            kf = image_keyframe(entry.get("image"), where)
            if kf is None:
                continue
            box, clipped = _to_pixels(entry.get("box_2d"), kf)
            if box is None:
                warn(f"{where}: box {entry.get('box_2d')!r} in frame {kf.stamp_ns} is malformed, "
                     "degenerate or outside the image; dropped")
                continue
            if clipped:
                warn(f"{where}: box {entry.get('box_2d')!r} in frame {kf.stamp_ns} extends past the "
                     "image; clipped")
            if kf.stamp_ns in boxes:
                warn(f"{where}: second box in frame {kf.stamp_ns}; kept the first")
                continue
            boxes[kf.stamp_ns] = box
        if not boxes:
            warn(f"{where}: no usable box in any frame of the chunk; dropped")
            continue
        local_id = f"o{len(graph.objects) + 1}"
        id_map[raw_id] = local_id
        attributes = {k: _text(item.get(k)) for k in ("color", "material", "size") if _text(item.get(k))}
        affordances = [a.strip() for a in item.get("affordances") or []
                       if isinstance(a, str) and a.strip()] if isinstance(item.get("affordances"), list) else []
        graph.objects.append(ChunkObject(local_id, label, dict(sorted(boxes.items())), attributes,
                                         affordances, _text(item.get("description"))))

    seen_frames = {o.local_id: set(o.boxes) for o in graph.objects}
    merged: dict[tuple[str, str, str], ChunkRelation] = {}
    raw_relations = data.get("relations") if isinstance(data.get("relations"), list) else []
    for n, rel in enumerate(raw_relations):
        where = f"relation #{n}"
        if not isinstance(rel, dict):
            warn(f"{where}: not a JSON object; dropped")
            continue
        subj, obj = str(rel.get("subject", "")).strip(), str(rel.get("object", "")).strip()
        pred = _text(rel.get("predicate")).lower()
        if subj not in id_map or obj not in id_map:
            unknown = [x for x in (subj, obj) if x not in id_map]
            warn(f"{where}: refers to unknown object id(s) {unknown}; dropped")
            continue
        if not pred or id_map[subj] == id_map[obj]:
            warn(f"{where}: empty predicate or an object related to itself; dropped")
            continue
        s, o = id_map[subj], id_map[obj]
        stamps: set[int] = set()
        for value in rel.get("images") or [] if isinstance(rel.get("images"), list) else []:
            kf = image_keyframe(value, where)
            if kf is not None:
                stamps.add(kf.stamp_ns)
        if not stamps:  # no (valid) frames given: where both ends are visible, else either
            stamps = (seen_frames[s] & seen_frames[o]) or (seen_frames[s] | seen_frames[o])
        key = (s, pred, o)
        if key in merged:
            merged[key].stamps = sorted(set(merged[key].stamps) | stamps)
        else:
            merged[key] = ChunkRelation(s, pred, o, sorted(stamps))
    graph.relations = list(merged.values())

    raw_places = data.get("places") if isinstance(data.get("places"), list) else []
    for n, entry in enumerate(raw_places):
        if not isinstance(entry, dict) or not _text(entry.get("place")):
            warn(f"place #{n}: malformed; dropped")
            continue
        kf = image_keyframe(entry.get("image"), f"place #{n}")
        if kf is not None:
            graph.places[kf.stamp_ns] = _text(entry["place"]).lower()
    return graph
