"""Simulated perception from a tour's ``annotations.jsonl`` (stands in for a VLM).

What it hands on is what a VLM would: chunk-local ids ``o1``, ``o2``, ... numbered by first
appearance in the chunk (frame stamp, then box x1, then y1), never derived from ``gt_track``.
``gt_track`` is used only to group one object's detections inside the chunk and appears nowhere in
the output (ids, warnings, descriptions), so renaming every ``gt_track`` consistently changes no
output.

Noise (``cfg.noise`` scales every rate; 0 returns the annotations exactly, boxes clipped):
missed detections (per frame; an object missed in every frame of the chunk disappears), label
synonyms (per object per chunk, as a VLM names the same thing differently from chunk to chunk),
attribute errors (per attribute per chunk) and box jitter (per detection, a fraction of the box
size). Every random draw comes from an RNG seeded with (seed, tour_id, chunk_index) and the
detection's or object's position in that stable order, so results are deterministic.
"""

from __future__ import annotations

import hashlib
import logging
import random
from dataclasses import dataclass, field
from typing import Any

from ..config import PerceptionConfig
from ..model import BBox, ChunkGraph, ChunkObject, ChunkRelation, clip_bbox, replace_word
from .base import ChunkInput, Perceiver

log = logging.getLogger(__name__)

# Names a VLM uses interchangeably for one thing. Groups are symmetric: any member may become any
# other. This only SIMULATES naming variation; retrieval must not rely on such a table.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("mug", "cup"), ("sofa", "couch"), ("tv", "television", "monitor"),
    ("trash can", "bin", "garbage can"), ("fridge", "refrigerator"), ("laptop", "notebook computer"),
    ("bottle", "water bottle"), ("plant", "potted plant"), ("lamp", "light"),
    ("armchair", "chair"), ("desk", "table"), ("backpack", "bag"), ("kettle", "electric kettle"),
    ("microwave", "microwave oven"), ("cabinet", "cupboard"), ("rug", "carpet"),
    ("bookshelf", "shelf", "bookcase"), ("phone", "smartphone"), ("sink", "basin"),
    ("coffee machine", "coffee maker"), ("book", "notebook"), ("picture", "painting", "poster"),
    ("door", "doorway"), ("bench", "seat"), ("stool", "seat"), ("printer", "copier"),
)
SYNONYMS: dict[str, list[str]] = {}
for _group in SYNONYM_GROUPS:
    for _name in _group:
        SYNONYMS.setdefault(_name, [])
        SYNONYMS[_name] += [g for g in _group if g != _name and g not in SYNONYMS[_name]]

# Values an attribute error picks from (a wrong value of the same kind).
ATTRIBUTE_VALUES: dict[str, tuple[str, ...]] = {
    "color": ("red", "blue", "green", "yellow", "white", "black", "gray", "brown", "orange",
              "purple", "pink", "silver"),
    "material": ("wood", "metal", "plastic", "fabric", "glass", "ceramic", "leather", "paper",
                 "stone"),
    "size": ("small", "medium", "large"),
}


def _rng(*parts: Any) -> random.Random:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass
class _Detection:
    stamp_ns: int
    bbox: BBox  # clipped, before jitter
    track: str  # grouping key only; never output
    item: dict[str, Any]


@dataclass
class _Track:
    detections: list[_Detection] = field(default_factory=list)


class AnnotationPerceiver(Perceiver):
    """``annotations``: stamp_ns -> the tour's annotation line for that frame."""

    name = "annotations"

    def __init__(self, annotations: dict[int, dict[str, Any]], cfg: PerceptionConfig | None = None) -> None:
        self.annotations = {int(k): v for k, v in (annotations or {}).items()}
        self.cfg = cfg or PerceptionConfig()

    def _rate(self, rate: float) -> float:
        return min(1.0, max(0.0, float(rate) * max(0.0, float(self.cfg.noise))))

    def perceive(self, chunk: ChunkInput) -> ChunkGraph:
        cfg = self.cfg
        frames = sorted(kf.stamp_ns for kf in chunk.keyframes)
        graph = ChunkGraph(chunk.tour_id, chunk.chunk_index, frames)
        warn = graph.warnings.append
        seed = (cfg.seed, chunk.tour_id, chunk.chunk_index)
        miss_rate, jitter = self._rate(cfg.miss_rate), self._rate(cfg.box_jitter)

        tracks: dict[str, _Track] = {}  # insertion order = first appearance order
        kept_in_frame: dict[int, set[str]] = {}
        frame_relations: list[tuple[int, list[Any]]] = []
        for kf in sorted(chunk.keyframes, key=lambda k: k.stamp_ns):
            line = self.annotations.get(kf.stamp_ns)
            if line is None:
                warn(f"frame {kf.stamp_ns}: no annotation line; no objects perceived")
                continue
            if isinstance(line.get("place"), str) and line["place"].strip():
                graph.places[kf.stamp_ns] = line["place"].strip()
            detections: list[_Detection] = []
            for n, item in enumerate(line.get("objects") or []):
                label = item.get("label") if isinstance(item, dict) else None
                where = f"frame {kf.stamp_ns}: object #{n} ({label or 'no label'})"
                if not isinstance(item, dict) or not label or "gt_track" not in item:
                    warn(f"{where}: missing label, gt_track or bbox; dropped")
                    continue
                try:
                    box = clip_bbox(item["bbox"], kf.width, kf.height)
                except (KeyError, TypeError, ValueError):
                    warn(f"{where}: malformed bbox; dropped")
                    continue
                if box is None:
                    warn(f"{where}: bbox {item['bbox']} is outside the {kf.width}x{kf.height} "
                         "image or degenerate; dropped")
                    continue
                if tuple(float(v) for v in item["bbox"]) != box:
                    warn(f"{where}: bbox {item['bbox']} extends past the image; clipped")
                detections.append(_Detection(kf.stamp_ns, box, str(item["gt_track"]), item))
            detections.sort(key=lambda d: (d.bbox[0], d.bbox[1], d.bbox[2], d.bbox[3], str(d.item["label"])))
            kept = kept_in_frame.setdefault(kf.stamp_ns, set())
            for rank, det in enumerate(detections):
                rng = _rng(*seed, "det", kf.stamp_ns, rank)
                if rng.random() < miss_rate:
                    continue
                if jitter > 0:
                    det.bbox = self._jitter(det.bbox, jitter, rng, kf.width, kf.height)
                if det.track in kept:
                    warn(f"frame {kf.stamp_ns}: two detections of one object ({det.item['label']}); "
                         "kept the first")
                    continue
                kept.add(det.track)
                tracks.setdefault(det.track, _Track()).detections.append(det)
            frame_relations += [(kf.stamp_ns, r) for r in line.get("relations") or []]

        local_ids: dict[str, str] = {}
        for rank, (track, tr) in enumerate(tracks.items()):
            local_id = f"o{rank + 1}"
            local_ids[track] = local_id
            graph.objects.append(self._object(local_id, tr, _rng(*seed, "obj", rank)))

        merged: dict[tuple[str, str, str], ChunkRelation] = {}
        for stamp, rel in frame_relations:
            if not (isinstance(rel, (list, tuple)) and len(rel) == 3):
                warn(f"frame {stamp}: malformed relation; dropped")
                continue
            subj, pred, obj = (str(x) for x in rel)
            if subj not in local_ids or obj not in local_ids or subj == obj:
                continue  # an end missed by perception (or not an object of this chunk)
            key = (local_ids[subj], pred, local_ids[obj])
            if key not in merged:
                merged[key] = ChunkRelation(*key, stamps=[])
            if stamp not in merged[key].stamps:
                merged[key].stamps.append(stamp)
        graph.relations = list(merged.values())
        return graph

    @staticmethod
    def _jitter(box: BBox, scale: float, rng: random.Random, width: int, height: int) -> BBox:
        w, h = box[2] - box[0], box[3] - box[1]
        moved = (box[0] + rng.gauss(0, scale * w), box[1] + rng.gauss(0, scale * h),
                 box[2] + rng.gauss(0, scale * w), box[3] + rng.gauss(0, scale * h))
        return clip_bbox(moved, width, height) or box

    def _object(self, local_id: str, track: _Track, rng: random.Random) -> ChunkObject:
        """One chunk object from a track's detections, with per-chunk label/attribute noise."""
        first = track.detections[0].item
        merged: dict[str, Any] = {}
        for det in track.detections:  # first non-empty value of each field wins
            for key in ("label", "attributes", "affordances", "description"):
                if not merged.get(key) and det.item.get(key):
                    merged[key] = det.item[key]
        label = str(merged.get("label") or first["label"])
        attributes = {str(k): str(v) for k, v in (merged.get("attributes") or {}).items()
                      if v is not None and str(v)}
        description = str(merged.get("description") or "")
        affordances = [str(a) for a in merged.get("affordances") or []]

        synonyms = SYNONYMS.get(label.lower(), [])
        if rng.random() < self._rate(self.cfg.synonym_rate) and synonyms:
            new_label = rng.choice(synonyms)
            description = replace_word(description, label, new_label)
            label = new_label
        error_rate = self._rate(self.cfg.attribute_error_rate)
        for key in sorted(attributes):
            draw = rng.random()
            choices = [v for v in ATTRIBUTE_VALUES.get(key, ()) if v != attributes[key]]
            if draw < error_rate and choices:
                wrong = rng.choice(choices)
                description = replace_word(description, attributes[key], wrong)
                attributes[key] = wrong
        boxes = {det.stamp_ns: det.bbox for det in track.detections}
        return ChunkObject(local_id, label, boxes, attributes, affordances, description)
