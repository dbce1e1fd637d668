"""Helpers shared by the graph-store backends (pure Python, no database code)."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ..model import Keyframe, ObjectNode, Relation

# Namespaces end up in collection names and are compared verbatim; keep them boring.
NAMESPACE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")


_URI_PASSWORD_RE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/@:\s]*):(?P<pw>[^/@\s]*)@")


def redact(text: str) -> str:
    """``scheme://user:password@host`` -> ``scheme://user:***@host`` anywhere in ``text``."""
    return _URI_PASSWORD_RE.sub(lambda m: f"{m['scheme']}{m['user']}:***@", str(text))


def validate_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not NAMESPACE_RE.match(namespace):
        raise ValueError(f"invalid namespace {namespace!r}: use a letter then letters, digits or _ "
                         "(at most 63 characters)")
    return namespace


def tour_of_chunk(chunk_id: str) -> str:
    """The tour part of a chunk id made by ``model.chunk_id`` ('<tour>#<index>'); '' if none."""
    return chunk_id.rsplit("#", 1)[0] if "#" in chunk_id else ""


def object_json(obj: ObjectNode) -> str:
    """Serialise one object; raises TypeError/ValueError for values JSON cannot hold."""
    return json.dumps(obj.to_dict(), sort_keys=True, allow_nan=False)


def keyframe_json(kf: Keyframe) -> str:
    return json.dumps(kf.to_dict(), sort_keys=True, allow_nan=False)


def object_labels(obj: ObjectNode) -> list[str]:
    """Lower-cased label and labels_seen, deduplicated, sorted: what objects_by_label matches."""
    return sorted({s.strip().lower() for s in [obj.label, *obj.labels_seen] if s and s.strip()})


def object_frames(obj: ObjectNode) -> list[tuple[str, int]]:
    return sorted({(o.tour_id, int(o.stamp_ns)) for o in obj.observations})


def object_position(obj: ObjectNode) -> tuple[float, float] | None:
    if obj.position is None:
        return None
    x, y = float(obj.position[0]), float(obj.position[1])
    if x != x or y != y or abs(x) == float("inf") or abs(y) == float("inf"):
        raise ValueError(f"object {obj.id!r} has a non-finite position {obj.position!r}")
    return x, y


def last_per_id(objects: Sequence[ObjectNode]) -> list[ObjectNode]:
    """One object per id (the last given wins), in first-seen order: a merge replaces by id."""
    by_id: dict[str, ObjectNode] = {}
    for obj in objects:
        by_id[obj.id] = obj
    return list(by_id.values())


def union_stamps(old: Iterable[int], new: Iterable[int]) -> list[int]:
    return sorted({int(s) for s in old} | {int(s) for s in new})


def merge_relation_batch(relations: Sequence[Relation]) -> dict[tuple[str, str, str], Relation]:
    """Collapse relations with the same key inside one merge (stamps unioned, first tour kept)."""
    merged: dict[tuple[str, str, str], Relation] = {}
    for rel in relations:
        cur = merged.get(rel.key)
        if cur is None:
            merged[rel.key] = Relation(rel.subject, rel.predicate, rel.object,
                                       union_stamps([], rel.stamps), rel.tour_id)
        else:
            cur.stamps = union_stamps(cur.stamps, rel.stamps)
            cur.tour_id = cur.tour_id or rel.tour_id
    return merged


def check_relation_endpoints(relations: Iterable[Relation], known_ids: set[str]) -> None:
    missing = sorted({i for r in relations for i in (r.subject, r.object) if i not in known_ids})
    if missing:
        raise ValueError(f"relations refer to objects that are neither stored nor in this merge: "
                         f"{missing[:10]}")


def sort_relations(rels: Iterable[Relation]) -> list[Relation]:
    return sorted(rels, key=lambda r: r.key)


def decode_json(text: str, what: str) -> dict[str, Any]:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as e:
        from .base import StoreError

        raise StoreError(f"corrupt {what} record: {e}") from e
