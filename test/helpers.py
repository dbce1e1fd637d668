"""Helpers shared by the test modules (import from here, never from another test file)."""

from __future__ import annotations

import os


def domain_id(base: int) -> int:
    """A ROS domain id for one test module: ``base`` plus ``VLKNG_TEST_DOMAIN_OFFSET`` (default 0),
    so several checkouts testing on one machine at once do not see each other's nodes."""
    return base + int(os.environ.get("VLKNG_TEST_DOMAIN_OFFSET", "0"))


def demo_home_memory(path):
    """A small hand-built memory of a walk like OpenEQA's HM3D demo (entrance by the plants,
    living room, kitchen, a dining table with eight chairs, a bedroom with an exercise bike),
    written through the store APIs as a build would: keyframes with poses and places, objects
    with observations and positions, relations and text vectors. The robot walks along +x."""
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.core.model import Keyframe, ObjectNode, Observation, Pose, Relation

    tour, t0, sec = "demo", 1_700_000_000_000_000_000, 1_000_000_000
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "minilm"
    memory = Memory.open(path, cfg)
    places = ["hallway"] * 4 + ["living room"] * 5 + ["kitchen"] * 4 + ["dining room"] * 4 + ["bedroom"] * 5
    memory.graph.upsert_keyframes(Keyframe(tour, t0 + i * sec, i, 640, 480, Pose.from_xy_yaw(0.5 * i, 0.0, 0.0),
                                           place=p) for i, p in enumerate(places))
    specs = [("plant-a", "potted plant", "a green potted plant by the front door", {"color": "green"}, (0.6, 1.0), [0, 1, 2]),
             ("plant-b", "potted plant", "a tall green potted plant", {"color": "green"}, (0.6, -1.0), [0, 1, 2]),
             ("sofa", "sofa", "a grey fabric sofa", {"color": "grey", "material": "fabric"}, (3.5, 1.8), [5, 6, 7, 8]),
             ("tv", "television", "a black flat screen television", {"color": "black"}, (3.5, -1.8), [6, 7, 8]),
             ("fridge", "refrigerator", "a silver refrigerator", {"color": "silver", "material": "metal"}, (5.5, 1.5), [9, 10, 11]),
             ("kettle", "kettle", "a white electric kettle", {"color": "white"}, (6.0, 1.3), [10, 11, 12]),
             ("table", "dining table", "a long wooden dining table", {"color": "brown", "material": "wood"}, (8.0, 2.0), [13, 14, 15, 16]),
             ("bed", "bed", "a double bed with a white duvet", {"color": "white"}, (10.0, 1.5), [17, 18, 19, 20, 21]),
             ("bike", "exercise bike", "a black stationary exercise bike", {"color": "black"}, (10.5, -1.2), [18, 19, 20]),
             ("desk-chair", "chair", "a black office chair at a desk", {"color": "black"}, (10.8, 1.9), [19, 20, 21])]
    chairs = [(7.3, 2.85), (8.0, 2.85), (8.7, 2.85), (7.3, 1.15), (8.0, 1.15), (8.7, 1.15), (6.7, 2.0), (9.3, 2.0)]
    specs += [(f"chair-{i}", "chair", "a brown wooden dining chair", {"color": "brown", "material": "wood"}, xy,
               [13, 14, 15, 16]) for i, xy in enumerate(chairs)]
    # one chair was split in two by association: a fragment seen later, 0.2 m away, never beside it
    specs.append(("chair-0b", "chair", "a brown wooden dining chair", {"color": "brown"}, (7.4, 2.75), [17]))
    nodes = []
    for oid, label, desc, attrs, xy, seen in specs:
        obs = [Observation(tour, t0 + s * sec, (200.0 + 10 * (hash(oid) % 20), 180.0, 300.0 + 10 * (hash(oid) % 20), 300.0),
                           "demo#000000", oid) for s in seen]
        nodes.append(ObjectNode(oid, label, desc, attrs, [], [label], [places[seen[0]]], obs[0].stamp_ns,
                                obs[-1].stamp_ns, obs, xy, 0.05, [], [tour]))
    rels = [Relation(f"chair-{i}", "next to", "table", [t0 + 14 * sec], tour) for i in range(8)]
    rels += [Relation("kettle", "on", "fridge", [t0 + 10 * sec], tour)]
    memory.graph.apply_merge("demo#000000", nodes, rels)
    emb = memory.text_embedder
    memory.vectors.ensure_collection(memory.text_collection, emb.dim)
    memory.vectors.upsert(memory.text_collection, [f"{n.id}|demo#000000" for n in nodes],
                          emb.embed_texts([n.text() for n in nodes]),
                          [{"object_id": n.id, "tour_id": tour, "chunk_id": "demo#000000", "stamp_ns": n.first_seen_ns,
                            "label": n.label} for n in nodes])
    memory.touch()
    return memory
