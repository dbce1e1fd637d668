"""Baselines scored in the same run as GER (paper table 7, seed 002):

- F (full graph): every object is scored (a full scan; the LLM would get the whole graph);
  its prompt size is the whole graph rendered.
- CwGR: chunk graphs as perceived (``memory.chunks_dir``), no cross-chunk association: each
  chunk object is its own node, so no positions and only within-chunk relations.
- lexical (SEG-style query-aware pruning): keyword overlap between the question and each
  object's text, no embeddings.
GR alone is ``Retriever(use_vectors=False)`` in ger.py.
These scan the whole graph by design; they are for evaluation, not for the /ask path.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..model import ChunkGraph, ObjectNode, Observation, Relation
from .graph_retrieval import Subgraph, attribute_agreement
from .query import FUNCTION_WORDS, ParsedQuery, singular, words

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger("vlkng.ask.baselines")
BASELINE_TARGETS = 8  # as ger.TARGETS_MAX, so baselines and GER compare on equal terms


class Corpus:
    """All objects of a memory (or all chunk objects) with cached text embeddings."""

    def __init__(self, nodes: list[ObjectNode], relations: list[Relation], memory: "Memory") -> None:
        self.nodes = nodes
        self.relations = relations
        self.memory = memory
        self._vecs: np.ndarray | None = None

    @property
    def vecs(self) -> np.ndarray:
        if self._vecs is None:
            texts = [n.text() + " " + n.label for n in self.nodes]
            self._vecs = self.memory.text_embedder.embed_texts(texts) if texts else np.zeros((0, 1))
        return self._vecs

    def prompt_chars(self) -> int:
        """Size of the whole graph as an LLM prompt (what F would send)."""
        return sum(len(f"- {n.id}: {n.label} {n.attributes} {n.description} seen {n.frames[:6]}\n")
                   for n in self.nodes) + sum(len(f"- {r.subject} {r.predicate} {r.object}\n")
                                              for r in self.relations)


def full_corpus(memory: "Memory") -> Corpus:
    return Corpus(list(memory.graph.iter_objects()), list(memory.graph.iter_relations()), memory)


def chunk_corpus(memory: "Memory", tour_ids: list[str]) -> Corpus:
    """Every chunk object as its own node (id chunk_id/local_id): no association."""
    nodes: list[ObjectNode] = []
    rels: list[Relation] = []
    for tour in tour_ids:
        for path in sorted(Path(memory.chunks_dir, tour).glob("*.json")):
            try:
                chunk = ChunkGraph.from_dict(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError, TypeError) as e:
                log.warning("skipping unreadable chunk %s: %s", path, e)
                continue
            for o in chunk.objects:
                oid = f"{chunk.chunk_id}/{o.local_id}"
                obs = [Observation(chunk.tour_id, s, tuple(b), chunk.chunk_id, o.local_id)
                       for s, b in sorted(o.boxes.items())]
                nodes.append(ObjectNode(oid, o.label, o.description, dict(o.attributes),
                                        list(o.affordances), [o.label],
                                        [chunk.places[s] for s in o.boxes if s in chunk.places],
                                        min(o.boxes, default=0), max(o.boxes, default=0), obs))
            for r in chunk.relations:
                rels.append(Relation(f"{chunk.chunk_id}/{r.subject}", r.predicate,
                                     f"{chunk.chunk_id}/{r.object}", list(r.stamps), chunk.tour_id))
    return Corpus(nodes, rels, memory)


def _subgraph(corpus: Corpus, scores: np.ndarray, relevance: np.ndarray, max_nodes: int) -> Subgraph:
    sub = Subgraph()
    order = np.argsort(-scores, kind="stable")[:max_nodes]
    top = float(scores[order[0]]) if len(order) and scores[order[0]] > 0 else 1.0
    for rank, i in enumerate(order):
        n = corpus.nodes[int(i)]
        sub.objects[n.id] = n
        sub.scores[n.id] = float(scores[i]) / top
        sub.relevance[n.id] = float(relevance[i])
        sub.roles[n.id] = "target" if rank < BASELINE_TARGETS and scores[i] > 0 else "context"
    sub.relations = [r for r in corpus.relations if r.subject in sub.objects and r.object in sub.objects]
    return sub


def embedding_scan(corpus: Corpus, pq: ParsedQuery, max_nodes: int) -> Subgraph:
    """F and CwGR: cosine of the question's search text against every object's text."""
    if not corpus.nodes:
        return Subgraph()
    q = corpus.memory.text_embedder.embed_texts([pq.search_text()])[0]
    sims = corpus.vecs @ q
    bonus = np.array([0.25 * attribute_agreement(n, pq) for n in corpus.nodes])
    return _subgraph(corpus, sims * (1 + bonus), sims, max_nodes)


def lexical_scan(corpus: Corpus, pq: ParsedQuery, max_nodes: int) -> Subgraph:
    """SEG-style: fraction of the question's content words found in an object's text."""
    q = {singular(w) for w in words(pq.text) if w not in FUNCTION_WORDS}
    if not corpus.nodes or not q:
        return Subgraph()
    scores = []
    for n in corpus.nodes:
        text = {singular(w) for w in words(" ".join([n.label, n.text(), *n.labels_seen, *n.places]))}
        scores.append(len(q & text) / len(q))
    arr = np.array(scores, dtype=float)
    return _subgraph(corpus, arr, arr, max_nodes)
