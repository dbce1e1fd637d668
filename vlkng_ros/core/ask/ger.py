"""Graph-Enhanced Retrieval (GER): graph retrieval fused with text->object embedding search.

Why reciprocal rank fusion: the signals have incomparable scales (label similarity with an
attribute bonus, text-embedding cosine over object descriptions, SigLIP image-text cosine whose
values sit around 0.1). RRF uses ranks only, so no per-signal calibration is needed, one strong
signal cannot drown the others, and an object found by several signals rises (Cormack et al.
2009). ``cfg.ask.rrf_k`` (60) damps the advantage of the very first ranks. The raw similarity is
kept next to the fused rank: it decides "relevant at all" (the relevance floor), which ranks
cannot.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..model import ObjectNode
from .graph_retrieval import (LABEL_LOOKUP_LIMIT, LabelIndex, Ranked, Subgraph, TourIndex,
                              attribute_agreement, expand, label_ranking, observation_weight, place_factor,
                              relevance_floor)
from .query import ParsedQuery, RelationCue

if TYPE_CHECKING:
    from ..config import AskConfig
    from ..memory import Memory

TARGETS_MAX = 8  # best-ranked objects per entity kept as targets (more only dilutes the frames)
AFFORDANCE_VERBATIM = 0.8  # an affordance this close to the phrase says what the phrase asks for
REFS_MAX = 4  # reference objects per relation cue ("next to the kettle") considered
REF_KEEP_SHARE = 0.5  # references scoring under this share of their cue's best are dropped
AFTER_WINDOW_S = 10.0  # "right after leaving X": what came into view within this time
RECENT_WINDOW_S = 4.0  # ... and was not already in view just before
PLACE_SAMPLE_FRAMES = 40  # "what did I see in the office": keyframes sampled from that place


def rrf(rankings: list[Ranked], k: int) -> Ranked:
    """Reciprocal rank fusion, each contribution weighted by the object's relevance relative to
    the best of that signal (squared): plain RRF treats a signal's 7th-best weak match like its
    exact match when k is large, so a run of near-synonyms ("chair", "sofa") found by several
    signals would outrank the exact "cushion" found by one. The normalisation is per signal,
    so the scales still need no calibration. The fused relevance is the best raw relevance."""
    fused: dict[str, float] = {}
    rel: dict[str, float] = {}
    for r in rankings:
        best = max(r.relevance.values(), default=0.0)
        if best <= 0.0:
            continue
        for rank, oid in enumerate(r.order):
            share = max(0.0, r.relevance[oid]) / best
            fused[oid] = fused.get(oid, 0.0) + share * share / (k + rank + 1)
            rel[oid] = max(rel.get(oid, 0.0), r.relevance[oid])
    order = sorted(fused, key=lambda o: (-fused[o], -rel[o], o))
    out = Ranked(order, rel)
    out.fused = fused  # type: ignore[attr-defined]
    return out


def vector_ranking(memory: "Memory", collection: str | None, vec: np.ndarray, k: int,
                   hits: list | None = None) -> Ranked:
    """Objects by their best per-chunk embedding similarity (top-k search, no scan)."""
    ranked = Ranked()
    if not collection:
        return ranked
    for hit in hits if hits is not None else memory.vectors.search(collection, vec, k):
        oid = hit.payload.get("object_id")
        if oid:
            ranked.add(str(oid), float(hit.score))
    return ranked.sorted()


class Retriever:
    """GR (use_vectors=False) or GER (use_vectors=True) over one memory."""

    def __init__(self, memory: "Memory", cfg: "AskConfig", use_vectors: bool,
                 labels: LabelIndex | None = None, tours: TourIndex | None = None) -> None:
        self.memory = memory
        self.cfg = cfg
        self.use_vectors = use_vectors
        self.labels = labels or LabelIndex(memory, refresh_s=cfg.refresh_s)
        self.tours = tours or TourIndex(memory, cfg.refresh_s)

    def entity_ranking(self, phrase: str, pq: ParsedQuery, with_attrs: bool) -> tuple[Ranked, dict[str, ObjectNode]]:
        text = " ".join(dict.fromkeys(pq.attributes + [phrase])) if with_attrs else phrase
        vec = self.labels.embed([text])[0]
        # one top-k search serves both the label-synonym lookup and (GER) the object ranking
        hits = self.memory.vectors.search(self.memory.text_collection, vec, self.cfg.vector_k)
        # what the thing is for: a graph attribute, so GR uses it too
        uses = self.labels.affordance_ranking(vec, phrase) if with_attrs else None
        # "sit to watch TV" says what it is for, not what it is called: where an affordance says
        # so almost word for word, the label closest to the phrase is no name for it (the
        # armchair, 0.50, had outvoted the sofa's "watch TV from", 0.88)
        activity = uses is not None and max(uses.relevance.values(), default=0.0) >= AFFORDANCE_VERBATIM
        labels = self.labels.similar_labels(phrase, self.labels.embed([phrase])[0] if with_attrs else vec,
                                            self.cfg.vector_k, hits, closest_guess=not activity)
        known = self.labels.lexicon_expansion(phrase, labels)
        if known:
            # "settee": the embedder does not know the word but the lexicon does; search with
            # the word it is (a kind of) in this memory ("settee sofa"), else the object
            # descriptions rank by the embedder's guess
            text = f"{text} {known}"
            vec = self.labels.embed([text])[0]
            hits = self.memory.vectors.search(self.memory.text_collection, vec, self.cfg.vector_k)
            uses = self.labels.affordance_ranking(vec, phrase) if with_attrs else None
        lab_rank, nodes = label_ranking(self.memory, labels, pq if with_attrs else ParsedQuery(text=""),
                                        LABEL_LOOKUP_LIMIT, self.tours)
        rankings = [lab_rank]
        if uses is not None:
            rankings.append(uses)
        if self.use_vectors:
            rankings.append(vector_ranking(self.memory, self.memory.text_collection, vec,
                                           self.cfg.vector_k, hits))
            img = self.memory.image_embedder
            if img is not None:
                rankings.append(vector_ranking(self.memory, self.memory.image_collection,
                                               img.embed_texts([text])[0], self.cfg.vector_k))
        fused = rrf(rankings, self.cfg.rrf_k)
        missing = [o for o in fused.order if o not in nodes]
        if missing:
            nodes.update({n.id: n for n in self.memory.graph.get_objects(missing)})
        fused.order = [o for o in fused.order if o in nodes]
        return fused, nodes

    def retrieve(self, pq: ParsedQuery) -> Subgraph:
        sub = Subgraph()
        refs: dict[str, float] = {}  # ref object id -> score
        ref_pred: dict[str, str] = {}
        ref_cue: dict[str, int] = {}  # ref object id -> which relation cue found it
        cues, target_phrase = self.spatial_cues(pq)
        for cue_index, cue in enumerate(cues):
            ref_pq = ParsedQuery(text=cue.ref, target=cue.ref, attributes=list(cue.attributes))
            ranked, nodes = self.entity_ranking(cue.ref, ref_pq, with_attrs=bool(cue.attributes))
            floor = relevance_floor(self.memory.text_embedder.name)
            relevant = [o for o in ranked.order if ranked.relevance[o] >= floor]
            fused = getattr(ranked, "fused", {})
            best = max((fused.get(o, 0.0) for o in relevant[:REFS_MAX]), default=0.0) or 1.0
            cue_scores = [ranked.relevance[oid] * (fused.get(oid, best) / best) ** 2 / (1 + 0.25 * rank)
                          for rank, oid in enumerate(relevant[:REFS_MAX])]
            top_ref = max(cue_scores, default=0.0)
            for oid, score in zip(relevant[:REFS_MAX], cue_scores):
                # the fused share ranks "the black chair" above other chairs; rank breaks ties.
                # A far weaker match is not what the question names (and may be the answer:
                # the monitor next to "the laptop")
                if score < REF_KEEP_SHARE * top_ref:
                    continue
                if score > refs.get(oid, 0.0):
                    refs[oid], ref_pred[oid], ref_cue[oid] = score, cue.predicate, cue_index
                    sub.objects[oid], sub.relevance[oid], sub.roles[oid] = nodes[oid], ranked.relevance[oid], "reference"
        rels = self.memory.graph.relations_of(list(refs), limit=self.cfg.max_edges * 4) if refs else []
        targets: dict[str, float] = {}
        if pq.target:
            ranked, nodes = self.entity_ranking(target_phrase, pq, with_attrs=True)
            fused = getattr(ranked, "fused", {})
            top = ranked.order[:TARGETS_MAX]
            best = max((fused.get(o, 0.0) for o in top), default=1.0) or 1.0
            for oid in top:
                agree = sum(1 for r in rels if oid in (r.subject, r.object)
                            and (r.object if r.subject == oid else r.subject) in refs
                            and r.predicate == ref_pred.get(r.object if r.subject == oid else r.subject))
                near = sum(1 for r in rels if oid in (r.subject, r.object))
                targets[oid] = (fused.get(oid, 0.0) / best) * (1 + 0.5 * min(agree, 2) + 0.1 * min(near, 2)
                                                              + 0.6 * attribute_agreement(nodes[oid], pq, self.tours)
                                                              ) * observation_weight(nodes[oid]) \
                    * place_factor(nodes[oid], pq, self.tours)
                sub.objects[oid], sub.relevance[oid] = nodes[oid], ranked.relevance[oid]
        elif refs:
            # "what was on the counter?": the answer is what stands in that relation to the refs;
            # with several cues ("on the desk next to the laptop") each satisfied cue adds its best
            per_cue: dict[tuple[str, int], float] = {}
            for r in rels:
                for ref, other, is_subject in ((r.object, r.subject, True), (r.subject, r.object, False)):
                    if ref in refs and other not in refs:
                        pred_ok = r.predicate == ref_pred.get(ref)
                        # seen in that relation many times > once (one noisy frame)
                        seen = 1.0 + 0.25 * math.log1p(len(r.stamps))
                        s = refs[ref] * (1.0 if pred_ok else 0.4) * (1.0 if is_subject else 0.7) * seen
                        key = (other, ref_cue[ref])
                        per_cue[key] = max(per_cue.get(key, 0.0), s)
            for (other, _), s in per_cue.items():
                targets[other] = targets.get(other, 0.0) + s
            if targets:
                for node in self.memory.graph.get_objects(sorted(targets, key=lambda o: -targets[o])[:TARGETS_MAX]):
                    sub.objects[node.id] = node
                    sub.relevance[node.id] = max(refs.values())
                targets = {o: s for o, s in targets.items() if o in sub.objects}
        elif any(t.place for t in pq.time):
            targets = self.after_departure(pq, sub)
        elif pq.places:
            targets = self.seen_in_place(pq.places[0], sub)
        top_t = max(targets.values(), default=1.0) or 1.0
        for oid, s in targets.items():
            sub.scores[oid], sub.roles[oid] = s / top_t, "target"
        for oid, s in refs.items():
            if sub.roles.get(oid) == "reference":
                sub.scores[oid] = 0.5 * s
        sub.relations = [r for r in rels if r.subject in sub.objects and r.object in sub.objects]
        expand(self.memory, sub, self.cfg)
        if pq.target and self.use_vectors:  # GR stays the graph-only baseline it is compared as
            sub.offer_from = self.labels.offer
        return sub

    def spatial_cues(self, pq: ParsedQuery) -> tuple[list[RelationCue], str]:
        """The relation cues that relate the target to a thing, and the phrase to rank targets
        by: a cue whose reference the lexicon knows only as weather, time or an act is part of
        what the target is for ("something to keep me dry in the rain"), not where it stands."""
        cues, phrase = [], pq.target
        for cue in pq.relations:
            if pq.target and self.labels.lexicon.names_a_thing(cue.ref) is False:
                phrase = f"{phrase} {cue.predicate} {cue.ref}"
            else:
                cues.append(cue)
        return cues, phrase

    def _add_targets(self, scores: dict[str, float], sub: Subgraph, relevance: float) -> dict[str, float]:
        best = sorted(scores, key=lambda o: -scores[o])[:TARGETS_MAX]
        for node in self.memory.graph.get_objects(best):
            sub.objects[node.id], sub.relevance[node.id] = node, relevance
        return {o: scores[o] for o in best if o in sub.objects}

    def after_departure(self, pq: ParsedQuery, sub: Subgraph) -> dict[str, float]:
        """"What did I see right after leaving the kitchen (the second time)?": objects that came
        into view within AFTER_WINDOW_S of leaving and were not in view just before, earliest
        first. The departures come from the keyframes' places (perception output)."""
        cue = next(t for t in pq.time if t.place)
        leaves = self.tours.departures(cue.place)
        if cue.nth:
            leaves = leaves[cue.nth - 1: cue.nth]
        scores: dict[str, float] = {}
        for tour, last_in, first_out in leaves[:3]:
            stamps, _ = self.tours.frames(tour)
            before = [(tour, s) for s in stamps if last_in - RECENT_WINDOW_S * 1e9 <= s <= last_in]
            after = [(tour, s) for s in stamps if first_out <= s <= first_out + AFTER_WINDOW_S * 1e9]
            recent = {o for ids in self.memory.graph.objects_in_frames(before).values() for o in ids}
            seen_after = self.memory.graph.objects_in_frames(after)
            for rank, key in enumerate(sorted(seen_after, key=lambda k: k[1])):
                for oid in seen_after[key]:
                    if oid not in recent:
                        # earlier sightings count more; every sighting in the window adds a little
                        scores[oid] = scores.get(oid, 0.0) + 1.0 / (1.0 + 0.5 * rank)
        return self._add_targets(scores, sub, 1.0)

    def seen_in_place(self, place: str, sub: Subgraph) -> dict[str, float]:
        """"What did I see in the office?": objects in keyframes perceived as that kind of place,
        by how many sampled frames show them."""
        frames = []
        for tour in self.memory.graph.tours():
            stamps, places = self.tours.frames(tour)
            frames += [(tour, s) for s, p in zip(stamps, places) if p and p.lower() == place]
        if len(frames) > PLACE_SAMPLE_FRAMES:
            step = len(frames) / PLACE_SAMPLE_FRAMES
            frames = [frames[int(i * step)] for i in range(PLACE_SAMPLE_FRAMES)]
        scores: dict[str, float] = {}
        for ids in self.memory.graph.objects_in_frames(frames).values():
            for oid in ids:
                scores[oid] = scores.get(oid, 0.0) + 1.0
        return self._add_targets(scores, sub, 1.0)
