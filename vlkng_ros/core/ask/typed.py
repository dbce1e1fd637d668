"""Typed answers from the graph: count, room/place, existence, attribute, when, duration, route.

Each type finds what the question is about with the engine's own object search (so synonyms,
affordances and the "found" decision are the engine's), then reads the answer off the graph:
distinct objects and their places, attribute votes, observation stamps, the recorded trajectory
and the places along it. Counts, rooms and existence never go to a model (the graph answers them
alone: fewer calls, lower latency). Attributes the graph lacks go to the configured VLM with the
rendered evidence image; without one the reply says it cannot tell.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..llm.base import LLMError, LLMUsage
from ..model import Keyframe, ObjectNode, Pose
from ..present import place_words
from .typed_parse import (ATTRIBUTE, COUNT, DURATION, EXISTENCE, GRAPH_ONLY, ROOM, ROUTE, WHEN,
                          TypedQuestion)
from .types import AskResult, EvidenceObject, RankedFrame, TypedValue

if TYPE_CHECKING:
    from .engine import AskEngine
    from .graph_retrieval import Subgraph

SAME_OBJECT_M = 0.6  # same-kind nodes closer than this and never seen in one frame are one object
NEAR_M = 1.6  # "around/at/near the table": within this of the table's position (a chair pulled out)
ON_M = 0.8  # "on/in/under the bed": within this of it, when no relation was perceived
STRAIGHT_DEG = 35.0  # route: a turn under this is "straight"; over 180 - this is "back"
MAX_COUNTED_SHOWN = 12


def seen(res: AskResult) -> bool:
    """Was the thing seen? The engine's found decision (rel's ``found.decide_found`` inside
    ``AskEngine.search``): every typed answer, existence above all, follows that one decision
    through this one call, never a second threshold."""
    return bool(res.found and res.target_object_id)


def answer_typed(engine: "AskEngine", tq: TypedQuestion, question: str, top_k: int, mode: str,
                 stage: Callable[[str], None] = lambda _s: None) -> AskResult:
    """The typed answer to ``question`` (``tq``: what classify() made of it). ``stage`` hears
    the Ask action's stages: the question is understood, then retrieved and answered in one go."""
    t0 = time.perf_counter()
    stage("understanding")
    fn = {COUNT: _count, ROOM: _room, EXISTENCE: _existence, ATTRIBUTE: _attribute, WHEN: _when,
          DURATION: _duration, ROUTE: _route}[tq.kind]
    stage("retrieving")
    res = fn(engine, tq, top_k, mode)
    stage("answering")
    unique = {(f.tour_id, f.stamp_ns): f for f in reversed(res.frames)}  # a keyframe is listed once,
    res.frames = [f for f in res.frames if unique.get((f.tour_id, f.stamp_ns)) is f]  # at its first rank
    res.answer_type = tq.kind
    res.mode = mode
    res.timings_s["typed"] = time.perf_counter() - t0
    if tq.kind in GRAPH_ONLY:
        res.prompt_tokens = {k: v for k, v in res.prompt_tokens.items() if k != "answer"}
    return res


# -- helpers ---------------------------------------------------------------------------------------
def _search(engine: "AskEngine", text: str, top_k: int, mode: str) -> tuple[AskResult, "Subgraph"]:
    return engine.search(text, [], top_k, mode, use_llm=False)


def _where(subject: str, place: str = "") -> str:
    """The object search for a thing asked about, its head noun singular ("how many cushions"
    looks for a cushion: a plural must not make the sofa they lie on the better match; the head of
    "chests of drawers" is the chest)."""
    from .query import singular

    head = subject.split()
    if head:
        at = head.index("of") - 1 if "of" in head[1:] else len(head) - 1  # "chests of drawers": the chest
        head[at] = singular(head[at])
    return f"Where is the {' '.join(head)}" + (f" in the {place}" if place else "") + "?"


def _kinds(engine: "AskEngine", sub: "Subgraph", lead: ObjectNode, floor: float) -> set[str]:
    """The labels that name the same kind of thing as the best match (chair/seat/...), among
    the labels that matched the question at all. A label the lexicon calls strictly more general
    than the best match is not one of them: asked for easy chairs (best match "armchair"), a
    thing only called "chair" is not known to be an easy chair; nor is one whose name the lexicon
    knows but relates to the best match neither way (a dresser is not a wardrobe, however close
    their embeddings); labels the lexicon does not know are judged by embeddings alone."""
    from ..lexicon import is_kind_of

    top = lead.label.lower()
    labels = {top}
    lex = engine._labels.lexicon
    for oid in sub.targets():
        label = sub.objects[oid].label.lower()
        if label in labels or sub.relevance.get(oid, 0.0) < floor or not engine._labels.same_kind(top, label):
            continue
        up, down = is_kind_of(lex, top, label), is_kind_of(lex, label, top)
        if up and not down:
            continue  # "chair" for the best match "armchair"
        if not (up or down) and lex.names_a_thing(top) and lex.names_a_thing(label):
            continue  # both words known, neither a name or kind of the other: wardrobe vs dresser
        labels.add(label)
    return labels


def _floor(engine: "AskEngine", mode: str) -> float:
    from .graph_retrieval import relevance_floor

    return 1e-9 if mode == "lexical" else relevance_floor(engine.memory.text_embedder.name)


def place_of_object(engine: "AskEngine", node: ObjectNode) -> str:
    """The kind of place the object is in ("" when none was named): ``TourIndex.main_place``
    (its sightings, a near view counting far more than one through a door). Not where the
    camera was when it saw it (that is ``TourIndex.place_of`` of a frame)."""
    return engine._tours.main_place(node).lower()


def _same_place(a: str, b: str) -> bool:
    a, b = a.lower().strip(), b.lower().strip()
    if not a or not b:
        return False
    return a == b or a in b.split() or b in a.split() or a.replace(" ", "") == b.replace(" ", "")


def distinct_objects(nodes: list[ObjectNode]) -> list[list[ObjectNode]]:
    """Group nodes into physical objects: two nodes are one object split by association when
    they were never seen in the same frame and lie within SAME_OBJECT_M of each other. (Two
    nodes seen side by side in one frame are two things, however close.)"""
    groups: list[list[ObjectNode]] = []
    for node in sorted(nodes, key=lambda n: (-len(n.observations), n.id)):
        frames = {(o.tour_id, o.stamp_ns) for o in node.observations}
        home = None
        for g in groups:
            if any(frames & {(o.tour_id, o.stamp_ns) for o in m.observations} for m in g):
                continue
            if node.position is not None and g[0].position is not None and \
                    math.dist(node.position, g[0].position) <= SAME_OBJECT_M:
                home = g
                break
        if home is None:
            groups.append([node])
        else:
            home.append(node)
    return groups


def _evidence(nodes: list[ObjectNode], cap: int = MAX_COUNTED_SHOWN) -> list[EvidenceObject]:
    return [EvidenceObject(n.id, n.label, n.description, dict(n.attributes), list(n.affordances), n.position,
                           n.frames[:12], 1.0) for n in nodes[:cap]]


def _frames_showing(engine: "AskEngine", nodes: list[ObjectNode], top_k: int) -> list[RankedFrame]:
    """Keyframes that show the most of ``nodes`` (ties: earlier first), with poses."""
    hits: dict[tuple[str, int], list[str]] = {}
    for n in nodes:
        for ob in n.observations:
            hits.setdefault((ob.tour_id, ob.stamp_ns), [])
            if n.id not in hits[(ob.tour_id, ob.stamp_ns)]:
                hits[(ob.tour_id, ob.stamp_ns)].append(n.id)
    out = []
    for (tour, stamp), ids in sorted(hits.items(), key=lambda kv: (-len(kv[1]), kv[0][1])):
        kf = engine.memory.graph.get_keyframe(tour, stamp)
        if kf is not None:
            out.append(RankedFrame(tour, stamp, round(len(ids) / max(1, len(nodes)), 5), kf.pose, ids))
        if len(out) >= top_k:
            break
    return out


def _plural(word: str, n: int) -> str:
    if n == 1 or word.endswith("s"):
        return word
    return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"


def _a(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def clock(stamp_ns: int) -> str:
    return _dt.datetime.fromtimestamp(stamp_ns / 1e9, _dt.timezone.utc).strftime("%H:%M:%S")


def _not_seen(res: AskResult, what: str, kind: str = "") -> AskResult:
    res.found, res.frames, res.goal, res.goal_source, res.target_object_id = False, [], None, "", ""
    res.evidence_objects, res.evidence_relations = [], []  # near misses are not evidence of what was asked
    res.answer = f"I can't tell: I did not see {what}."
    res.value = TypedValue(kind) if kind != "yes_no" else TypedValue("yes_no", "no", yes=False)
    return res


# -- count -----------------------------------------------------------------------------------------
def scoped_objects(engine: "AskEngine", tq: TypedQuestion, top_k: int,
                   mode: str) -> tuple[AskResult, list[list[ObjectNode]], str]:
    """(search result, distinct objects in scope, why nothing is in scope or "")."""
    res, sub = _search(engine, _where(tq.subject, tq.place), top_k, mode)
    if not seen(res):
        return res, [], f"any {tq.subject}"
    floor = _floor(engine, mode)
    lead = sub.objects[res.target_object_id]
    kinds = _kinds(engine, sub, lead, floor)
    cands = [n for n in engine.memory.graph.objects_by_label(kinds, limit=2000) if n.label.lower() in kinds]
    if tq.place:
        cands = [n for n in cands if _same_place(place_of_object(engine, n), tq.place)]
    if tq.scope_ref:
        ref_res, ref_sub = _search(engine, _where(tq.scope_ref), top_k, mode)
        if not seen(ref_res):
            return res, [], f"the {tq.scope_ref}"
        ref_lead = ref_sub.objects[ref_res.target_object_id]
        ref_kinds = {ref_lead.label.lower()}
        refs = [ref_lead] + [ref_sub.objects[o] for o in ref_sub.targets() if o != ref_lead.id
                             and ref_sub.objects[o].label.lower() in ref_kinds
                             and ref_sub.scores.get(o, 0.0) >= 0.85 * ref_sub.scores.get(ref_lead.id, 0.0)]
        ref_ids = {r.id for r in refs}
        linked = {r.subject if r.object in ref_ids else r.object
                  for r in engine.memory.graph.relations_of(ref_ids, limit=2000)}
        radius = ON_M if tq.scope_predicate in ("on", "in", "inside", "under", "on top of") else NEAR_M
        cands = [n for n in cands if n.id not in ref_ids and (
            n.id in linked or (n.position is not None and any(
                r.position is not None and math.dist(n.position, r.position) <= radius for r in refs)))]
    return res, distinct_objects(cands), ""


def _count(engine: "AskEngine", tq: TypedQuestion, top_k: int, mode: str) -> AskResult:
    res, groups, missing = scoped_objects(engine, tq, top_k, mode)
    scope = (f" {tq.scope_predicate} the {tq.scope_ref}" if tq.scope_ref else "") + (
        f" in the {tq.place}" if tq.place else "")
    if missing and not seen(res):  # nothing of the kind at all: zero, said plainly
        res = _not_seen(res, f"any {tq.subject}")
        res.answer = f"I did not see any {tq.subject}{scope}."
        res.value = TypedValue("number", "0", number=0.0)
        return res
    if missing:  # the reference itself was never seen: no count is honest
        return _not_seen(res, missing, "number")
    n = len(groups)
    leads = [g[0] for g in groups]
    label = leads[0].label if leads else tq.subject
    res.value = TypedValue("number", str(n), number=float(n))
    res.found = n > 0
    where = ", ".join(f"{o.label} at ({o.position[0]:.1f}, {o.position[1]:.1f})" if o.position else o.label
                      for o in leads[:MAX_COUNTED_SHOWN])
    res.answer = (f"{n} {_plural(label, n)}{scope}" + (f": {where}." if n else ".") if n
                  else f"I did not see any {tq.subject}{scope}.")
    res.evidence_objects = _evidence(leads)
    res.frames = _frames_showing(engine, leads, top_k) if n else []
    if not n:
        res.goal, res.goal_source, res.target_object_id = None, "", ""
    return res


# -- room / place ----------------------------------------------------------------------------------
def place_frames(engine: "AskEngine", place: str) -> list[Keyframe]:
    return [kf for tour in engine.memory.graph.tours() for kf in engine.memory.graph.keyframes(tour)
            if kf.place and _same_place(kf.place, place)]


def _room(engine: "AskEngine", tq: TypedQuestion, top_k: int, mode: str) -> AskResult:
    if not tq.subject:  # "where is the kitchen"
        kfs = place_frames(engine, tq.place)
        res = AskResult(True, "ok", mode=mode)
        if not kfs:
            return _not_seen(res, f"a {tq.place}", "place")
        posed = [k for k in kfs if k.pose]
        res.found = True
        res.value = TypedValue("place", tq.place)
        step = max(1, len(kfs) // max(1, top_k))
        res.frames = [RankedFrame(k.tour_id, k.stamp_ns, 1.0, k.pose, []) for k in kfs[::step][:top_k]]
        if posed:
            cx = sum(k.pose.x for k in posed) / len(posed)  # type: ignore[union-attr]
            cy = sum(k.pose.y for k in posed) / len(posed)  # type: ignore[union-attr]
            res.goal, res.goal_source = Pose.from_xy_yaw(cx, cy, 0.0), "frame_pose"
            res.answer = (f"The {tq.place} is around ({cx:.1f}, {cy:.1f}) m; I was there from "
                          f"{clock(kfs[0].stamp_ns)} to {clock(kfs[-1].stamp_ns)}.")
        else:
            res.answer = f"I was in the {tq.place} from {clock(kfs[0].stamp_ns)} to {clock(kfs[-1].stamp_ns)}."
        return res
    res, sub = _search(engine, _where(tq.subject), top_k, mode)
    if not seen(res):
        return _not_seen(res, f"any {tq.subject}", "place")
    node = sub.objects[res.target_object_id]
    place = place_of_object(engine, node)
    if not place:
        through = place_words(node, engine._tours)  # a room never entered, seen through its door
        res.answer = (f"I saw the {node.label} {through}, in a room I never entered." if through else
                      f"I saw the {node.label}, but I can't tell which room it was in.")
        res.value = TypedValue("place")
        return res
    res.value = TypedValue("place", place)
    res.answer = f"In the {place} (the {node.label})."
    return res


# -- existence -------------------------------------------------------------------------------------
def _existence(engine: "AskEngine", tq: TypedQuestion, top_k: int, mode: str) -> AskResult:
    if tq.scope_ref or tq.place:
        res, groups, missing = scoped_objects(engine, tq, top_k, mode)
        yes = bool(groups)
        scope = (f" {tq.scope_predicate} the {tq.scope_ref}" if tq.scope_ref else "") + (
            f" in the {tq.place}" if tq.place else "")
        if not yes:
            res = _not_seen(res, f"any {tq.subject}{scope}", "yes_no")
            res.answer = f"No, I did not see any {tq.subject}{scope}."
            return res
        leads = [g[0] for g in groups]
        res.evidence_objects = _evidence(leads)
        res.frames = _frames_showing(engine, leads, top_k)
        res.value = TypedValue("yes_no", "yes", yes=True)
        res.answer = f"Yes: {len(leads)} {_plural(leads[0].label, len(leads))}{scope}."
        return res
    res, sub = _search(engine, _where(tq.subject), top_k, mode)
    if not seen(res):
        res = _not_seen(res, f"any {tq.subject}", "yes_no")
        res.answer = f"No, I did not see any {tq.subject}."
        return res
    node = sub.objects[res.target_object_id]
    place = place_of_object(engine, node)
    res.value = TypedValue("yes_no", "yes", yes=True)
    named = set(tq.subject.split()) & set(node.label.lower().split()) or engine._labels.same_kind(
        tq.subject, node.label.lower())
    res.answer = (f"Yes, {_a(node.label)} {node.label}" + ("" if named else f" (the closest thing to {_a(tq.subject)} "
                                                           f"{tq.subject} that I saw)")
                  + (f" in the {place}" if place else "")
                  + (f" at about ({node.position[0]:.1f}, {node.position[1]:.1f}) m." if node.position else "."))
    return res


# -- attribute -------------------------------------------------------------------------------------
ATTRIBUTE_SCHEMA = {"type": "object", "properties": {"value": {"type": "string"}, "answer": {"type": "string"}},
                    "required": ["value", "answer"]}


def _attribute(engine: "AskEngine", tq: TypedQuestion, top_k: int, mode: str) -> AskResult:
    res, sub = _search(engine, _where(tq.subject), top_k, mode)
    if not seen(res):
        return _not_seen(res, f"any {tq.subject}", "attribute")
    node = sub.objects[res.target_object_id]
    value = (node.attributes.get(tq.attribute) or "").strip().lower()
    if not value and tq.attribute == "material":
        value = next((v for k, v in node.attributes.items() if k.startswith("material")), "")
    if value:
        res.value = TypedValue("attribute", value)
        noun = {"color": "colour"}.get(tq.attribute, tq.attribute)
        res.answer = f"{value.capitalize()} (the {noun} of the {node.label} I saw)."
        return res
    if engine.llm is not None:
        from .evidence_image import compose_for_result

        image = compose_for_result(engine.memory, res)
        usage = LLMUsage()
        prompt = (f"A robot saw a {node.label} ({node.description}). The image shows its best views with "
                  f"boxes and a map. What is the {tq.attribute} of the {node.label} in the box? Reply JSON: "
                  "value (one or two words, or empty if the image does not show it), answer (a short sentence).")
        try:
            out = engine.llm.generate_json(prompt, ATTRIBUTE_SCHEMA, images=[image] if image else [], usage=usage)
            value = str(out.get("value", "")).strip().lower()
            res.prompt_tokens["answer"] = usage.prompt_tokens
            if value:
                res.value = TypedValue("attribute", value)
                res.answer = str(out.get("answer") or value)
                return res
        except (LLMError, AttributeError, TypeError) as e:
            res.message = f"VLM attribute answer failed ({e})"
    res.value = TypedValue("attribute")
    res.answer = f"I saw the {node.label}, but I can't tell its {tq.attribute}."
    return res


# -- when / duration -------------------------------------------------------------------------------
def _all_keyframes(engine: "AskEngine") -> list[Keyframe]:
    return sorted((kf for tour in engine.memory.graph.tours() for kf in engine.memory.graph.keyframes(tour)),
                  key=lambda k: (k.stamp_ns, k.tour_id))


def _runs(kfs: list[Keyframe], place: str) -> list[tuple[Keyframe, Keyframe]]:
    """(first, last) keyframe of each stay in ``place``, in time order (per tour)."""
    runs: list[tuple[Keyframe, Keyframe]] = []
    start = prev = None
    for kf in kfs:
        inside = bool(kf.place) and _same_place(kf.place or "", place)
        if inside and start is not None and prev is not None and prev.tour_id != kf.tour_id:
            runs.append((start, prev))
            start = None
        if inside and start is None:
            start = kf
        elif not inside and start is not None and kf.place:  # an unnamed frame does not end a stay
            runs.append((start, prev))  # type: ignore[arg-type]
            start = None
        if inside:
            prev = kf
    if start is not None and prev is not None:
        runs.append((start, prev))
    return runs


def _ago(engine: "AskEngine", stamp_ns: int) -> str:
    kfs = _all_keyframes(engine)
    end = kfs[-1].stamp_ns if kfs else stamp_ns
    mins = (end - stamp_ns) / 60e9
    return f"{mins:.1f} minutes before the end of the recording" if mins >= 0.05 else "at the end of the recording"


def _when(engine: "AskEngine", tq: TypedQuestion, top_k: int, mode: str) -> AskResult:
    if not tq.subject:  # an event: entering or leaving a place
        kfs = _all_keyframes(engine)
        runs = _runs(kfs, tq.place)
        res = AskResult(True, "ok", mode=mode)
        if not runs:
            return _not_seen(res, f"a {tq.place}", "time")
        if tq.cue == "leave":
            first, last = runs[-1]
            i = next((j for j, k in enumerate(kfs) if k is last), len(kfs) - 1)
            if i == len(kfs) - 1:
                res.found, res.value = True, TypedValue("time")
                res.answer = f"I did not leave the {tq.place}: I was still there at the end ({clock(last.stamp_ns)})."
                res.frames = [RankedFrame(last.tour_id, last.stamp_ns, 1.0, last.pose, [])]
                return res
            stamp, shown = last.stamp_ns, [last, kfs[i + 1]]
            verb = "left"
        else:
            first, _ = runs[0]
            stamp, shown, verb = first.stamp_ns, [first], "entered"
        res.found = True
        res.value = TypedValue("time", str(stamp), stamp_ns=stamp)
        res.frames = [RankedFrame(k.tour_id, k.stamp_ns, 1.0, k.pose, []) for k in shown]
        res.answer = f"I {verb} the {tq.place} at {clock(stamp)} ({_ago(engine, stamp)})."
        return res
    cue = "first" if tq.cue == "first" else "last"
    res, sub = _search(engine, f"Where did I {cue} see the {tq.subject}" + (f" in the {tq.place}" if tq.place else "") + "?",
                       top_k, mode)
    if not seen(res):
        return _not_seen(res, f"any {tq.subject}", "time")
    node = sub.objects[res.target_object_id]
    stamps = sorted(o.stamp_ns for o in node.observations)
    stamp = stamps[0] if cue == "first" else stamps[-1]
    if res.frames and any(f.stamp_ns == stamp for f in res.frames):
        res.frames = sorted(res.frames, key=lambda f: f.stamp_ns != stamp)
    else:
        kf = next((engine.memory.graph.get_keyframe(o.tour_id, o.stamp_ns) for o in node.observations
                   if o.stamp_ns == stamp), None)
        if kf is not None:
            res.frames = [RankedFrame(kf.tour_id, kf.stamp_ns, 1.0, kf.pose, [node.id])] + res.frames[: top_k - 1]
    place = place_of_object(engine, node)
    res.value = TypedValue("time", str(stamp), stamp_ns=stamp)
    res.answer = (f"I {cue} saw the {node.label}" + (f" in the {place}" if place else "")
                  + f" at {clock(stamp)} ({_ago(engine, stamp)}).")
    return res


def _duration(engine: "AskEngine", tq: TypedQuestion, top_k: int, mode: str) -> AskResult:
    runs = _runs(_all_keyframes(engine), tq.place)
    res = AskResult(True, "ok", mode=mode)
    if not runs:
        return _not_seen(res, f"a {tq.place}", "duration")
    total_s = sum((b.stamp_ns - a.stamp_ns) / 1e9 for a, b in runs)
    minutes = round(total_s / 60.0, 2)
    res.found = True
    res.value = TypedValue("duration", f"{minutes:g}", number=minutes)
    ends = {(k.tour_id, k.stamp_ns): k for a, b in runs for k in (a, b)}  # a one-keyframe visit is a == b
    res.frames = [RankedFrame(k.tour_id, k.stamp_ns, 1.0, k.pose, []) for k in ends.values()][:top_k]
    res.answer = (f"About {minutes:.1f} minutes in the {tq.place}" +
                  (f" over {len(runs)} visits" if len(runs) > 1 else f", from {clock(runs[0][0].stamp_ns)} to "
                   f"{clock(runs[0][1].stamp_ns)}") + ".")
    return res


# -- route -----------------------------------------------------------------------------------------
@dataclass
class _Leg:
    kfs: list[Keyframe]  # the recorded path, in walking order
    reversed: bool


def _indices_for(engine: "AskEngine", name: str, kfs: list[Keyframe], top_k: int, mode: str) -> tuple[set[int], str]:
    """Keyframe indices that are "at" a place or an object, and what it turned out to be."""
    idx = {i for i, k in enumerate(kfs) if k.place and _same_place(k.place, name)}
    if idx:
        return idx, "place"
    res, sub = _search(engine, _where(name), top_k, mode)
    if seen(res):
        node = sub.objects[res.target_object_id]
        stamps = {(o.tour_id, o.stamp_ns) for o in node.observations}
        return {i for i, k in enumerate(kfs) if (k.tour_id, k.stamp_ns) in stamps}, "object"
    return set(), ""


def _shortest_leg(kfs: list[Keyframe], src: set[int], dst: set[int]) -> _Leg | None:
    """The shortest stretch of the recording from a source keyframe to a destination one
    (walked forwards, else backwards: the way back is the recorded way reversed)."""
    best: tuple[int, int, int, bool] | None = None
    for rev in (False, True):
        order = range(len(kfs) - 1, -1, -1) if rev else range(len(kfs))
        last_src = None
        for i in order:
            if last_src is not None and kfs[i].tour_id != kfs[last_src].tour_id:
                last_src = None
            if i in src:
                last_src = i
            elif i in dst and last_src is not None:
                span = abs(i - last_src)
                if best is None or span < best[0]:
                    best = (span, last_src, i, rev)
        if best is not None and not rev:
            break
    if best is None:
        return None
    _, a, b, rev = best
    leg = kfs[a:b + 1] if not rev else kfs[b:a + 1][::-1]
    return _Leg(leg, rev)


def _heading(path: list[Keyframe], start: int, ahead_m: float = 1.0) -> float | None:
    """Direction of travel from path[start] over the next ``ahead_m`` (else the camera yaw)."""
    p0 = path[start].pose
    if p0 is None:
        return None
    for k in path[start + 1:]:
        if k.pose is not None and math.hypot(k.pose.x - p0.x, k.pose.y - p0.y) >= ahead_m:
            return math.atan2(k.pose.y - p0.y, k.pose.x - p0.x)
    return p0.yaw


def turn_word(angle: float) -> str:
    deg = math.degrees((angle + math.pi) % (2 * math.pi) - math.pi)
    if abs(deg) <= STRAIGHT_DEG:
        return "straight"
    if abs(deg) >= 180.0 - STRAIGHT_DEG:
        return "back"
    return "left" if deg > 0 else "right"


def _route(engine: "AskEngine", tq: TypedQuestion, top_k: int, mode: str) -> AskResult:
    kfs = _all_keyframes(engine)
    res = AskResult(True, "ok", mode=mode)
    dst, dst_kind = _indices_for(engine, tq.route_to, kfs, top_k, mode)
    if not dst:
        return _not_seen(res, f"the {tq.route_to}", "direction")
    src: set[int] = set()
    start_name = tq.route_from
    if tq.route_from:
        src, _ = _indices_for(engine, tq.route_from, kfs, top_k, mode)
        if not src and any(w in tq.route_from for w in ("entrance", "door", "front", "start")):
            src, start_name = {0}, "the start of the tour (the entrance)"
        elif not src:
            return _not_seen(res, f"the {tq.route_from}", "direction")
    else:
        src, start_name = {len(kfs) - 1}, "where I stopped"
    src -= dst
    leg = _shortest_leg(kfs, src, dst) if src else None
    if leg is None:
        res.found, res.value = bool(src & dst) or not src, TypedValue("direction")
        res.answer = (f"I can't tell: my recording never went from {start_name} to the {tq.route_to}."
                      if src else f"You are already at the {tq.route_to}.")
        return res
    path = leg.kfs
    places: list[str] = []
    for k in path[1:]:
        if k.place and (not places or places[-1] != k.place.lower()):
            places.append(k.place.lower())
    start_place = (path[0].place or "").lower()
    if places and places[0] == start_place:
        places = places[1:]
    if dst_kind == "object" and (not places or not _same_place(places[-1], tq.route_to)):
        places.append(tq.route_to)
    h0 = _heading(path, 0)
    goal_kf = path[-1]
    direction = ""
    turns: list[str] = []
    if h0 is not None and goal_kf.pose is not None and path[0].pose is not None:
        to_goal = math.atan2(goal_kf.pose.y - path[0].pose.y, goal_kf.pose.x - path[0].pose.x)
        direction = turn_word(to_goal - h0)
        prev_h, prev_place = h0, start_place
        for i, k in enumerate(path[1:], 1):  # the turn taken at each change of place
            if k.place and k.place.lower() != prev_place:
                h = _heading(path, i)
                if h is not None:
                    turns.append(f"{turn_word(h - prev_h)} into the {k.place.lower()}")
                    prev_h = h
                prev_place = k.place.lower()
    res.found = True
    res.value = TypedValue("direction", ", ".join(places) or tq.route_to, places=places or [tq.route_to],
                           direction=direction)
    step = max(1, len(path) // max(1, top_k - 1))
    shown = path[::step][: top_k - 1] + [path[-1]]
    res.frames = [RankedFrame(k.tour_id, k.stamp_ns, round(1.0 - i / max(1, len(shown)), 5), k.pose, [])
                  for i, k in enumerate(shown)]
    if goal_kf.pose is not None:
        res.goal, res.goal_source = goal_kf.pose, "frame_pose"
    via = f" through the {', the '.join(places[:-1])}" if len(places) > 1 else ""
    res.answer = (f"From {start_name if start_name.startswith('the ') or start_name.startswith('where') else 'the ' + start_name}"
                  f", the {tq.route_to} is {direction or 'on my recorded path'}"
                  f"{' ahead' if direction == 'straight' else ' of you' if direction in ('left', 'right') else ''}"
                  f"{via}" + (f" ({'; '.join(turns)})" if turns else "") + "."
                  + (" (I walked it the other way, so this is my path reversed.)" if leg.reversed else ""))
    return res
