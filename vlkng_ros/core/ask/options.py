"""Multiple-choice options: the one home for parsing them ("A. a laptop"), rendering them into
the answer prompt, checking the LLM's choice, and choosing offline.

Offline, what kind of thing the options name decides the evidence:

- places ("in the kitchen"): the kind of place of the best-ranked frames (keyframe places);
- attributes ("green", "metal"): the target objects' attributes;
- relations ("on the desk"): the target's relations, the other end matched by embedding;
- things ("a red mug"), with first/last and both named in the question ("which did I see
  first, the lamp or the sofa?"): each option's best object, compared by when it was first/last seen;
- things otherwise: each option is looked up in memory (same retrieval as the question) and
  wins when its object is among the question's evidence targets; embedding similarity to the
  evidence decides when none is.
Only closed-class words are lists (places, attribute words, predicates), as in query.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from .graph_retrieval import Subgraph, observation_weight
from .query import COLORS, FUNCTION_WORDS, MATERIALS, PLACES, SIZES, ParsedQuery, parse_offline, words

if TYPE_CHECKING:
    from ..memory import Memory
    from ..model import ObjectNode
    from .answer import FrameScore
    from .ger import Retriever

ATTRIBUTE_WORDS = COLORS | MATERIALS | SIZES | {"organic", "navy", "olive", "maroon"}
OPTION_RE = re.compile(r"^\s*\(?([A-Za-z])[\.\):]\s*(.*)$", re.S)  # "A. x", "(b) x", "C: x"


def parse_options(options: list[str]) -> list[tuple[str, str]]:
    """'A. a laptop' -> ('A', 'a laptop'); unlabelled options get letters by position."""
    parsed: list[tuple[str, str]] = []
    for i, opt in enumerate(options or []):
        m = OPTION_RE.match(str(opt))
        if m and m.group(2).strip():
            parsed.append((m.group(1).upper(), m.group(2).strip()))
        elif str(opt).strip():
            parsed.append((chr(ord("A") + i), str(opt).strip()))
    return parsed


def render_options(options: list[tuple[str, str]]) -> str:
    """The options as the answer prompt shows them: 'A. a laptop | B. a red mug'."""
    return " | ".join(f"{k}. {t}" for k, t in options)


def parse_choice(raw: object, options: list[tuple[str, str]]) -> str | None:
    """The option letter an answer names ("b", " B. a mug" -> "B"); "" without options; None
    when there are options and it names none of them."""
    choice = str(raw or "").strip().upper()[:1]
    if not options:
        return choice
    return choice if choice in {k for k, _ in options} else None


@dataclass
class OptionContext:
    memory: "Memory"
    retriever: "Retriever"
    embed: Callable[[list[str]], np.ndarray]  # cached text embedder
    place_of: Callable[[str, int], str | None]
    floor: float
    shown: set[int] = field(default_factory=set)  # stamps showing the chosen option (set by choose)


def _content(text: str) -> list[str]:
    return [w for w in words(text) if w not in FUNCTION_WORDS and w not in ("in", "at", "on")]


def option_kind(options: list[tuple[str, str]]) -> str:
    parsed = [_content(t) for _, t in options]
    if all(p and " ".join(p) in PLACES for p in parsed):
        return "place"
    if all(p and all(w in ATTRIBUTE_WORDS for w in p) for p in parsed):
        return "attribute"
    if all(parse_offline(t).relations and not parse_offline(t).target for _, t in options):
        return "relation"
    return "thing"


def choose(options: list[tuple[str, str]], pq: ParsedQuery, sub: Subgraph, frames: list["FrameScore"],
           ctx: OptionContext) -> tuple[str, dict[str, float], str]:
    """(letter, per-letter scores, object id the answer is about or "")."""
    if not options:
        return "", {}, ""
    kind = option_kind(options)
    targets = sub.targets()[:3]
    scores = {k: 0.0 for k, _ in options}
    about = ""
    if kind == "place":
        for rank, f in enumerate(frames[:5]):
            place = (ctx.place_of(f.tour_id, f.stamp_ns) or "").lower()
            for k, t in options:
                if place and " ".join(_content(t)) == place:
                    scores[k] += 1.0 / (rank + 1)
    elif kind == "attribute":
        for oid in targets:
            have = {w for v in sub.objects[oid].attributes.values() for w in words(v)}
            for k, t in options:
                if set(_content(t)) <= have:
                    scores[k] += sub.scores.get(oid, 0.0)
    elif kind == "relation":
        rels = ctx.memory.graph.relations_of(targets, limit=64) if targets else []
        others = {n.id: n for n in ctx.memory.graph.get_objects(
            {r.object if r.subject in targets else r.subject for r in rels})}
        deciding: dict[str, list[int]] = {}
        for k, t in options:
            cue = parse_offline(t).relations[0]
            for r in rels:
                other = others.get(r.object if r.subject in targets else r.subject)
                own = r.subject if r.subject in targets else r.object
                if other is None or r.predicate != cue.predicate:
                    continue
                sim = float(ctx.embed([cue.ref])[0] @ ctx.embed([other.label])[0])
                if sim * sub.scores.get(own, 0.0) > scores[k]:
                    scores[k], deciding[k] = sim * sub.scores.get(own, 0.0), list(r.stamps)
        if max(scores.values()) > 0.0:
            # the frames that show the chosen relation are the answer's evidence
            ctx.shown = set(deciding.get(max(scores, key=lambda k: scores[k]), []))
    else:
        best: dict[str, tuple[str, float, int, int]] = {}  # letter -> (object, relevance, first, last)
        nodes_of: dict[str, "ObjectNode"] = {}
        for k, t in options:
            opq = parse_offline(t)
            phrase = opq.target or " ".join(_content(t))
            if not phrase:
                continue
            ranked, nodes = ctx.retriever.entity_ranking(phrase, opq, with_attrs=True)
            cands = [o for o in ranked.order[:3] if ranked.relevance[o] >= ctx.floor]
            for o in cands:
                s = ranked.relevance[o] * observation_weight(nodes[o])
                if k not in best or s > best[k][1]:
                    best[k] = (o, s, nodes[o].first_seen_ns, nodes[o].last_seen_ns)
                    nodes_of[k] = nodes[o]
                if sub.roles.get(o) == "target":
                    scores[k] = max(scores[k], 1.0 + sub.scores.get(o, 0.0))
        if pq.places and not pq.target and len(best) == len(options):
            # "which of these was in the office?": each option's object by the share of its
            # sightings made in that kind of place
            where = {k: (ctx.retriever.tours.place_share(nodes_of[k], pq.places[0]) or 0.0) * best[k][1]
                     for k in best}
            if max(where.values()) > 0.0:
                pick = max(where, key=lambda k: where[k])
                return pick, where, best[pick][0]
        cue = {t.cue for t in pq.time} & {"first", "last"}
        named = all(set(_content(t)) & set(words(pq.text)) for _, t in options)
        if cue and named and len(best) == len(options):
            pick = (min if "first" in cue else max)(best, key=lambda k: best[k][2 if "first" in cue else 3])
            return pick, {k: (1.0 if k == pick else 0.0) for k in scores}, best[pick][0]
    if max(scores.values()) <= 0.0:
        scores = similarity_scores(options, sub, ctx.embed, ctx.floor)
    if not scores:
        return "", {}, about
    letter = max(scores, key=lambda k: scores[k])
    return letter, scores, about


def similarity_scores(options: list[tuple[str, str]], sub: Subgraph,
                      embed: Callable[[list[str]], np.ndarray], floor: float) -> dict[str, float]:
    """Each option's best text similarity to an evidence object, weighted by that object's
    score (targets count most)."""
    if not sub.objects:
        return {}
    ids = [o for o in sub.ordered_ids() if sub.relevance.get(o, 0.0) >= floor or sub.roles.get(o) == "target"]
    ids = ids or sub.ordered_ids()
    vecs = embed([t for _, t in options] + [sub.objects[o].text() + " " + sub.objects[o].label for o in ids])
    sims = vecs[: len(options)] @ vecs[len(options):].T
    weights = np.array([(1.0 if sub.roles.get(o) == "target" else 0.3) * (0.2 + sub.scores.get(o, 0.0))
                        for o in ids])
    return {letter: float(np.max(sims[i] * weights)) for i, (letter, _) in enumerate(options)}
