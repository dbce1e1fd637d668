"""Graph retrieval (GR): anchors by label/attribute match, expansion along relations and
co-visibility, all under a hard node/edge budget.

Every store call here is an indexed lookup with a limit (objects_by_label, relations_of,
objects_in_frames, get_objects) or a vector top-k, so the cost does not grow with the graph.
Label synonyms come from embeddings: the entity phrase is embedded, the vector store's top-k
hits name labels that exist in memory, and labels whose embedding is close to the phrase are
looked up by label ("cup" -> label "mug"). A lexicon (WordNet, core/lexicon.py) adds the words
a small embedder does not know ("rucksack" = "backpack", a "washbasin" is a kind of "sink").
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..config import AskConfig
from ..lexicon import (DEFINED_ALIKE_MIN, DEFINED_ALIKE_SENSES, KIND_OF_MIN, SYNONYM_MIN, Lexicon, NoLexicon, defined_alike,
                       distinctive_words, is_kind_of)
from ..model import CameraModel, ObjectNode, Pose, Relation
from .query import FUNCTION_WORDS, SINGLE_WORD_PREDICATES, ParsedQuery, singular, words

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..config import AskConfig
    from ..memory import Memory

LABEL_SYNONYM_MIN = 0.6  # cosine between phrase and label to treat the label as a synonym
LABEL_BEST_MIN = 0.45  # the closest label in memory counts as a synonym from this cosine ...
LABEL_BEST_MARGIN = 0.08  # ... and so do labels within this margin of it
AFFORDANCE_MIN = 0.42  # cosine between the question's phrase and an affordance text to use it ...
AFFORDANCE_MARGIN = 0.06  # ... for it and the affordances within this margin of the best one
AFFORDANCE_EXTRA_WEIGHT = 0.3  # an object's second matching affordance (any above the minimum) adds this share
RELEVANCE_FLOOR = {"minilm": 0.36, "siglip2": 0.1}  # below: "not seen" (per embedder scale)
DEFAULT_RELEVANCE_FLOOR = 0.3  # floor for an embedder not in RELEVANCE_FLOOR (e.g. hashing in tests)
LABEL_LOOKUP_LIMIT = 40  # objects read per label lookup: the most recently seen ones, bounded per question
PLACE_MISS_WEIGHT = 0.3  # an object never seen in the place the question names keeps this share
# A sighting's vote for the object's kind of place is 1/max(d, PLACE_NEAR_M)^2, d the camera-object
# distance (m): the object's apparent size (its share of the image) falls as 1/d^2, and a view
# across a room or through a door (4-5 m) is far likelier taken from another room than one from
# arm's length. Closer than about a metre a household object (0.3-1 m) fills a 60-90 degree view
# and the object's own position is uncertain by a few tenths of a metre, so nearer views are not
# more telling: a physical constant of cameras and furniture, not of any world.
PLACE_NEAR_M = 1.0
# Where the object IS, from where the robot walked: a keyframe's place is the room the camera stood in,
# so the places of the camera positions nearest the object's estimated position name the floor it
# stands on. A place whose nearest camera position is FLOOR_SCALE_M farther than the nearest one of
# any place counts e^-1 as much (a robot keeps some tenths of a metre off walls and furniture, so
# two rooms' walked floors a wall apart are about that far from a thing against the wall between
# them); beyond FLOOR_REACH_M of every camera position the robot never walked that floor (a room
# seen only through its door) and the sightings decide alone. The floor weighs FLOOR_WEIGHT against
# the sightings' shares (more than half: a place seen only through a door loses to the one whose
# floor the object stands on when the floor is clear; when two floors are about as near, the
# sightings decide).
FLOOR_SCALE_M = 0.2
FLOOR_REACH_M = 2.5
FLOOR_WEIGHT = 2.0 / 3.0
# A room the robot never entered ("the plant in the bedroom" where no keyframe was taken in a
# bedroom): the thing asked for stands beyond the walked floor, seen through a door. The evidence
# of that (``TourIndex.beyond_walked``): no walked floor within FLOOR_REACH_M of it, or the views
# that looked its way from no farther than it was ever seen from mostly did not see it (a wall stood
# between). Views count with UNSEEN_PRIOR_VIEWS pseudo-views of each kind (seen, unseen), so a
# thing few views looked at is judged neither way.
UNSEEN_PRIOR_VIEWS = 1.0
# Views count out to this share of the farthest distance the object was seen from: detection does
# not end at the farthest sighting, so a view a little farther that looked straight at it and missed
# it says something stood between (on read seeds 583-585, 1.0 left a plant seen only through an
# office door at 0.20, like the things inside walked rooms; 1.25 put it at 0.67, above all but 2 of
# 68 things in walked rooms; 2.0 blurred the two again).
VIEW_REACH_SHARE = 1.25
# A walked floor near the object is behind a wall when views from that kind of place looked its way
# (as ``views_missed`` counts them) at least WALLED_VIEWS times and not one of them saw it, while
# views from another place did, and that many misses are unlikely by chance: at the rate the views
# from where it was seen saw it (shrunk by UNSEEN_PRIOR_VIEWS), all of them missing has a chance of
# WALL_CHANCE or less. Its floor is then left out of ``floor_shares`` (``TourIndex.place_shares``):
# the office plant half a metre behind the hallway wall, seen from the office in 13 views of 13 and
# by none of 14 hallway views that faced it, is nearer the hallway's walked floor than the office's.
# A shoe rack seen once by five office views is missed too often to say so. On 19 read memories
# (seeds 647-648, 675-680, 692-700; 403 things matched to the truth) the room shown was wrong for
# 57 things; this puts 22 right and none wrong (without the chance test, 22 right and two wrong:
# 695's bench, 700's shoe rack; a chance of 0.1: 21 right).
WALLED_VIEWS = 2
WALL_CHANCE = 0.2
# Where a view that faced the object and missed it stored depth, that depth tells a wall from the
# detector's miss (``depth.line_of_sight`` along its bearing): a clear line to it means the detector
# missed a small thing far off, and the view counts neither as looked nor as missed; a blocked
# line, or a view whose depth cannot tell, counts as before. WALLED_VIEWS still counts every miss:
# a clear line may pass a door (on read seeds, un-walling a place on a clear line put 19 things in
# rooms they were never seen from, mostly kitchen things by the hallway door). Read seed 733: the kitchen's plant, seen once from 7 m
# across the walked kitchen, was missed by views with a clear line to it, not by walls. The depth is
# kept at most SIGHT_WIDTH_PX wide (a plain stride; line_of_sight reads any registered size), as
# float16, for at most SIGHT_CACHE keyframes (40 MB); decoding one costs some 7 ms, once per keyframe
# (read seeds 733, 747: 8-21 ms per object the first time it is asked about, 88 and 69 keyframes).
# The room it was seen from most is open to it (it stands there, maybe at its far side, not beyond
# a door) when fewer than OPEN_WALL_SHARE of that room's views that missed it, and whose depth
# tells, had something between (``TourIndex._views_toward``; where that room's depth tells nothing,
# the views of every room it was seen from count); views from other rooms that a wall kept from it,
# and from a room that glimpsed it through a door, say only that it is not in those (fresh seed 786:
# the kitchen's counter, 2.7 m from the walked kitchen floor, seen 9 times from the kitchen and twice
# through the hallway door, was taken for a thing beyond the walked rooms by the hallway's walls). Read seed 733: the kitchen's plant, 4.5 m from the
# walked kitchen floor, missed by 13 kitchen views with a clear line and 1 without, is in the
# kitchen; 747's kitchen plant seen through the hallway door was missed by 7 hallway and dining
# room views, every one with a wall between.
OPEN_WALL_SHARE = 0.5
SIGHT_WIDTH_PX = 160
SIGHT_CACHE = 1024
BEYOND_SAID = 0.5  # from this evidence on, an answer says the thing stands beyond the walked rooms
# Subgraph.rooms of a thing that clearly stands beyond every walked room (TourIndex.seen_through):
# not a kind of place, so a question naming a walked room does not take it as in that room
UNWALKED = "beyond the walked rooms"
BEYOND_TIE = 0.05  # evidence this close to the strongest target's is as strong (one view of twenty)
NEAREST_CACHE = 4096  # object positions whose nearest walked floors a TourIndex remembers
MAX_EXPAND_FRAMES = 12  # frames whose co-visible objects expand the subgraph (a third per target)
LEXICON_HEAD_SHARE = 0.9  # "bedside table": lexicon relations of the head noun alone count this share
SYNONYM_OF_PHRASE = 0.5  # a lexicon relation this strong means the lexicon knows the phrase
SAME_KIND_MIN = 0.7  # label cosine above which two labels may name one object (first/last-seen rivals)
LEXICON_EMBED_TIEBREAK = 0.1  # among lexicon-related labels, embedding similarity breaks ties
OBSERVATION_WEIGHT = 0.04  # x log(1 + sightings): ten tours 0.08 -> 0.04: Acc@1 0.894 -> 0.897, goal 0.878 -> 0.883
MAX_KIND_VARIANTS = 8  # rewritten activity phrases compared with the affordances, at most
# A thing named by a word the memory did not use ("media console" for the "tv stand") may be ranked
# below the targets the found rule checks, or not at all: the fused ranking counts description
# and affordance matches, and the label itself is under LABEL_BEST_MIN (tv stand 0.32, 4th of 42
# labels in 722's memory). Retrieval therefore also offers the objects of the OFFER_LABELS labels
# nearest the phrase by the text embedder (one matrix product with the cached label vectors, one
# indexed lookup per label), the OFFER_PER_LABEL objects most recently given each, which the found
# rule reads only when it accepts none of the targets (``FoundRule._rest``): a bounded number, so
# the cost does not grow with the memory (on read memories 720-722, 723 and 725: 24 ms median
# where it runs, 106 of 238 questions, nearly all of them about things never seen).
OFFER_LABELS = 6
OFFER_PER_LABEL = 3


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
    rooms: dict[str, str] = field(default_factory=dict)  # kind of place each object is in (TourIndex.main_place)
    # objects of the labels nearest the asked name that retrieval did not rank (OFFER_LABELS), read
    # only when the found rule asks for them (``offers``); not evidence until it takes one (``take``)
    offer_from: "Callable[[np.ndarray], list[ObjectNode]] | None" = None
    offered: dict[str, ObjectNode] = field(default_factory=dict)

    def offers(self, phrase_vec: np.ndarray) -> list[str]:
        """The ids of the objects retrieval offers beyond its ranking, for the asked name's text
        embedding (read once, then kept)."""
        if self.offer_from is not None:
            for node in self.offer_from(phrase_vec):
                if node.id not in self.objects:
                    self.offered.setdefault(node.id, node)
            self.offer_from = None
        return list(self.offered)

    def node(self, oid: str) -> ObjectNode:
        """An object of the subgraph or one offered to it."""
        return self.objects[oid] if oid in self.objects else self.offered[oid]

    def take(self, oid: str) -> None:
        """An offered object becomes a target (the found rule accepted it), ranked last."""
        if oid not in self.objects:
            self.objects[oid] = self.offered.pop(oid)
            self.scores[oid], self.relevance[oid], self.roles[oid] = 0.0, 0.0, "target"

    def ordered_ids(self) -> list[str]:
        return sorted(self.objects, key=lambda o: -self.scores.get(o, 0.0))

    def targets(self) -> list[str]:
        return [o for o in self.ordered_ids() if self.roles.get(o) == "target"]


class LabelIndex:
    """Embedding-based label matching with a bounded cache of label vectors.

    Besides the labels the vector top-k names, the phrase is compared with the memory's label
    vocabulary (distinct labels; a few hundred even for huge graphs), so a synonym whose object
    descriptions rank low ("settee" vs "a green fabric sofa") still finds the label "sofa". The
    vocabulary is read once and refreshed only when the memory changed (Memory.generation): no
    scan at all while nothing is written, so a static memory of any size pays it once."""

    def __init__(self, memory: "Memory", lexicon: Lexicon | None = None,
                 refresh_s: float = AskConfig.refresh_s) -> None:
        self.memory = memory
        self.refresh_s = refresh_s  # stores written by another process: re-check counts this often
        self.lexicon: Lexicon = lexicon if lexicon is not None else NoLexicon()
        self._vecs: dict[str, np.ndarray] = {}
        self._vocab: list[str] = []
        self._vocab_mat: np.ndarray | None = None
        self._vocab_key: tuple[int, float] = (-1, 0.0)
        self._vocab_objects = -1
        self._affordances: dict[str, list[str]] = {}  # affordance text -> object ids
        self._aff_texts: list[str] = []
        self._aff_mat: np.ndarray | None = None
        self._aff_nouns: tuple[str, ...] = ()  # the words affordances are about ("drinks" of "store drinks"), sorted
        self._aff_verbs: tuple[str, ...] = ()  # their first word or two ("lie", "lie down" of "lie down on"), sorted
        self._defining: dict[str, set[str]] = {}  # label -> its distinctive definition words
        self._lock = threading.Lock()

    def vocabulary(self) -> tuple[list[str], np.ndarray | None]:
        with self._lock:
            count, built = self._vocab_key
            now = time.monotonic()
            # Written by this process (generation), or - for stores shared with other processes -
            # a cheap count check at most every refresh_s (ask.refresh_s).
            if count < 0 or count != self.memory.generation or (
                    now - built > self.refresh_s and self.memory.graph.count_objects() != self._vocab_objects):
                n = self.memory.generation
                self._vocab_objects = self.memory.graph.count_objects()
                labels: set[str] = set()
                affordances: dict[str, list[str]] = {}
                for node in self.memory.graph.iter_objects():
                    labels.add(node.label.lower())
                    labels.update(lab.lower() for lab in node.labels_seen)
                    for aff in node.affordances:
                        if aff.strip():
                            affordances.setdefault(aff.strip().lower(), []).append(node.id)
                self._vocab = sorted(labels - {""})
                self._vocab_mat = self.label_vectors(self._vocab) if self._vocab else None
                self._aff_texts = sorted(affordances)
                self._affordances = affordances
                self._aff_nouns = tuple(sorted({w for text in self._aff_texts for w in affordance_objects(text)}))
                self._aff_verbs = tuple(sorted({" ".join(t[:n]) for t in (words(a) for a in self._aff_texts)
                                                for n in (1, 2) if len(t) > n}))
                self._aff_mat = self.label_vectors(self._aff_texts) if self._aff_texts else None
                self._vocab_key = (n, now)
            return self._vocab, self._vocab_mat

    def affordance_ranking(self, phrase_vec: np.ndarray, phrase: str = "") -> Ranked:
        """Objects by what they are for: the question's phrase ("fry some eggs", "lie down for
        a bit") against the distinct affordance texts in memory ("cook on", "lie down on"),
        embedded once per vocabulary refresh. Affordances close to the best one count; each
        object gets the similarity of its best matching affordance. The phrase's kind variants
        (``kind_variants``: "put milk" -> "put drinks") are compared too, each affordance keeping
        its best similarity over the phrase and its variants."""
        self.vocabulary()
        ranked = Ranked()
        if self._aff_mat is None:
            return ranked
        sims = self._aff_mat @ phrase_vec
        variants = self.kind_variants(phrase) + self.verb_variants(phrase) if phrase else []
        if variants:
            sims = np.maximum(sims, (self._aff_mat @ self.embed(variants).T).max(axis=1))
        best = float(sims.max())
        if best < AFFORDANCE_MIN:
            return ranked
        order = np.argsort(-sims)
        for i in order:
            if sims[i] < max(AFFORDANCE_MIN, best - AFFORDANCE_MARGIN):
                break
            for oid in self._affordances.get(self._aff_texts[i], []):
                ranked.add(oid, float(sims[i]))
        # "sit down to read": an object that also serves another part of the phrase ("read in")
        # beats one that only serves the best-matching part ("sit on")
        extra: dict[str, float] = {}
        for i in order:
            if sims[i] < AFFORDANCE_MIN:
                break
            for oid in self._affordances.get(self._aff_texts[i], []):
                if oid in ranked.relevance and sims[i] < ranked.relevance[oid]:
                    extra[oid] = max(extra.get(oid, 0.0), float(sims[i]))
        for oid, sim in extra.items():
            ranked.relevance[oid] += AFFORDANCE_EXTRA_WEIGHT * sim
        return ranked.sorted()

    def kind_variants(self, phrase: str) -> list[str]:
        """"Where should I put the milk?": affordances speak of kinds ("store drinks", "keep food
        cold"), questions of instances. For an activity phrase (a verb, then what it acts on),
        each word the lexicon says is a kind of a word some affordance is about is replaced by
        that word: "put milk" -> "put drinks" (milk is a drink). The verb (first word) and
        single-word phrases are left alone ("the milk" alone is not an activity)."""
        toks = words(phrase)
        out: list[str] = []
        for i, tok in enumerate(toks[1:], 1):
            if tok in FUNCTION_WORDS or tok in SINGLE_WORD_PREDICATES:
                continue
            related = self.lexicon.related(tok)
            for noun in self._aff_nouns:
                if singular(noun) == singular(tok):
                    continue
                if max(related.get(noun, 0.0), related.get(singular(noun), 0.0)) >= KIND_OF_MIN:
                    out.append(" ".join(toks[:i] + [noun] + toks[i + 1:]))
        return out[:MAX_KIND_VARIANTS]

    def verb_variants(self, phrase: str) -> list[str]:
        """"Where can I stretch out and relax?": the affordances say "lie down on". An activity
        phrase's leading verb (one word, or two where the lexicon knows the pair: "stretch out")
        is replaced by each verb that starts an affordance in memory and that the verb lexicon
        calls a synonym of it or what it is a kind of: "stretch out relax" -> "lie down relax"."""
        toks = words(phrase)
        vocab, _ = self.vocabulary()
        if len(toks) < 2 or toks[0] in vocab or singular(toks[0]) in vocab:
            return []  # "bed pillow" names a thing, it is no activity
        out: list[str] = []
        for n in (2, 1):
            verb = " ".join(toks[:n])
            related = self.lexicon.related_verbs(verb)
            if len(related) <= 1:
                continue  # not a verb the lexicon knows (as one word or with its particle)
            if verb in self._aff_verbs:
                break  # an affordance says it in these very words ("cook on"): no stand-in needed
            out += [" ".join([head, *toks[n:]]) for head in self._aff_verbs
                    if KIND_OF_MIN <= related.get(head, 0.0) < 1.0]
            break
        return out[:MAX_KIND_VARIANTS]

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.memory.text_embedder.embed_texts(texts)

    def nearest_labels(self, phrase_vec: np.ndarray, k: int) -> list[str]:
        """The ``k`` labels in memory nearest the phrase by the text embedder, nearest first."""
        vocab, mat = self.vocabulary()
        if mat is None or k <= 0:
            return []
        sims = mat @ phrase_vec
        return [vocab[i] for i in np.argsort(-sims, kind="stable")[:k]]

    def offer(self, phrase_vec: np.ndarray) -> list[ObjectNode]:
        """What retrieval offers the found rule for a named thing (see OFFER_LABELS): per label
        nearest the phrase (its text embedding), the OFFER_PER_LABEL objects most recently given it."""
        out: list[ObjectNode] = []
        for lab in self.nearest_labels(phrase_vec, OFFER_LABELS):
            out += self.memory.graph.objects_by_label([lab], limit=OFFER_PER_LABEL)
        return out

    def label_vectors(self, labels: list[str]) -> np.ndarray:
        missing = [lab for lab in labels if lab not in self._vecs]
        if missing:
            if len(self._vecs) > 5000:
                self._vecs.clear()
            for lab, v in zip(missing, self.memory.embed_cached(missing)):  # cached in the memory
                self._vecs[lab] = v
        return np.stack([self._vecs[lab] for lab in labels])

    def similar_labels(self, phrase: str, phrase_vec: np.ndarray, k: int, hits: list | None = None,
                       closest_guess: bool = True) -> dict[str, float]:
        """Labels in memory close to ``phrase``: exact words always; others via the vector
        store's top-k payload labels, kept when their embedding is close enough; and
        (``closest_guess``) the closest labels in memory even under that, from LABEL_BEST_MIN."""
        toks = words(phrase)
        out = {lab: 1.0 for lab in {phrase, singular(phrase)} if lab}
        related, head_kinds = self.lexical_relations(phrase)
        if len(toks) > 1:
            # the head noun alone ("table" of "bedside table") is a candidate, as close as its
            # embedding is to the whole phrase: "nightstand" can then beat "table". A compound
            # the lexicon knows is its own kind of thing ("easy chair" is an armchair): its head
            # counts only as far as the lexicon relates them.
            known_compound = any(SYNONYM_OF_PHRASE <= v < 1.0 for v in self.lexicon.related(phrase).values())
            heads = [h for h in dict.fromkeys([toks[-1], singular(toks[-1])]) if h not in out]
            if heads:
                for head, sim in zip(heads, self.label_vectors(heads) @ phrase_vec):
                    out[head] = (max(float(sim), LABEL_BEST_MIN) if not known_compound
                                 else max(related.get(head, 0.0), LABEL_BEST_MIN))
        if hits is None:
            hits = self.memory.vectors.search(self.memory.text_collection, phrase_vec, k)
        labels = sorted({str(h.payload.get("label", "")).lower() for h in hits} - {""} - set(out))
        if labels:
            sims = self.label_vectors(labels) @ phrase_vec
            out.update({lab: float(s) for lab, s in zip(labels, sims) if s >= LABEL_SYNONYM_MIN})
        vocab, mat = self.vocabulary()
        if mat is not None:
            sims = mat @ phrase_vec
            best = float(sims.max())
            if closest_guess and best >= LABEL_BEST_MIN:
                for lab, sim in zip(vocab, sims):
                    if sim >= max(LABEL_BEST_MIN, best - LABEL_BEST_MARGIN) and lab not in out:
                        out[lab] = float(sim)
            for lab, sim in zip(vocab, sims):
                strength = related.get(lab)
                if strength is not None and strength < 1.0:
                    if lab in head_kinds:
                        # a kind of the compound's head only ("bedside table" -> the kinds of
                        # "table"): the lexicon says it is a table, only the whole phrase can say
                        # whether it is the bedside one, so it claims no more than the phrase's
                        # similarity ("coffee table" no longer beats "nightstand"). Synonyms of the
                        # head keep their strength ("leave my rucksack" -> backpack).
                        strength = min(strength, float(sim))
                    out[lab] = max(out.get(lab, 0.0), strength + LEXICON_EMBED_TIEBREAK * float(sim))
            # labels the dictionary describes in the phrase's own distinctive words ("parasol":
            # "a handheld collapsible source of shade", an umbrella "a lightweight handheld
            # collapsible canopy"): another name for the thing, as strong as a synonym
            mine = distinctive_words(self.lexicon, phrase, 1, things_only=True)
            if len(mine) >= DEFINED_ALIKE_MIN:
                for lab, sim in zip(vocab, sims):
                    if defined_alike(self.lexicon, phrase, lab, mine=mine, theirs=self._distinctive(lab)):
                        out[lab] = max(out.get(lab, 0.0), SYNONYM_MIN + LEXICON_EMBED_TIEBREAK * float(sim))
        return out

    def _distinctive(self, label: str) -> set[str]:
        """The label's ``distinctive_words`` (two senses), cached: compared with every question."""
        with self._lock:
            hit = self._defining.get(label)
        if hit is None:
            hit = distinctive_words(self.lexicon, label, DEFINED_ALIKE_SENSES)
            with self._lock:
                if len(self._defining) > 5000:
                    self._defining.clear()
                self._defining[label] = hit
        return hit

    def same_kind(self, a: str, b: str) -> bool:
        """Could two labels name one object ("sofa"/"couch", "plant"/"potted plant")? Equal,
        close embeddings (SAME_KIND_MIN), or a lexicon synonym/hypernym."""
        if a == b:
            return True
        va, vb = self.label_vectors([a, b])
        return float(va @ vb) >= SAME_KIND_MIN or is_kind_of(self.lexicon, a, b)

    def lexicon_expansion(self, phrase: str, labels: dict[str, float]) -> str:
        """The memory label the lexicon relates most strongly to a phrase that is not itself a
        label in memory ("" when the phrase is a label, or the lexicon knows nothing)."""
        vocab, _ = self.vocabulary()
        if phrase in vocab or singular(phrase) in vocab:
            return ""
        # the whole phrase only (a compound's head says less), and only what the phrase IS
        # (synonym, kind of): "seat" must not be searched as one arbitrary kind of seat
        related = self.lexicon.related(phrase)
        known = [lab for lab in labels if KIND_OF_MIN <= related.get(lab, 0.0) < 1.0 and lab in vocab]
        return max(known, key=lambda lab: (labels[lab], lab), default="")

    def lexical_relations(self, phrase: str) -> tuple[dict[str, float], set[str]]:
        """Lexicon words related to the phrase or, for a compound, to its head noun (weaker);
        and those related only as kinds of the head (not the phrase, not a synonym of the head:
        the coffee table of "bedside table"), which the caller weighs by the whole phrase."""
        direct = self.lexicon.related(phrase)
        related = dict(direct)
        head_kinds: set[str] = set()
        toks = words(phrase)
        if len(toks) > 1:
            for lab, strength in self.lexicon.related(toks[-1]).items():
                if strength >= 1.0:  # the head itself: matched by embedding above, not by rule
                    continue
                related[lab] = max(related.get(lab, 0.0), LEXICON_HEAD_SHARE * min(strength, 0.9))
                if lab not in direct and strength < SYNONYM_MIN:
                    head_kinds.add(lab)
        return related, head_kinds


def affordance_objects(text: str) -> list[str]:
    """What an affordance text is about: its words after the verb, without function words and
    prepositions ("store drinks" -> ["drinks"], "put things on" -> [], "keep food cold" ->
    ["food", "cold"])."""
    return [w for w in words(text)[1:] if w not in FUNCTION_WORDS and w not in SINGLE_WORD_PREDICATES]


def label_ranking(memory: "Memory", labels: dict[str, float], pq: ParsedQuery,
                  limit: int = LABEL_LOOKUP_LIMIT, tours: "TourIndex | None" = None) -> tuple[Ranked, dict[str, ObjectNode]]:
    """Objects whose label matches, scored by label similarity (the object's main label counts
    fully, a label it was only sometimes given counts less) plus attribute/place agreement."""
    nodes: dict[str, ObjectNode] = {}
    ranked = Ranked()
    if not labels:
        return ranked, nodes
    for node in memory.graph.objects_by_label(list(labels), limit=limit):
        sim = max([labels.get(node.label.lower(), 0.0)]
                  + [0.8 * labels.get(lab.lower(), 0.0) for lab in node.labels_seen])
        nodes[node.id] = node
        ranked.add(node.id, sim * (1.0 + 0.25 * attribute_agreement(node, pq, tours)))
    return ranked.sorted(), nodes


def attribute_agreement(node: ObjectNode, pq: ParsedQuery, tours: "TourIndex | None" = None) -> float:
    """Agreement (0..1) of the object with the question's attribute and place words. A place
    counts by the share of the object's sightings made in that kind of place (keyframe places),
    so an object glimpsed once from the hallway is not "the plant in the hallway"."""
    wanted = pq.attributes + pq.places
    if not wanted:
        return 0.0
    have = set(" ".join(list(node.attributes.values()) + [node.description]).lower().split())
    total = sum(1.0 for w in pq.attributes if w in have)
    for place in pq.places:
        share = tours.place_share(node, place) if tours is not None else None
        total += (1.0 if place in node.places else 0.0) if share is None else share
    return total / len(wanted)


def place_factor(node: ObjectNode, pq: ParsedQuery, tours: "TourIndex | None") -> float:
    """"The plant in the hallway": an object mostly seen in another kind of place is another
    object of that kind, whatever its label match (a multiplier, not a bonus, so an exact label
    seen elsewhere cannot outrank the right one). Unknown places leave the score as it is."""
    if not pq.places or tours is None:
        return 1.0
    shares = [s for s in (tours.place_share(node, p) for p in pq.places) if s is not None]
    return PLACE_MISS_WEIGHT + (1.0 - PLACE_MISS_WEIGHT) * max(shares) if shares else 1.0


def observation_weight(node: ObjectNode) -> float:
    """Mild preference for well-observed objects: a duplicate made of one or two noisy
    sightings is less likely the object meant than the one seen all along. Milder than how
    well the object is named: 19 sightings of a chair sometimes called "armchair" must not
    outrank the node always called "armchair" (the goal still goes to the best-supported
    duplicate, answer.goal_target)."""
    return 1.0 + OBSERVATION_WEIGHT * math.log1p(len(node.observations))


def sighting_shares(node: ObjectNode,
                    frame_at: "Callable[[str, int], tuple[str | None, tuple[float, float] | None] | None]") -> dict[str, float]:
    """Each kind of place (lower case) the object was seen FROM, with its share (summing to 1; {}
    when no sighting's keyframe was given a place). A keyframe's place is where the CAMERA was, so
    every sighting votes for its keyframe's place with weight 1/max(d, PLACE_NEAR_M)^2, d the
    distance from the camera to the object: a plant seen six times through the kitchen door from
    4-5 m in the hallway and three times from 1-1.5 m in the kitchen is in the kitchen.
    ``frame_at(tour, stamp)``: the keyframe's (place, camera xy), None when unknown. An object
    without a position, or a sighting without a camera pose, counts as the average of its other
    sightings (all alike when none has a distance)."""
    seen: list[tuple[str, float | None]] = []  # (place, the sighting's weight; None: no distance)
    for tour, stamp in node.frames:
        frame = frame_at(tour, stamp)
        if frame is None or not frame[0]:
            continue
        place, xy = frame
        w = 1.0 / max(math.dist(xy, node.position), PLACE_NEAR_M) ** 2 \
            if xy is not None and node.position is not None else None
        seen.append((str(place).lower(), w))
    weights = [w for _, w in seen if w is not None]
    unknown = sum(weights) / len(weights) if weights else 1.0
    totals: dict[str, float] = {}
    for place, w in seen:
        totals[place] = totals.get(place, 0.0) + (unknown if w is None else w)
    total = sum(totals.values())
    return {p: w / total for p, w in totals.items()} if total > 0 else {}


def floor_shares(nearest: dict[str, float]) -> dict[str, float]:
    """Which kind of place's floor the object stands on, as shares (summing to 1; {} when the robot
    walked no floor within FLOOR_REACH_M of it): ``nearest`` maps each kind of place to the distance
    (m) from the object's estimated position to the nearest camera position of a keyframe taken in
    it; a place FLOOR_SCALE_M farther than the nearest counts e^-1 as much."""
    near = {p: d for p, d in nearest.items() if d <= FLOOR_REACH_M}
    if not near:
        return {}
    closest = min(near.values())
    votes = {p: math.exp(-(d - closest) / FLOOR_SCALE_M) for p, d in near.items()}
    total = sum(votes.values())
    return {p: v / total for p, v in votes.items()}


def place_shares(node: ObjectNode,
                 frame_at: "Callable[[str, int], tuple[str | None, tuple[float, float] | None] | None]",
                 nearest: "Callable[[tuple[float, float]], dict[str, float]] | None" = None) -> dict[str, float]:
    """Which kind of place the object is in (the one home of that, see ``TourIndex.place_shares``):
    each kind of place (lower case) with its share (summing to 1; {} when no keyframe near it or
    seeing it was given a place). Where it IS (``floor_shares``: the places of the camera positions
    nearest its estimated position, ``nearest(xy)`` giving each place's nearest distance) weighs
    FLOOR_WEIGHT against where it was seen FROM (``sighting_shares``), so a plant seen mostly through
    the living room door from the hallway, standing where the robot walked the living room, is in the
    living room. An object without a position, or far from every walked floor (a room never
    entered), or a memory without ``nearest``: the sightings alone."""
    seen = sighting_shares(node, frame_at)
    floor = floor_shares(nearest(node.position)) if nearest is not None and node.position is not None else {}
    if not floor:
        return seen
    if not seen:
        return floor
    return {p: FLOOR_WEIGHT * floor.get(p, 0.0) + (1.0 - FLOOR_WEIGHT) * seen.get(p, 0.0)
            for p in sorted(set(floor) | set(seen))}


class TourIndex:
    """Per-tour keyframe places, camera positions and order (cached; rebuilt when the memory
    changed, see LabelIndex.vocabulary): answers "which room was this frame in", "which room is
    this object in" and "when did the robot leave the kitchen" without a store call per frame."""

    def __init__(self, memory: "Memory", refresh_s: float = AskConfig.refresh_s) -> None:
        self.memory = memory
        self.refresh_s = refresh_s  # see LabelIndex
        self._tours: dict[str, tuple[int, float, list[int], list[str | None],
                                     list[tuple[float, float] | None], list[float | None]]] = {}
        self._views: dict[str, tuple[tuple[int, float], np.ndarray, np.ndarray, np.ndarray, float,
                                     CameraModel | None]] = {}  # tour -> (its _tours entry's generation and
        # time, stamps, camera xy, yaw, half horizontal field of view, the stored camera model)
        self._lock = threading.Lock()
        self._floor: dict[str, tuple[tuple[int, float], np.ndarray, np.ndarray]] = {}  # tour -> (its _tours entry's
        # generation and time, camera xy, place) of the keyframes with a place and a pose
        self._nearest: dict[tuple[float, float], dict[str, float]] = {}  # nearest_places per xy, this generation
        self._nearest_key: tuple = ()
        self._walked: dict[tuple, tuple[float, float | None, frozenset[str], float | None] | None] = {}  # _off_walked per
        # object, this generation
        self._walked_key: tuple = ()
        self._sight: dict[tuple[str, int], tuple[np.ndarray, float | None] | None] = {}  # keyframe -> its
        # decimated depth and the camera height its floor gave (None: no depth), this generation
        self._sight_key: tuple = ()
        self._height: tuple[tuple, float | None] | None = None  # (what the memory was, memory_camera_height)

    def _tour(self, tour_id: str) -> tuple[list[int], list[str | None], list[tuple[float, float] | None]]:
        with self._lock:
            hit = self._tours.get(tour_id)
            now = time.monotonic()
            if hit is None or self.memory.generation != hit[0] or (
                    now - hit[1] > self.refresh_s and self.memory.graph.count_keyframes(tour_id) != len(hit[2])):
                kfs = sorted(self.memory.graph.keyframes(tour_id), key=lambda k: k.stamp_ns)
                hit = (self.memory.generation, now, [k.stamp_ns for k in kfs], [k.place for k in kfs],
                       [(k.pose.x, k.pose.y) if k.pose is not None else None for k in kfs],
                       [k.pose.yaw if k.pose is not None else None for k in kfs])
                self._tours[tour_id] = hit
            return hit[2], hit[3], hit[4]

    def frames(self, tour_id: str) -> tuple[list[int], list[str | None]]:
        stamps, places, _ = self._tour(tour_id)
        return stamps, places

    def frame(self, tour_id: str, stamp_ns: int) -> tuple[str | None, tuple[float, float] | None] | None:
        """(place, camera xy) of a keyframe; None when the tour has no keyframe at that stamp."""
        stamps, places, xys = self._tour(tour_id)
        i = int(np.searchsorted(stamps, stamp_ns))
        return (places[i], xys[i]) if i < len(stamps) and stamps[i] == stamp_ns else None

    def place_of(self, tour_id: str, stamp_ns: int) -> str | None:
        """Where the CAMERA was for that keyframe ("which room was I in when I saw X")."""
        frame = self.frame(tour_id, stamp_ns)
        return frame[0] if frame is not None else None

    def _memory_key(self, tours: list[str]) -> tuple:
        """What the per-position and per-object caches hold for: the memory's generation and each
        tour's keyframe index (its generation and when it was read, read now if not yet)."""
        for tour in tours:
            self._tour(tour)
        with self._lock:
            return (self.memory.generation, tuple(tours), tuple(self._tours[t][:2] for t in tours))

    def nearest_places(self, xy: tuple[float, float]) -> dict[str, float]:
        """Each kind of place (lower case) a keyframe with a pose was taken in, with the distance (m)
        from ``xy`` to the nearest camera position among them (every tour; remembered per ``xy``
        until a tour's keyframes change)."""
        tours = self.memory.graph.tours()
        return self._nearest_places(xy, tours, self._memory_key(tours))

    def _nearest_places(self, xy: tuple[float, float], tours: list[str], key: tuple) -> dict[str, float]:
        """``nearest_places`` over ``tours``, whose ``_memory_key`` the caller has built."""
        with self._lock:
            if key != self._nearest_key or len(self._nearest) > NEAREST_CACHE:
                self._nearest, self._nearest_key = {}, key
            hit = self._nearest.get(tuple(xy))  # type: ignore[arg-type]
        if hit is not None:
            return hit
        out: dict[str, float] = {}
        for tour in tours:
            _, places, xys = self._tour(tour)
            with self._lock:
                generation = self._tours[tour][:2]
                cached = self._floor.get(tour)
                if cached is None or cached[0] != generation:
                    keep = [i for i, (p, q) in enumerate(zip(places, xys)) if p and q is not None]
                    cached = (generation, np.array([xys[i] for i in keep], dtype=float).reshape(-1, 2),
                              np.array([str(places[i]).lower() for i in keep], dtype=object))
                    self._floor[tour] = cached
            _, pts, names = cached
            if not len(names):
                continue
            dist = np.hypot(pts[:, 0] - xy[0], pts[:, 1] - xy[1])
            for place in set(names):
                d = float(dist[names == place].min())
                out[place] = min(out.get(place, d), d)
        with self._lock:
            if key == self._nearest_key:
                self._nearest[tuple(xy)] = out  # type: ignore[index]
        return out

    def views(self, tour_id: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(stamps, camera xy (n, 2), yaw (rad), half the horizontal field of view (rad)) of the tour's
        keyframes with a pose: the tour's camera model when one was stored, else capture.camera_hfov_deg."""
        self._tour(tour_id)
        with self._lock:
            entry = self._tours[tour_id]
            cached = self._views.get(tour_id)
            if cached is not None and cached[0] == entry[:2]:
                return cached[1:5]
        keep = [i for i, q in enumerate(entry[4]) if q is not None]
        raw = self.memory.graph.get_meta(f"camera:{tour_id}")
        try:
            cam = CameraModel(**json.loads(raw)) if raw else None
        except (TypeError, ValueError):
            cam = None
        half = math.atan(cam.width / 2.0 / cam.fx) if cam is not None and cam.fx > 0 else \
            math.radians(self.memory.cfg.capture.camera_hfov_deg) / 2.0
        cached = (entry[:2], np.array([entry[2][i] for i in keep], dtype=np.int64),
                  np.array([entry[4][i] for i in keep], dtype=float).reshape(-1, 2),
                  np.array([entry[5][i] for i in keep], dtype=float), half,
                  cam if cam is not None and cam.fx > 0 and cam.fy > 0 else None)
        with self._lock:
            self._views[tour_id] = cached
        return cached[1:5]

    def _keyframe_depth(self, tour_id: str, stamp_ns: int) -> tuple[np.ndarray, float | None] | None:
        """The keyframe's stored depth, strided to at most SIGHT_WIDTH_PX wide, and the camera height its floor
        gave (``depth.floor_height``); None when it stored none (remembered until the memory changes)."""
        from ..depth import floor_height, stored_depth

        key = (self.memory.generation,)
        with self._lock:
            if key != self._sight_key or len(self._sight) > SIGHT_CACHE:
                self._sight, self._sight_key = {}, key
            if (tour_id, stamp_ns) in self._sight:
                return self._sight[(tour_id, stamp_ns)]
        cached = self._views.get(tour_id)
        frames, cam = getattr(self.memory, "frames", None), cached[5] if cached is not None else None
        out = None
        if frames is not None and cam is not None:
            depth = stored_depth(frames, tour_id, stamp_ns)  # None: the view counts as without depth
            if depth is not None:
                step = max(1, -(-depth.shape[1] // SIGHT_WIDTH_PX))
                out = (depth[::step, ::step].astype(np.float16), floor_height(depth, cam))
        with self._lock:
            if key == self._sight_key:
                self._sight[(tour_id, stamp_ns)] = out
        return out

    def sight_line(self, tour_id: str, stamp_ns: int, xy: tuple[float, float], heights: list[float]) -> bool | None:
        """Whether the keyframe's stored depth had a clear line to map point ``xy`` (True), something
        stood between (False), or it cannot tell / stored no depth (None): ``depth.line_of_sight``
        with the camera height its own floor gave, else the memory's (``memory_camera_height``), else
        the median of those other keyframes' floors gave (``heights``, which this adds to)."""
        from ..depth import line_of_sight

        stamps, xys, yaws, _ = self.views(tour_id)  # also what _keyframe_depth reads the camera from
        kd = self._keyframe_depth(tour_id, stamp_ns)
        if kd is None:
            return None
        depth, height = kd
        if height:
            heights.append(height)
        else:
            height = self._memory_camera_height() or (float(np.median(heights)) if heights else None)
        if not height:
            return None
        i = int(np.searchsorted(stamps, stamp_ns))
        if i >= len(stamps) or stamps[i] != stamp_ns:
            return None
        return line_of_sight(depth, self._views[tour_id][5], Pose.from_xy_yaw(float(xys[i, 0]), float(xys[i, 1]), float(yaws[i])),
                             xy, height, math.radians(self.memory.cfg.capture.camera_pitch_deg), self.memory.cfg.depth.noise())

    def _memory_camera_height(self) -> float | None:
        """``memory_camera_height``, read again only when the memory changed (its generation, or a
        tour's keyframe index was re-read: another process writes it): ``sight_line`` asks for it per
        view whose own floor gave no height, and on a remote graph store each read is a round trip."""
        from ..calibration import memory_camera_height

        with self._lock:
            key = (self.memory.generation, tuple(sorted((t, e[:2]) for t, e in self._tours.items())))
            if self._height is not None and self._height[0] == key:
                return self._height[1]
        height = memory_camera_height(self.memory, self.memory.cfg)
        with self._lock:
            self._height = (key, height)
        return height

    def beyond_walked(self, node: ObjectNode) -> float | None:
        """The evidence (0..1) that the object stands outside every room the robot walked, i.e. in
        a room it never entered and saw only through a door: 1 when no walked floor is within
        FLOOR_REACH_M of it; else the share of the views that looked its way (it inside their
        horizontal field of view) from no farther than it was ever seen from, yet did not see it (a
        wall stood between), with UNSEEN_PRIOR_VIEWS pseudo-views each way (``views_missed``).
        Where stored depth shows the rooms it was seen from open to it (``_views_toward``: most of
        their views that missed it had a clear line to it), neither holds, as for ``seen_through``:
        the far side of a large walked room is beyond FLOOR_REACH_M too, and views from other rooms
        that a wall kept from it say only that it is not in those (read seed 747: a plant 3.5 m from
        the walked gym's floor, seen from the gym, rated 1 and was taken for the kitchen's); the
        evidence is then no more than the share of those rooms' misses a wall explains. None: no position, or no
        keyframe with a place and a pose, or no sighting from a posed keyframe."""
        off = self._off_walked(node)
        if off is None:
            return None
        floor_m, missed, _, walls = off
        evidence = 1.0 if floor_m > FLOOR_REACH_M else missed
        return min(walls, evidence) if walls is not None and walls < OPEN_WALL_SHARE else evidence

    def _off_walked(self, node: ObjectNode) -> tuple[float, float | None, frozenset[str], float | None] | None:
        """(the distance (m) from the object to the nearest walked floor, ``views_missed``, the kinds
        of place with a wall between, the share of misses from where it was seen that a wall
        explains (``_views_toward``)): what ``beyond_walked``, ``seen_through`` and ``place_shares``
        read; None when the object has no position or no keyframe has a place and a pose.
        Remembered per object until a tour's keyframes change."""
        if node.position is None:
            return None
        tours, frames = self.memory.graph.tours(), node.frames
        key, obj = self._memory_key(tours), (node.id, tuple(node.position), tuple(frames))
        with self._lock:
            if key != self._walked_key or len(self._walked) > NEAREST_CACHE:
                self._walked, self._walked_key = {}, key
            if obj in self._walked:
                return self._walked[obj]
        near = self._nearest_places(node.position, tours, key)
        out = None
        if near:
            out = (min(near.values()), *self._views_toward(node))
        with self._lock:
            if key == self._walked_key:
                self._walked[obj] = out
        return out

    def views_missed(self, node: ObjectNode) -> float | None:
        """The share (0..1) of the views that looked the object's way (it inside their horizontal
        field of view) from no farther than VIEW_REACH_SHARE times the farthest it was seen from, yet
        did not see it (a wall stood between), with UNSEEN_PRIOR_VIEWS pseudo-views each way; a view
        whose stored depth had a clear line to it missed it by the detector, not a wall, and does not
        count (``sight_line``). None: no position, or no sighting from a posed keyframe."""
        return self._views_toward(node)[0]

    def _views_toward(self, node: ObjectNode) -> tuple[float | None, frozenset[str], float | None]:
        """(``views_missed``, the kinds of place (lower case) with a wall between them and the
        object: no view from there saw it although one from another place did, at least
        WALLED_VIEWS of theirs looked its way (every miss counts here, depth or not), and all of those
        missing it is unlikely by chance (WALL_CHANCE); of the views from the room it was seen from
        most (else from every room it was seen from) that missed it and whose depth tells
        (``sight_line``), the share with something between, with
        UNSEEN_PRIOR_VIEWS pseudo-views each way, None when no such depth): one pass over the views."""
        if node.position is None:
            return None, frozenset(), None
        px, py = node.position
        seen = {(tour, int(stamp)) for tour, stamp in node.frames}
        frames = [f for f in (self.frame(t, s) for t, s in seen) if f is not None]
        seen_from = {str(f[0]).lower() for f in frames if f[0]}
        reach = max((math.dist(f[1], node.position) for f in frames if f[1] is not None), default=None)
        if reach is None:
            return None, frozenset(), None
        looked = unseen = 0
        blind: dict[str, int] = {}
        lines: dict[str, list[int]] = {}  # place -> [misses with a clear line, misses with one blocked]
        hits = {True: 0, False: 0}
        heights: list[float] = []  # camera heights the views' floors gave (sight_line)
        for tour in self.memory.graph.tours():
            stamps, xys, yaws, half = self.views(tour)
            if not len(stamps):
                continue
            dx, dy = px - xys[:, 0], py - xys[:, 1]
            off = np.abs((np.arctan2(dy, dx) - yaws + math.pi) % (2 * math.pi) - math.pi)
            toward = (np.hypot(dx, dy) <= VIEW_REACH_SHARE * reach) & (off <= half)
            looked += int(toward.sum())
            for stamp in stamps[toward]:
                place = str(self.place_of(tour, int(stamp)) or "").lower()
                hit = (tour, int(stamp)) in seen
                if place in seen_from:
                    hits[hit] += 1
                elif place and seen_from:
                    blind[place] = blind.get(place, 0) + 1
                line = None if hit else self.sight_line(tour, int(stamp), (px, py), heights)
                if line is not None:
                    lines.setdefault(place, [0, 0])[0 if line else 1] += 1
                if line:  # the detector missed it, not a wall: no evidence either way
                    looked -= 1
                    continue
                unseen += not hit
        # the share of views from where it was seen that saw it: how likely a view that faces it is
        # to see it; a place whose views all missed it by chance at that rate is not walled off
        rate = (hits[True] + UNSEEN_PRIOR_VIEWS) / (sum(hits.values()) + 2.0 * UNSEEN_PRIOR_VIEWS)
        walled = frozenset(p for p, n in blind.items() if n >= WALLED_VIEWS and (1.0 - rate) ** n <= WALL_CHANCE)
        # the room it was seen from most is the one it may stand in: another room that glimpsed it
        # through a door has that door's wall between, which says nothing of the first one
        most = self.seen_from(node)
        read = [lines[most]] if most in lines else [lines[p] for p in seen_from if p in lines]
        walls = None if not read else (sum(b for _, b in read) + UNSEEN_PRIOR_VIEWS) / (
            sum(c + b for c, b in read) + 2.0 * UNSEEN_PRIOR_VIEWS)
        return (unseen + UNSEEN_PRIOR_VIEWS) / (looked + 2.0 * UNSEEN_PRIOR_VIEWS), walled, walls

    def seen_through(self, node: ObjectNode) -> str:
        """The kind of place (lower case) the object was seen from when it clearly stands beyond
        every room the robot walked, else "": no walked floor within FLOOR_REACH_M of anywhere it may
        stand (its position, give or take one standard deviation of that estimate) AND most of the
        views that looked its way missed it (``views_missed`` above one half). Either alone is not
        enough: the far side of a large walked room is beyond FLOOR_REACH_M too, and near views miss
        things in walked rooms behind furniture. Nor is a position known no better than the walked
        floor's reach: a fragment made of one sighting, or a bearing-only estimate whose rays
        hardly cross, in the far corner of a walked room (read seeds: 584's nightstand and 585's tv
        stand, one depth fix each, var 0.5 m^2; 622's shoe rack, var at the cap, 2.66 m from walked
        floor, 1.6 m off). Such a thing is in no walked room, so it is not counted as in the room it
        was seen from (``place_shares``)."""
        off = self._off_walked(node)
        if off is None or off[0] - math.sqrt(node.position_var or 0.0) <= FLOOR_REACH_M or (
                off[3] is not None and off[3] < OPEN_WALL_SHARE):
            return ""
        missed = off[1]
        return self.seen_from(node) if missed is not None and missed > 0.5 else ""

    def place_shares(self, node: ObjectNode) -> dict[str, float]:
        """Which kind of place the OBJECT is in, as shares (``place_shares``: where it stands and
        where it was seen from): the one home of it. The walked floor of a kind of place whose views
        looked its way and never saw it (WALLED_VIEWS) is behind a wall and left out. A thing that
        stands beyond every walked room (``seen_through``) is not in the room it was seen from: that
        share is dropped ({} when no other is left)."""
        off = self._off_walked(node)
        walled = off[2] if off is not None else frozenset()
        shares = place_shares(node, self.frame, lambda xy: {
            p: d for p, d in self.nearest_places(xy).items() if p not in walled})
        through = self.seen_through(node)
        if through and through in shares:
            rest = sum(v for p, v in shares.items() if p != through)
            shares = {p: v / rest for p, v in shares.items() if p != through} if rest > 0 else {}
        return shares

    def place_share(self, node: ObjectNode, place: str) -> float | None:
        """Share of the object in that kind of place (lower case); None when no sighting's
        keyframe was given a place. A kind of place no keyframe was taken in (a room never
        entered) holds what stands beyond every walked room: ``beyond_walked``."""
        if place not in self.known_places():
            return self.beyond_walked(node)
        shares = self.place_shares(node)
        if not shares and self.seen_through(node):
            return 0.0
        return shares.get(place, 0.0) if shares else None

    def main_place(self, node: ObjectNode) -> str:
        """The kind of place the object is in ("" when none was named, or when it stands beyond
        every walked room and was seen from no other: ``seen_through``): see present.main_place."""
        from ..present import main_place

        shares = self.place_shares(node)
        return main_place(node, shares) if shares or not self.seen_through(node) else ""

    def seen_from(self, node: ObjectNode) -> str:
        """The kind of place (lower case) the most sightings of the object were made from ("" when
        none was given a place): where the camera stood, e.g. the hallway a room was seen from."""
        counts: dict[str, int] = {}
        for tour, stamp in node.frames:
            place = self.place_of(tour, stamp)
            if place:
                counts[place.lower()] = counts.get(place.lower(), 0) + 1
        return max(sorted(counts), key=lambda p: counts[p]) if counts else ""

    def known_places(self) -> set[str]:
        """Every kind of place a keyframe of any tour was given (lower case)."""
        return {p.lower() for tour in self.memory.graph.tours() for p in self.frames(tour)[1] if p}

    def departures(self, place: str) -> list[tuple[str, int, int]]:
        """(tour, stamp of the last frame in ``place``, stamp of the first frame after it) each
        time the robot left that kind of place, in time order."""
        out = []
        for tour in self.memory.graph.tours():
            stamps, places = self.frames(tour)
            for i in range(1, len(stamps)):
                if places[i - 1] and places[i - 1].lower() == place and places[i] and places[i].lower() != place:
                    out.append((tour, stamps[i - 1], stamps[i]))
        return out


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
