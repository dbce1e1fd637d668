"""Synthetic memories of any size (through the store APIs) for budget tests and the benchmark."""

from __future__ import annotations

import numpy as np

from ..core.memory import Memory
from ..core.model import Keyframe, ObjectNode, Observation, Pose, Relation

LABELS = ["mug", "kettle", "chair", "table", "sofa", "plant", "laptop", "lamp", "book", "bottle",
          "monitor", "keyboard", "shelf", "box", "bin", "clock", "vase", "printer", "fridge", "sink"]
COLORS = ["red", "blue", "green", "white", "black", "gray", "yellow", "brown"]


def write_synthetic(memory: Memory, n_objects: int, seed: int = 0, tour_id: str = "synth",
                    per_chunk: int = 40) -> None:
    """n objects in chunks of ``per_chunk``, 3 keyframes each, one relation per object,
    one text vector per object (memory.text_embedder)."""
    rng = np.random.default_rng(seed)
    emb = memory.text_embedder
    memory.vectors.ensure_collection(memory.text_collection, emb.dim)
    t0 = 1_700_000_000_000_000_000
    for c0 in range(0, n_objects, per_chunk):
        chunk = f"{tour_id}#{c0:06d}"
        ids = range(c0, min(n_objects, c0 + per_chunk))
        stamps = [t0 + (c0 + k) * 500_000_000 for k in range(per_chunk // 4 + 3)]
        memory.graph.upsert_keyframes(Keyframe(tour_id, s, c0 + k, 640, 480, Pose.from_xy_yaw(k * 0.1, 0, 0))
                                      for k, s in enumerate(stamps))
        nodes, rels = [], []
        for i in ids:
            label, color = LABELS[i % len(LABELS)], COLORS[int(rng.integers(len(COLORS)))]
            seen = sorted(rng.choice(len(stamps), 3, replace=False))
            obs = [Observation(tour_id, stamps[k], (100, 100, 300, 300), chunk, f"l{i}") for k in seen]
            nodes.append(ObjectNode(f"obj{i:07d}", label, f"a {color} {label}", {"color": color}, [], [label],
                                    [], obs[0].stamp_ns, obs[-1].stamp_ns, obs,
                                    (float(rng.uniform(-50, 50)), float(rng.uniform(-50, 50))), 0.2, [], [tour_id]))
            if i > c0:
                rels.append(Relation(f"obj{i:07d}", "next to", f"obj{i - 1:07d}", [obs[0].stamp_ns], tour_id))
        memory.graph.apply_merge(chunk, nodes, rels)
        vecs = emb.embed_texts([n.text() for n in nodes])
        memory.vectors.upsert(memory.text_collection, [f"{n.id}|{chunk}" for n in nodes], vecs,
                              [{"object_id": n.id, "tour_id": tour_id, "chunk_id": chunk,
                                "stamp_ns": n.first_seen_ns, "label": n.label} for n in nodes])
