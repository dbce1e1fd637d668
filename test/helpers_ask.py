"""Helpers for the ask tests: tiny real memories written through the store APIs (no tests here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.model import Keyframe, ObjectNode, Observation, Pose, Relation

TOUR = "home"
T0 = 1_700_000_000_000_000_000
SEC = 1_000_000_000


def make_memory(path: Path, embedder: str = "minilm") -> Memory:
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = embedder
    return Memory.open(path, cfg)


def add_objects(memory: Memory, specs: list[dict[str, Any]], relations: list[tuple[str, str, str]] = (),
                chunk: str = "home#000000", with_vectors: bool = True) -> None:
    """specs: id, label, description, attributes, affordances, position, seen (list of seconds),
    optional bbox, position_var (default 0.1), labels_seen (default [label]), label_votes and
    attribute_votes (default none) and place (the place of the keyframes it was seen in). Writes keyframes, objects,
    relations and one text vector per object."""
    stamps = sorted({T0 + int(s * SEC) for spec in specs for s in spec["seen"]})
    place_at = {T0 + int(s * SEC): spec["place"] for spec in specs if spec.get("place") for s in spec["seen"]}
    memory.graph.upsert_keyframes(
        Keyframe(TOUR, st, i, 640, 480, Pose.from_xy_yaw((st - T0) / SEC * 0.5, 0.0, 0.0), place=place_at.get(st))
        for i, st in enumerate(stamps))
    nodes = []
    for spec in specs:
        obs = [Observation(TOUR, T0 + int(s * SEC), tuple(spec.get("bbox", (250, 180, 390, 300))), chunk,
                           spec["id"]) for s in spec["seen"]]
        nodes.append(ObjectNode(spec["id"], spec["label"], spec.get("description", ""),
                                spec.get("attributes", {}), spec.get("affordances", []), spec.get("labels_seen", [spec["label"]]),
                                spec.get("places", []), obs[0].stamp_ns, obs[-1].stamp_ns, obs,
                                spec.get("position"), spec.get("position_var", 0.1) if spec.get("position") else None,
                                [], [TOUR], label_votes=spec.get("label_votes", {}),
                                attribute_votes=spec.get("attribute_votes", {})))
    rels = [Relation(s, p, o, [T0 + int(specs[0]["seen"][0] * SEC)], TOUR) for s, p, o in relations]
    memory.graph.apply_merge(chunk, nodes, rels)
    if with_vectors:
        emb = memory.text_embedder
        memory.vectors.ensure_collection(memory.text_collection, emb.dim)
        vecs = emb.embed_texts([n.text() for n in nodes])
        memory.vectors.upsert(memory.text_collection, [f"{n.id}|{chunk}" for n in nodes], vecs,
                              [{"object_id": n.id, "tour_id": TOUR, "chunk_id": chunk,
                                "stamp_ns": n.first_seen_ns, "label": n.label} for n in nodes])


KITCHEN = [
    {"id": "o-mug", "label": "mug", "description": "a red ceramic mug", "attributes": {"color": "red"},
     "affordances": ["drink from", "hold"], "position": (3.0, 1.0), "seen": [10, 11, 12], "places": ["kitchen"]},
    {"id": "o-kettle", "label": "kettle", "description": "a steel electric kettle",
     "affordances": ["boil water", "pour"], "position": (3.5, 1.2), "seen": [11, 12, 13], "places": ["kitchen"]},
    {"id": "o-counter", "label": "counter", "description": "a white kitchen counter",
     "affordances": ["put things on"], "position": (3.2, 1.5), "seen": [10, 11, 12, 13], "places": ["kitchen"]},
    {"id": "o-sofa", "label": "sofa", "description": "a large blue fabric sofa", "attributes": {"color": "blue"},
     "affordances": ["sit on"], "position": (-4.0, 2.0), "seen": [30, 31, 32], "places": ["living room"]},
    {"id": "o-laptop", "label": "laptop", "description": "a silver laptop computer",
     "affordances": ["type", "browse"], "position": (8.0, -3.0), "seen": [50, 51], "places": ["office"]},
    {"id": "o-plant", "label": "plant", "description": "a green potted plant",
     "affordances": ["water"], "position": (-4.5, 3.0), "seen": [31, 32, 33], "places": ["living room"]},
]
KITCHEN_RELS = [("o-mug", "on", "o-counter"), ("o-mug", "next to", "o-kettle"),
                ("o-kettle", "on", "o-counter"), ("o-plant", "next to", "o-sofa")]


def add_placed_keyframes(memory: Memory, cameras: dict[float, tuple[tuple[float, float], float, str]]) -> None:
    """Keyframes at given seconds, each with its camera (xy, yaw) and the kind of place perception
    gave it: ``cameras`` second -> ((x, y), yaw, place). Replaces add_objects' placeholder ones."""
    memory.graph.upsert_keyframes(
        Keyframe(TOUR, T0 + int(s * SEC), i, 640, 480, Pose.from_xy_yaw(*cameras[s][0], cameras[s][1]),
                 place=cameras[s][2]) for i, s in enumerate(sorted(cameras)))


def ask_ok(memory: Memory, question: str):
    """The engine's answer to ``question``, asserted to have been answered at all."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.types import AskRequest

    res = AskEngine(memory, memory.cfg).ask(AskRequest(question, []))
    assert res.success, res.message
    return res
