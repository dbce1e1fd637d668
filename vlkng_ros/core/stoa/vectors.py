"""The vector side of a merge: one descriptor embedding and one crop embedding per (object, chunk).

Vectors are written before the graph: a crash in between re-merges the chunk, and the
deterministic point ids (``<object id>|<chunk id>``) make the re-upsert replace, not duplicate.
"""

from __future__ import annotations

import logging

import numpy as np

from ..memory import Memory
from ..model import ChunkGraph, Keyframe
from .association import NewObject

log = logging.getLogger("vlkng.stoa")


def write_vectors(memory: Memory, chunk: ChunkGraph, news: list[NewObject], local_to_global: dict[str, str],
                  keyframes: dict[int, Keyframe]) -> None:
    """Upsert the descriptor vector of every object of the chunk that has a node, then its crop."""
    if not news:
        return
    vectors = memory.vectors
    ids, vecs, payloads = [], [], []
    for n in news:
        gid = local_to_global.get(n.obj.local_id)
        if gid is None:
            continue
        ids.append(f"{gid}|{chunk.chunk_id}")
        vecs.append(n.vec)
        payloads.append({"object_id": gid, "tour_id": chunk.tour_id, "chunk_id": chunk.chunk_id,
                         "stamp_ns": min(n.obj.boxes), "label": n.obj.label})
    vectors.ensure_collection(memory.text_collection, memory.text_embedder.dim)
    vectors.upsert(memory.text_collection, ids, np.stack(vecs), payloads)
    _write_crops(memory, chunk, news, local_to_global, keyframes, payloads)


def _write_crops(memory: Memory, chunk: ChunkGraph, news: list[NewObject], local_to_global: dict[str, str],
                 keyframes: dict[int, Keyframe], payloads: list[dict]) -> None:
    """One SigLIP2 crop embedding per (object, chunk): its largest box in the chunk."""
    embedder = memory.image_embedder
    if embedder is None:
        return
    from ..capture import decode_image

    crops, ids, pls = [], [], []
    for n, payload in zip([n for n in news if n.obj.local_id in local_to_global], payloads):
        stamp, box = max(n.obj.boxes.items(), key=lambda sb: (sb[1][2] - sb[1][0]) * (sb[1][3] - sb[1][1]))
        kf = keyframes.get(stamp)
        if kf is None or not kf.image_ref:
            continue
        try:
            img = decode_image(memory.frames.get(kf.image_ref))
        except (OSError, ValueError) as e:
            log.warning("%s: crop of %s skipped: %s", chunk.chunk_id, n.obj.local_id, e)
            continue
        x1, y1, x2, y2 = (int(round(v)) for v in box)
        crops.append(img[y1:y2, x1:x2])
        ids.append(f"{payload['object_id']}|{chunk.chunk_id}")
        pls.append({**payload, "stamp_ns": stamp})
    if crops:
        collection = memory.image_collection
        assert collection is not None
        memory.vectors.ensure_collection(collection, embedder.dim)
        memory.vectors.upsert(collection, ids, embedder.embed_images(crops), pls)
