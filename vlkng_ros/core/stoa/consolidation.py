"""Node content: what a node becomes when a chunk's object joins it, when an earlier split is
consolidated into it, and how it is named (label and attribute values by majority vote)."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import replace

from ..geometry import RayAccumulator, fuse
from ..lexicon import is_kind_of
from ..model import ChunkGraph, ChunkObject, ObjectNode, Observation, Relation, replace_word
from .association import (LABEL_GATE, POSITION_NOISE_M2, SAME_KIND_SIMILARITY, WELL_LOCALISED_VAR, Associator,
                          NewObject, label_weights)
from .report import MergeReport

CONSOLIDATE_SIGMAS = 2.0  # squared-distance gate: d^2 <= 2 * sigma2 * this
CONSOLIDATE_NEIGHBOURS = 16  # nodes near a well-localised one checked for an earlier split
MOVED_MAX_VAR = 0.5  # a sighting must be this well placed (m^2) to say an object was moved


def object_id_for(chunk_id: str, local_id: str) -> str:
    """Deterministic global id of an object first created from (chunk, local id)."""
    return "obj-" + hashlib.sha1(f"{chunk_id}/{local_id}".encode()).hexdigest()[:12]


def apply_assignment(chunk: ChunkGraph, news: list[NewObject], cands: list[list[ObjectNode]],
                     assignment: dict[int, str], report: MergeReport, moved_distance_m: float,
                     camera_height: float | None) -> tuple[list[ObjectNode], dict[str, str]]:
    """The nodes the chunk's objects create or update, and chunk-local id -> global id."""
    by_id = {c.id: c for cs in cands for c in cs}
    out: list[ObjectNode] = []
    local_to_global: dict[str, str] = {}
    for i, n in enumerate(news):
        o = n.obj
        obs = [Observation(chunk.tour_id, s, tuple(b), chunk.chunk_id, o.local_id)  # type: ignore[arg-type]
               for s, b in sorted(o.boxes.items())]
        if not obs:
            continue
        first, last = obs[0].stamp_ns, obs[-1].stamp_ns
        target = by_id.get(assignment.get(i, ""))
        if target is None:
            gid = object_id_for(chunk.chunk_id, o.local_id)
            label_votes, attribute_votes = _votes_of_chunk_object(o)
            node = ObjectNode(
                id=gid, label=o.label, description=o.description, attributes=dict(o.attributes),
                affordances=list(o.affordances), labels_seen=[o.label],
                label_votes=label_votes, attribute_votes=attribute_votes,
                places=_ranked(n.places), place_counts=dict(n.places),
                first_seen_ns=first, last_seen_ns=last,
                observations=obs, position=n.position, position_var=n.var if n.position else None,
                position_history=[(first, *n.position)] if n.position else [], tours=[chunk.tour_id],
                ray_stats=n.rays.to_list() if n.position else [])
            report.created.append(gid)
        else:
            node = _updated(target, n, obs, chunk, moved_distance_m, report, camera_height)
            report.matched[o.local_id] = node.id
        local_to_global[o.local_id] = node.id
        out.append(node)
    return out, local_to_global


def consolidate(assoc: Associator, objects: list[ObjectNode], news: list[NewObject],
                local_to_global: dict[str, str],
                report: MergeReport) -> tuple[list[ObjectNode], list[Relation], list[str]]:
    """Fix earlier splits: once a node touched by this chunk is well localised, an older node
    of the same kind at the same place that was never in view together with it is the same
    object seen earlier from a poor viewpoint. It is absorbed (observations, bearings, labels)
    and deleted in the same transaction; its relations are re-pointed."""
    graph = assoc.memory.graph
    emb, lexicon = assoc.emb, assoc.lexicon
    radius_m = assoc.cfg.stoa.consolidate_radius_m  # poorly localised nodes can sit metres off along their bearings
    extents = {local_to_global.get(n.obj.local_id): n.extent_m for n in news}
    in_chunk = {o.id for o in objects}
    removed: list[str] = []
    moved_relations: list[Relation] = []
    out = []
    for u in objects:
        if u.position is None or (u.position_var or 9.0) > WELL_LOCALISED_VAR:
            out.append(u)
            continue
        u_frames = set(u.frames)
        u_labels = label_weights(u)
        for c in graph.objects_near(u.position[0], u.position[1], radius_m, limit=CONSOLIDATE_NEIGHBOURS):
            if c.id in in_chunk or c.id in removed or c.position is None:
                continue
            # a name both were given, each by a good share of its chunks (one stray name on a
            # node is no evidence: the sofa under a cushion once merged into it is no cushion)
            c_labels = label_weights(c)
            shared = max((min(w, c_labels[lab]) for lab, w in u_labels.items() if lab in c_labels), default=0.0)
            if shared < LABEL_GATE and float(
                    emb.get([u.label.lower()])[0] @ emb.get([c.label.lower()])[0]) < SAME_KIND_SIMILARITY \
                    and not is_kind_of(lexicon, u.label.lower(), c.label.lower()):
                continue
            if u_frames & set(c.frames):
                continue  # seen together: two objects
            colors = (u.attributes.get("color"), c.attributes.get("color"))
            other_color = all(colors) and colors[0].lower() != colors[1].lower()  # type: ignore[union-attr]
            extent = extents.get(u.id, 0.0)
            if (c.position_var or 9.0) <= WELL_LOCALISED_VAR * 2:
                # both well localised, at one place, never seen together: one object, even if
                # a colour was read differently (light changes colour more than position)
                sigma2 = (POSITION_NOISE_M2 + (0.35 * extent) ** 2 + 0.3 * (u.position_var or 1.0)
                          + 0.3 * (c.position_var or 1.0))
                if math.dist(u.position, c.position) ** 2 > 2.0 * sigma2 * CONSOLIDATE_SIGMAS:
                    continue
            elif other_color or not c.ray_stats or RayAccumulator(c.ray_stats).residual_at(u.position) > (
                    0.3 + 0.35 * extent) ** 2 or not assoc.size_consistent(c, u.position, extent, ignore_cut=True):
                continue  # c's range was never pinned down: its bearings must point at u,
                # and its boxes must have the size u would have from there
            u = _absorb(u, c, assoc.camera_height)
            u_frames = set(u.frames)
            removed.append(c.id)
            report.consolidated.append((c.id, u.id))
            for r in graph.relations_of([c.id]):
                s_id = u.id if r.subject == c.id else r.subject
                o_id = u.id if r.object == c.id else r.object
                if s_id != o_id and s_id not in removed and o_id not in removed:
                    moved_relations.append(Relation(s_id, r.predicate, o_id, list(r.stamps), r.tour_id))
        out.append(u)
    moved_relations = [r for r in moved_relations if r.subject not in removed and r.object not in removed]
    return out, moved_relations, removed


def _updated(node: ObjectNode, n: NewObject, obs: list[Observation], chunk: ChunkGraph,
             moved_distance_m: float, report: MergeReport, camera_height: float | None) -> ObjectNode:
    o = n.obj
    position, var, history = node.position, node.position_var, list(node.position_history)
    ray_stats = node.ray_stats
    if n.position is not None:
        if position is None:
            position, var, ray_stats = n.position, n.var, n.rays.to_list()
            history.append((obs[0].stamp_ns, *n.position))
        elif math.dist(position, n.position) > moved_distance_m and n.var < MOVED_MAX_VAR \
                and chunk.tour_id not in node.tours:
            report.moved.append(node.id)  # seen somewhere else in a later tour: it was moved
            position, var, ray_stats = n.position, n.var, n.rays.to_list()
            history.append((obs[0].stamp_ns, *n.position))
        elif node.ray_stats:  # all rays so far, re-solved: the estimate sharpens with each view
            acc = RayAccumulator(node.ray_stats).merged(n.rays)
            (position, var), ray_stats = acc.solve(camera_height), acc.to_list()  # type: ignore[misc]
        else:
            position, var = fuse(position, var or 0.5, n.position, n.var)
    label_votes, attribute_votes = _add_votes(*_votes(node), *_votes_of_chunk_object(o))
    return replace(
        _renamed(replace(node, description=node.description or o.description), label_votes, attribute_votes),
        affordances=list(dict.fromkeys([*node.affordances, *o.affordances])),
        labels_seen=list(dict.fromkeys([*node.labels_seen, o.label])),
        places=_ranked(counts := _add_counts(node.place_counts, n.places)), place_counts=counts,
        first_seen_ns=min(node.first_seen_ns, obs[0].stamp_ns),
        last_seen_ns=max(node.last_seen_ns, obs[-1].stamp_ns),
        observations=[*node.observations, *obs],
        position=position, position_var=var, position_history=history,
        tours=list(dict.fromkeys([*node.tours, chunk.tour_id])), ray_stats=ray_stats,
    )


def _absorb(keep: ObjectNode, gone: ObjectNode, camera_height: float | None) -> ObjectNode:
    """``keep`` with everything ``gone`` was built from (its sightings and bearings)."""
    ray_stats, position, var = keep.ray_stats, keep.position, keep.position_var
    if keep.ray_stats and gone.ray_stats:
        acc = RayAccumulator(keep.ray_stats).merged(RayAccumulator(gone.ray_stats))
        est = acc.solve(camera_height)
        if est is not None:
            (position, var), ray_stats = est, acc.to_list()
    label_votes, attribute_votes = _add_votes(*_votes(keep), *_votes(gone))
    return replace(
        _renamed(replace(keep, description=keep.description or gone.description), label_votes, attribute_votes),
        affordances=list(dict.fromkeys([*keep.affordances, *gone.affordances])),
        labels_seen=list(dict.fromkeys([*keep.labels_seen, *gone.labels_seen])),
        places=_ranked(counts := _add_counts(keep.place_counts, gone.place_counts)), place_counts=counts,
        first_seen_ns=min(keep.first_seen_ns, gone.first_seen_ns),
        last_seen_ns=max(keep.last_seen_ns, gone.last_seen_ns),
        observations=sorted([*gone.observations, *keep.observations], key=lambda o: (o.tour_id, o.stamp_ns)),
        position=position, position_var=var,
        position_history=sorted([*gone.position_history, *keep.position_history]),
        tours=list(dict.fromkeys([*gone.tours, *keep.tours])), ray_stats=ray_stats)


# --- naming: label and attribute values by majority vote over the chunks that saw the object ---
def _add_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return dict(Counter(a) + Counter(b))


def _ranked(counts: dict[str, int]) -> list[str]:
    return [p for p, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _votes(node: ObjectNode) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """The node's label and attribute votes (copies); a node stored before voting existed counts
    its current label and attributes once."""
    labels = dict(node.label_votes) or {node.label: 1}
    attributes = {k: dict(v) for k, v in node.attribute_votes.items()}
    for k, v in node.attributes.items():
        attributes.setdefault(k, {v: 1})
    return labels, attributes


def _votes_of_chunk_object(o: ChunkObject) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    return {o.label: 1}, {k: {v: 1} for k, v in o.attributes.items()}


def _add_votes(labels: dict[str, int], attributes: dict[str, dict[str, int]], more_labels: dict[str, int],
               more_attributes: dict[str, dict[str, int]]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    attributes = {k: dict(v) for k, v in attributes.items()}
    for k, votes in more_attributes.items():
        attributes[k] = _add_counts(attributes.get(k, {}), votes)
    return _add_counts(labels, more_labels), attributes


def _majority(votes: dict[str, int], current: str) -> str:
    """The value most chunks gave; on a tie the current one stays (no flapping), else the first
    in alphabetical order (deterministic)."""
    best = max(votes.values())
    if votes.get(current, 0) == best:
        return current
    return min(v for v, c in votes.items() if c == best)


def _renamed(node: ObjectNode, label_votes: dict[str, int],
             attribute_votes: dict[str, dict[str, int]]) -> ObjectNode:
    """``node`` named by its votes: label and attribute values are the majorities, and its
    description, written by the chunk that first saw it, is reworded to match."""
    label = _majority(label_votes, node.label)
    attributes = {k: _majority(v, node.attributes.get(k, "")) for k, v in attribute_votes.items() if v}
    description = replace_word(node.description, node.label, label) if label != node.label else node.description
    for k, v in attributes.items():
        old = node.attributes.get(k)
        if old and old != v:
            description = replace_word(description, old, v)
    return replace(node, label=label, attributes=attributes, description=description,
                   label_votes=label_votes, attribute_votes=attribute_votes)
