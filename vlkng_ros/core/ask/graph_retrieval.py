"""Graph retrieval (GR): anchors by label/attribute match, expansion along relations and
co-visibility, all under a hard node/edge budget.

Every store call here is an indexed lookup with a limit (objects_by_label, relations_of,
objects_in_frames, get_objects) or a vector top-k, so the cost does not grow with the graph.
Label synonyms come from embeddings: the entity phrase is embedded, the vector store's top-k
hits name labels that exist in memory, and labels whose embedding is close to the phrase are
looked up by label ("cup" -> label "mug").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..model import ObjectNode, Relation
from .query import ParsedQuery, singular, words

if TYPE_CHECKING:
    from ..config import AskConfig
    from ..memory import Memory

LABEL_SYNONYM_MIN = 0.6  # cosine between phrase and label to treat the label as a synonym
RELEVANCE_FLOOR = {"minilm": 0.36, "siglip2": 0.1}  # below: "not seen" (per embedder scale)
DEFAULT_RELEVANCE_FLOOR = 0.3
LABEL_LOOKUP_LIMIT = 40
MAX_EXPAND_FRAMES = 12


def relevance_floor(embedder_name: str) -> float:
    for key, floor in RELEVANCE_FLOOR.items():
        if embedder_name.startswith(key):
            return floor
    return DEFAULT_RELEVANCE_FLOOR


@dataclass
class Ranked:
    """An object ranking from one retrieval signal: id -> (rank 0-based, raw relevance)."""

    order: list[str] = field(default_factory=list)
    relevance: dict[str, float] = field(default_factory=dict)

    def add(self, oid: str, rel: float) -> None:
        if oid not in self.relevance:
            self.order.append(oid)
            self.relevance[oid] = rel
        else:
            self.relevance[oid] = max(rel, self.relevance[oid])

    def sorted(self) -> "Ranked":
        order = sorted(self.order, key=lambda o: -self.relevance[o])
        return Ranked(order, dict(self.relevance))


@dataclass
class Subgraph:
    """The budgeted evidence: scored objects (targets first) and relations among them."""

    objects: dict[str, ObjectNode] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)  # fused score, top target = 1.0
    relevance: dict[str, float] = field(default_factory=dict)  # raw similarity to the question
    roles: dict[str, str] = field(default_factory=dict)  # target | reference | context
    relations: list[Relation] = field(default_factory=list)

    def ordered_ids(self) -> list[str]:
        return sorted(self.objects, key=lambda o: -self.scores.get(o, 0.0))

    def targets(self) -> list[str]:
        return [o for o in self.ordered_ids() if self.roles.get(o) == "target"]


class LabelIndex:
    """Embedding-based label matching with a bounded cache of label vectors."""

    def __init__(self, memory: "Memory") -> None:
        self.memory = memory
        self._vecs: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.memory.text_embedder.embed_texts(texts)

    def label_vectors(self, labels: list[str]) -> np.ndarray:
        missing = [lab for lab in labels if lab not in self._vecs]
        if missing:
            if len(self._vecs) > 5000:
                self._vecs.clear()
            for lab, v in zip(missing, self.embed(missing)):
                self._vecs[lab] = v
        return np.stack([self._vecs[lab] for lab in labels])

    def similar_labels(self, phrase: str, phrase_vec: np.ndarray, k: int, hits: list | None = None) -> dict[str, float]:
        """Labels in memory close to ``phrase``: exact words always; others via the vector
        store's top-k payload labels, kept when their embedding is close enough."""
        toks = words(phrase)
        exact = {phrase, singular(phrase)}
        if toks:
            exact |= {toks[-1], singular(toks[-1])}
        out = {lab: 1.0 for lab in exact if lab}
        if hits is None:
            hits = self.memory.vectors.search(self.memory.text_collection, phrase_vec, k)
        labels = sorted({str(h.payload.get("label", "")).lower() for h in hits} - {""} - set(out))
        if labels:
            sims = self.label_vectors(labels) @ phrase_vec
            out.update({lab: float(s) for lab, s in zip(labels, sims) if s >= LABEL_SYNONYM_MIN})
        return out


def label_ranking(memory: "Memory", labels: dict[str, float], pq: ParsedQuery,
                  limit: int = LABEL_LOOKUP_LIMIT) -> tuple[Ranked, dict[str, ObjectNode]]:
    """Objects whose label matches, scored by label similarity plus attribute/place agreement."""
    nodes: dict[str, ObjectNode] = {}
    ranked = Ranked()
    if not labels:
        return ranked, nodes
    for node in memory.graph.objects_by_label(list(labels), limit=limit):
        names = [node.label.lower()] + [lab.lower() for lab in node.labels_seen]
        sim = max(labels.get(n, 0.0) for n in names)
        nodes[node.id] = node
        ranked.add(node.id, sim * (1.0 + 0.25 * attribute_agreement(node, pq)))
    return ranked.sorted(), nodes


def attribute_agreement(node: ObjectNode, pq: ParsedQuery) -> float:
    """Fraction of the question's attribute and place words the object carries."""
    wanted = pq.attributes + pq.places
    if not wanted:
        return 0.0
    have = set(" ".join(list(node.attributes.values()) + node.places + [node.description]).lower().split())
    return sum(1 for w in wanted if w in have) / len(wanted)


def expand(memory: "Memory", sub: Subgraph, cfg: "AskConfig") -> None:
    """Pull in relations of the subgraph's best objects and co-visible objects, then cut the
    result to the node/edge budget (targets and references are kept first)."""
    seeds = sub.ordered_ids()[: max(4, cfg.max_nodes // 3)]
    rels = memory.graph.relations_of(seeds, limit=cfg.max_edges * 4)
    new_ids = {r.object if r.subject in sub.objects else r.subject for r in rels} - set(sub.objects)
    frames = []
    for oid in sub.targets()[:3] or seeds[:2]:
        frames.extend(sub.objects[oid].frames[:MAX_EXPAND_FRAMES // 3])
    covis: dict[str, int] = {}
    for ids in memory.graph.objects_in_frames(frames[:MAX_EXPAND_FRAMES]).values():
        for oid in ids:
            if oid not in sub.objects:
                covis[oid] = covis.get(oid, 0) + 1
    room = cfg.max_nodes - len(sub.objects)
    wanted = list(dict.fromkeys(sorted(new_ids) + sorted(covis, key=lambda o: -covis[o])))
    if room > 0 and wanted:
        for node in memory.graph.get_objects(wanted[:room]):
            sub.objects[node.id] = node
            base = max((sub.scores.get(r.subject, 0) + sub.scores.get(r.object, 0)
                        for r in rels if node.id in (r.subject, r.object)), default=0.0)
            sub.scores[node.id] = 0.3 * base + 0.05 * covis.get(node.id, 0)
            sub.roles.setdefault(node.id, "context")
    budget(sub, cfg, rels)


def budget(sub: Subgraph, cfg: "AskConfig", rels: list[Relation]) -> None:
    """Hard cap: at most max_nodes objects and max_edges relations (among kept objects)."""
    keep = sub.ordered_ids()[: cfg.max_nodes]
    for oid in list(sub.objects):
        if oid not in keep:
            for d in (sub.objects, sub.scores, sub.roles, sub.relevance):
                d.pop(oid, None)
    seen: set[tuple[str, str, str]] = {r.key for r in sub.relations}
    edges = list(sub.relations) + [r for r in rels if r.key not in seen]
    edges = [r for r in edges if r.subject in sub.objects and r.object in sub.objects]
    edges.sort(key=lambda r: -(sub.scores.get(r.subject, 0) + sub.scores.get(r.object, 0)))
    sub.relations = edges[: cfg.max_edges]
