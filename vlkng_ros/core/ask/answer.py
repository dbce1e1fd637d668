"""Answering from the budgeted subgraph: frame ranking, option scoring, the target's pooled
position (core/goals.py turns it into a goal pose), LLM answer.

Offline, everything is a deterministic evidence scorer. With an LLM, one prompt built from the
subgraph alone (at most ``max_prompt_tokens`` chars/4, enforced by dropping the least relevant
objects) gives the answer, option and frames; its frames are validated against the candidate
keyframes (anything else is dropped), and a malformed reply falls back to the offline scorer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable


from ..geometry import RayAccumulator, object_footprint
from ..llm.base import LLM, LLMError, LLMUsage
from ..model import ObjectNode, Relation
from .found import seen_apart, shrunk_share
from .graph_retrieval import Subgraph
from .options import parse_choice, render_options
from .query import ParsedQuery
from .types import EvidenceObject, EvidenceRelation

if TYPE_CHECKING:
    from ..memory import Memory

GOAL_MERGE_M = 2.0  # same-label evidence objects this close are pooled for the goal position
MIN_POSITION_VAR = 0.05  # m^2: floor on a node's position variance when weighting it
SUPPORT_PREDICATES = ("on", "in", "under")  # what stands on, lies in or under an object is inside its footprint
SUPPORT_FOOTPRINT_VAR = 0.25  # m^2: ... somewhere on it (~0.5 m from its centre)
SUPPORT_MIN_SIGHTINGS = 2  # a support relation needs this many frames (one noisy chunk is not enough)
SUPPORT_GATE_SIGMAS = 3.0  # ... and only where it could be on it: within 3 sigma of the footprint
RESTS_ON = ("on", "in")  # a loosely placed object perceived on or in something better placed ...
LOOSE_POSITION_VAR = 0.5  # m^2 ... (this loose) is placed where its bearings cross it
SUPPORT_RELATION_LIMIT = 60  # relations of the target read for support: bounds one lookup, far above real counts
GOAL_PICK_SHARE = 0.85  # targets scoring this share of the answer's target compete for the goal
GOAL_PICK_RADIUS_M = 3.0  # ... and lying this close to it (else they are other objects of that kind)
TIME_PICK_SHARE = 0.75  # "first/last saw X": targets scoring this share of the best compete on time
TIME_OTHERS_WEIGHT = 0.3  # ... and the ones not picked keep this share of their score
VISIT_ORDER_DECAY = 0.3  # within the first (last) visit, each later (earlier) sighting counts less
RUN_GAP_NS = 3_000_000_000  # sightings further apart than this start a new visit
MAX_FRAMES_PER_OBJECT_IN_PROMPT = 6  # stamps listed per object in the answer prompt (keeps it in budget)
OTHER_TARGETS_SHARE = 0.25  # in a frame, targets other than its best match add this share


@dataclass
class FrameScore:
    tour_id: str
    stamp_ns: int
    score: float
    object_ids: list[str]


def bbox_quality(bbox: tuple[float, float, float, float], size: tuple[int, int] | None) -> float:
    """0..1: how large and central the box is in its image (a clear view of the object)."""
    if not size:
        return 0.5
    w, h = size
    x1, y1, x2, y2 = bbox
    area = max(0.0, (x2 - x1) * (y2 - y1)) / max(1.0, w * h)
    cx, cy = (x1 + x2) / 2 / max(1, w), (y1 + y2) / 2 / max(1, h)
    central = 1.0 - min(1.0, math.hypot(cx - 0.5, cy - 0.5) / 0.7071)
    return 0.5 * min(1.0, math.sqrt(area) / 0.5) + 0.5 * central


def rank_frames(sub: Subgraph, pq: ParsedQuery, size_of: Callable[[str, int], tuple[int, int] | None],
                floor: float) -> list[FrameScore]:
    """Score each keyframe by the fused scores of the evidence objects seen in it, weighted by
    how well each is seen; references seen with a target add agreement; time cues reorder."""
    acc: dict[tuple[str, int], FrameScore] = {}
    target_part: dict[tuple[str, int], tuple[float, float]] = {}  # frame -> (best, sum) over targets
    cues = {t.cue for t in pq.time}
    for oid in sub.ordered_ids():
        role = sub.roles.get(oid, "context")
        if role == "context" or sub.relevance.get(oid, 0.0) < floor:
            continue
        weight = sub.scores.get(oid, 0.0) * (1.0 if role == "target" else 0.35)
        obs = sorted(sub.objects[oid].observations, key=lambda o: o.stamp_ns)
        visit = _visit_bounds(obs, "first" if "first" in cues else "last" if "last" in cues else "")
        order = obs if "first" in cues else obs[::-1]
        in_visit = 0
        for ob in order:
            q = bbox_quality(ob.bbox, size_of(ob.tour_id, ob.stamp_ns))
            t = 1.0
            if role == "target" and visit:
                if not visit[0] <= ob.stamp_ns <= visit[1]:
                    t = 0.15  # "when I first saw X": only the first visit shows the answer
                else:  # ... and its first moments most of all
                    t = 1.0 / (1.0 + VISIT_ORDER_DECAY * in_visit)
                    in_visit += 1
            key = (ob.tour_id, ob.stamp_ns)
            fs = acc.setdefault(key, FrameScore(ob.tour_id, ob.stamp_ns, 0.0, []))
            contribution = weight * (0.4 + 0.6 * q) * t
            if role == "target":
                best = target_part.get(key, (0.0, 0.0))
                target_part[key] = (max(best[0], contribution), best[1] + contribution)
            else:
                fs.score += contribution
            if oid not in fs.object_ids:
                fs.object_ids.append(oid)
    for key, (best, total) in target_part.items():
        # the frame showing the best match clearly beats one showing several weaker matches
        acc[key].score += best + OTHER_TARGETS_SHARE * (total - best)
    ranked = sorted(acc.values(), key=lambda f: (-f.score, f.stamp_ns))
    return ranked


def shown_first(scored: list[FrameScore], shown: set[int]) -> list[FrameScore]:
    """Frames that show the evidence the chosen option rests on (the stamps a relation was
    seen at) rank first, in their own order; the rest follow."""
    return sorted(scored, key=lambda f: (f.stamp_ns not in shown, -f.score, f.stamp_ns))


def visit_first(scored: list[FrameScore], node, pq: ParsedQuery) -> list[FrameScore]:
    """"When did I first see X": the best frame of X's first (last) visit leads; the rest keep
    their order (other candidates stay as alternatives in the top k)."""
    cues = {t.cue for t in pq.time} & {"first", "last"}
    if len(cues) != 1:
        return scored
    visit = _visit_bounds(sorted(node.observations, key=lambda o: o.stamp_ns), next(iter(cues)))
    if visit is None:
        return scored
    lead = next((i for i, f in enumerate(scored) if visit[0] <= f.stamp_ns <= visit[1] and node.id in f.object_ids), 0)
    return [scored[lead]] + scored[:lead] + scored[lead + 1:]


def position_var(node: ObjectNode) -> float:
    """The node's position variance (m^2), never below MIN_POSITION_VAR."""
    return max(float(node.position_var or 0.0), MIN_POSITION_VAR)


def support(node) -> float:
    """How well the memory knows where an object is: sightings over position variance."""
    return len(node.observations) / position_var(node) if node.position else 0.0


def goal_target(sub: Subgraph, target_id: str, share: float = GOAL_PICK_SHARE,
                radius_m: float | None = GOAL_PICK_RADIUS_M, among: list[str] | None = None,
                same_kind: Callable[[str, str], bool] | None = None, rooms: dict[str, str] | None = None) -> str:
    """The object to send the robot to: among the targets scoring at least ``share`` of the
    answer's target and named like it (likely duplicates of one object), the best supported
    one, so a fragment with two sightings does not beat the node seen all along. A node mostly
    called another kind of thing (``same_kind`` of the two labels false) is no duplicate, even if
    it was once seen under the target's name: a cushion that took in a few of the sofa's
    sightings is still a cushion; nor is one seen in other colours (``seen_apart``), nor, given
    ``rooms`` (the kind of place each node is in, where the question names one), one in another
    room than the target: "the plant in the kitchen" first seen through the kitchen door is not
    the hallway's plant seen earlier 3 m from it (read seed 747)."""
    top = sub.scores.get(target_id, 0.0)
    label = sub.objects[target_id].label.lower()
    pool = among if among is not None else [o for o in sub.targets() if sub.scores.get(o, 0.0) >= share * top]
    close = [o for o in pool if o in sub.objects and sub.objects[o].position
             and label in {lab.lower() for lab in [sub.objects[o].label] + list(sub.objects[o].labels_seen)}
             and (o == target_id or same_kind is None or same_kind(label, sub.objects[o].label.lower()))
             and not seen_apart(sub.objects[target_id], sub.objects[o])
             and (rooms is None or o == target_id or rooms.get(o) == rooms.get(target_id))]
    here = sub.objects[target_id].position
    if radius_m is not None and here is not None:
        close = [o for o in close if o == target_id or math.hypot(
            sub.objects[o].position[0] - here[0], sub.objects[o].position[1] - here[1]) <= radius_m]
    return max(close, key=lambda o: (support(sub.objects[o]), o == target_id), default=target_id)


def name_share(node: ObjectNode, name: str) -> float:
    """The share of the chunks that named ``node`` that called it ``name`` (its ``label_votes``;
    objects without votes count their label once), shrunk toward one half (``shrunk_share``)."""
    votes = _votes(node)
    return shrunk_share(sum(k for lab, k in votes.items() if lab.lower() == name), sum(votes.values()))


def _votes(node: ObjectNode) -> dict[str, int]:
    return node.label_votes or {node.label: 1}


def _called(sub: Subgraph, targets: list[str], name: str) -> list[int]:
    """The indexes of the ``targets`` perception ever called ``name``."""
    return [i for i, o in enumerate(targets)
            if o in sub.objects and any(lab.lower() == name for lab in _votes(sub.objects[o]))]


def most_called_first(sub: Subgraph, targets: list[str], name: str,
                      group: Callable[[str], object] = lambda _o: 0, as_found: bool = False) -> list[str]:
    """The found ``targets`` (best first) with those perception ever called ``name`` (the phrase
    asked for) reordered among their own places: the one called so most often (``name_share``)
    first. Two things named the asked name are both found (an armchair and an office chair once
    called an armchair, both mostly called "chair"); the one called so in a larger share of its
    sightings is more likely the thing asked for, whichever the retrieval ranked higher (its
    score follows how much was seen of it, not what it is). ``group``: the order the found rule
    decided that must stay (seen in the colour or place asked for first); reordering is within it.
    ``as_found``: when no target was ever called ``name``, count the best target's own name
    instead (the question names a thing, and that is the name it was found under)."""
    name = name.strip().lower()
    slots = _called(sub, targets, name)
    if not slots and as_found and targets and targets[0] in sub.objects:
        # nothing was ever called the asked name ("easy chair"): the name perception gave the
        # best target ("armchair") is the one to count, among the things ever called it
        name = sub.objects[targets[0]].label.strip().lower()
        slots = _called(sub, targets, name)
    if len(slots) < 2:
        return targets
    ranked = sorted(slots, key=lambda i: (group(targets[i]), -name_share(sub.objects[targets[i]], name), i))
    out = list(targets)
    for slot, i in zip(slots, ranked):
        out[slot] = targets[i]
    return out


def prefer_by_time(sub: Subgraph, pq: ParsedQuery,
                   same_kind: Callable[[str, str], bool] | None = None) -> list[str]:
    """"When did I first see the armchair?": among the targets that match about as well as the
    best one (a duplicate node of the same object, or the same thing under a near-synonym
    label: ``same_kind(label, label)``), the one seen first (last) is the answer; it becomes the
    top target. Returns the competing targets (empty when the question has no such cue)."""
    cues = {t.cue for t in pq.time} & {"first", "last"}
    targets = sub.targets()
    if len(cues) != 1 or len(targets) < 2:
        return []
    top = sub.scores.get(targets[0], 0.0)
    here = sub.objects[targets[0]].position
    top_label = sub.objects[targets[0]].label.lower()
    close = [o for o in targets if sub.scores.get(o, 0.0) >= TIME_PICK_SHARE * top and sub.objects[o].observations
             # a duplicate lies where the object is: a chair across the house is another thing
             and (o == targets[0] or here is None or sub.objects[o].position is None
                  or math.dist(here, sub.objects[o].position) <= GOAL_PICK_RADIUS_M)
             # ... and is named like it: the chair the cushion lies on is not the cushion, nor
             # is a cushion once seen under the sofa's name the sofa
             and (o == targets[0] or (same_kind(top_label, sub.objects[o].label.lower()) if same_kind is not None
                                      else top_label in {lab.lower() for lab in sub.objects[o].labels_seen}))
             # ... and was not seen in another colour: the blue mug seen first is not the yellow one
             and not seen_apart(sub.objects[targets[0]], sub.objects[o])]
    if "first" in cues:
        pick = min(close, key=lambda o: min(ob.stamp_ns for ob in sub.objects[o].observations))
    else:
        pick = max(close, key=lambda o: max(ob.stamp_ns for ob in sub.objects[o].observations))
    for oid in close:  # the others' first visits are not the moment asked about
        sub.scores[oid] = TIME_OTHERS_WEIGHT * sub.scores.get(oid, 0.0)
    sub.scores[pick] = top
    return close


def _visit_bounds(obs: list, which: str) -> tuple[int, int] | None:
    """Stamps [start, end] of the first or last visit (run of sightings without a long gap)."""
    if not which or len(obs) < 2:
        return None
    stamps = [o.stamp_ns for o in obs]
    if which == "last":
        stamps = stamps[::-1]
    end = stamps[0]
    for s in stamps[1:]:
        if abs(s - end) > RUN_GAP_NS:
            break
        end = s
    return (stamps[0], end) if which == "first" else (end, stamps[0])


def merged_position(sub: Subgraph, target_id: str, supported: list[ObjectNode] | None = None,
                    placed: ObjectNode | None = None) -> tuple[float, float] | None:
    """The target's position pooled with its likely duplicates: evidence objects with the same
    label whose positions lie within GOAL_MERGE_M of it and could be one object with it
    (``_could_be_one``: one physical object split into several nodes by association). Each counts by its observations over its position variance, so a
    well-triangulated node outweighs a noisy fragment whichever of them ranked first.
    Objects perceived on, in or under the target (``supported``: the TV on the TV stand) lie inside its
    footprint: each counts as one more estimate of the target's place, looser by
    SUPPORT_FOOTPRINT_VAR (a big piece of furniture seen from one spot has a loose range; the
    small things on it are often pinned down well), unless it lies too far to be on it."""
    node = sub.objects.get(target_id)
    if node is None or node.position is None:
        return None
    node = placed or node  # re-placed on what it stands on (placed_on_support)
    ox, oy = node.position  # type: ignore[misc]
    duplicates = [o for o in sub.objects.values() if o.id != node.id and o.position is not None
                  and o.label.lower() == node.label.lower() and math.dist(o.position, (ox, oy)) <= GOAL_MERGE_M
                  and _could_be_one(node, o)]
    estimates = [(other.position, support(other)) for other in [node, *duplicates]]
    estimates += [(item.position, len(item.observations) / (position_var(item) + SUPPORT_FOOTPRINT_VAR))
                  for item in supported or [] if item.position is not None and item.id != node.id
                  and _within_footprint(node, item)]
    sw = sum(w for _, w in estimates)
    if sw <= 0:
        return ox, oy
    return (sum(w * p[0] for p, w in estimates) / sw, sum(w * p[1] for p, w in estimates) / sw)


def _could_be_one(node: ObjectNode, other: ObjectNode) -> bool:
    """Could two nodes of one label be one object split in two? Their places differ by no more
    than SUPPORT_GATE_SIGMAS of their uncertainty plus half the larger one's longest measured
    side (a fragment is placed at the part it saw), and were not seen in colours or materials
    apart (``seen_apart``). Three cushions on a sofa, each placed to a few
    centimetres 1.2-1.5 m apart, are three cushions: pooled, the pink one's goal went 0.97 m off."""
    assert node.position is not None and other.position is not None
    if seen_apart(node, other):  # a blue mug beside the yellow one is another mug
        return False
    sides = [max(f) for f in (object_footprint(n.ray_stats) if n.ray_stats else None for n in (node, other)) if f]
    reach = SUPPORT_GATE_SIGMAS * math.sqrt(position_var(node) + position_var(other)) + 0.5 * max(sides, default=0.0)
    return math.dist(node.position, other.position) <= reach


def _within_footprint(node: ObjectNode, item: ObjectNode) -> bool:
    """Could ``item`` stand on, in or under ``node``, given both positions' uncertainty? A chair
    2.9 m from a well-placed sofa is not on it, whatever one noisy relation said."""
    assert node.position is not None and item.position is not None
    d2 = (item.position[0] - node.position[0]) ** 2 + (item.position[1] - node.position[1]) ** 2
    return d2 <= SUPPORT_GATE_SIGMAS ** 2 * (position_var(node) + position_var(item) + SUPPORT_FOOTPRINT_VAR)


def _partners(rels: list[Relation], target_id: str, predicates: tuple[str, ...], target_is_subject: bool) -> list[str]:
    """Ids of what stands in one of ``predicates`` to the target (the target as subject: what it
    is on; as object: what is on it), seen in at least SUPPORT_MIN_SIGHTINGS frames (one noisy
    frame's relation says little)."""
    return sorted({(r.object if target_is_subject else r.subject) for r in rels
                   if (r.subject if target_is_subject else r.object) == target_id and r.subject != r.object
                   and r.predicate in predicates and len(r.stamps) >= SUPPORT_MIN_SIGHTINGS})


def placed_on_support(memory: "Memory", node: ObjectNode, rels: list[Relation],
                      camera_height: Callable[[], float | None]) -> ObjectNode | None:
    """A loosely placed object (seen from one spot: no range) perceived on or in something
    better placed lies where its bearings cross that support's footprint: its bearings re-solved
    with the support's place as the range (variance + footprint). None when it does not apply
    (well placed already, no such support, or the support is off its bearings). ``rels``: the
    node's relations; ``camera_height`` is only asked for when the bearings are re-solved."""
    if not node.ray_stats or (node.position_var or 0.0) < LOOSE_POSITION_VAR:
        return None
    ids = _partners(rels, node.id, RESTS_ON, target_is_subject=True)
    rays = RayAccumulator(node.ray_stats)
    best: tuple[float, ObjectNode] | None = None
    for other in memory.graph.get_objects(ids) if ids else []:
        if other.position is None or position_var(other) >= position_var(node):
            continue
        var = position_var(other) + SUPPORT_FOOTPRINT_VAR
        if rays.residual_at(other.position) > SUPPORT_GATE_SIGMAS ** 2 * var:
            continue  # not on this object's bearings: the relation, or one of the places, is wrong
        if best is None or var < best[0]:
            best = (var, other)
    if best is None:
        return None
    est = rays.solve(camera_height(), anchor=(best[1].position, best[0]))  # type: ignore[arg-type]
    return replace(node, position=est[0], position_var=est[1]) if est else None


def supports_of(memory: "Memory", rels: list[Relation], node: ObjectNode) -> list[ObjectNode]:
    """What the object rests on or in (``rels``: its relations) and could stand on, given both
    places (``_within_footprint``): the bed under a pillow. One object fetch."""
    ids = _partners(rels, node.id, RESTS_ON, target_is_subject=True) if node.position is not None else []
    return [o for o in memory.graph.get_objects(ids) if o.position is not None and _within_footprint(o, node)] if ids else []


def supported_objects(memory: "Memory", target_id: str, rels: list[Relation]) -> list[ObjectNode]:
    """What was seen on, in or under the object (``rels``: its relations). One object fetch."""
    ids = _partners(rels, target_id, SUPPORT_PREDICATES, target_is_subject=False)
    return memory.graph.get_objects(ids) if ids else []


def evidence(sub: Subgraph, frames_cap: int = 12,
             lead: str = "") -> tuple[list[EvidenceObject], list[EvidenceRelation]]:
    """The subgraph for the reply, best scored first; ``lead`` (the answer's object) leads, so a
    reader never sees another object on top of the evidence for the answer (a retrieval score
    can be high for an object whose similarity to the question is under the relevance floor)."""
    objs = []
    order = sub.ordered_ids()
    if lead in sub.objects:
        order = [lead] + [o for o in order if o != lead]
    for oid in order:
        n = sub.objects[oid]
        objs.append(EvidenceObject(n.id, n.label, n.description, dict(n.attributes), list(n.affordances),
                                   n.position, n.frames[:frames_cap], round(sub.scores.get(oid, 0.0), 4)))
    rels = [EvidenceRelation(r.subject, r.predicate, r.object, sorted(r.stamps)[:frames_cap])
            for r in sub.relations]
    return objs, rels


def render_prompt(question: str, options: list[tuple[str, str]], sub: Subgraph,
                  frames: list[FrameScore], max_tokens: int) -> str:
    """The answer prompt: question, objects (best first), relations, candidate frames. Objects
    are dropped from the end until the prompt fits the token budget (chars/4)."""
    head = ("You answer a question about what a robot saw, using ONLY this knowledge graph.\n"
            f"Question: {question}\n")
    if options:
        head += "Options: " + render_options(options) + "\n"
    tail = ("Reply JSON: answer (short text), choice (option letter or empty), frames (candidate "
            "frame stamps, most relevant first), target (object id or empty).\n")
    ids = sub.ordered_ids()
    while True:
        keep = set(ids)
        lines = ["Objects:"]
        for oid in ids:
            n = sub.objects[oid]
            attrs = ", ".join(f"{k}={v}" for k, v in sorted(n.attributes.items()))
            pos = f" at ({n.position[0]:.1f},{n.position[1]:.1f})" if n.position else ""
            seen = ",".join(str(s) for _, s in n.frames[:MAX_FRAMES_PER_OBJECT_IN_PROMPT])
            lines.append(f"- {oid}: {n.label} [{attrs}] {n.description}{pos}; seen {seen}")
        lines.append("Relations:")
        lines += [f"- {r.subject} {r.predicate} {r.object}" for r in sub.relations
                  if r.subject in keep and r.object in keep]
        cand = [f.stamp_ns for f in frames if any(o in keep for o in f.object_ids)][:20]
        lines.append("Candidate frames: " + ",".join(str(s) for s in cand))
        prompt = head + "\n".join(lines) + "\n" + tail
        if len(prompt) // 4 <= max_tokens or not ids:
            return prompt[: max_tokens * 4]
        ids = ids[:-1]


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "choice": {"type": "string"},
                   "frames": {"type": "array", "items": {"type": "string"}},
                   "target": {"type": "string"}},
    "required": ["answer", "frames"],
}


def llm_answer(llm: LLM, prompt: str, options: list[tuple[str, str]], candidates: dict[int, FrameScore],
               sub: Subgraph, usage: LLMUsage) -> tuple[str, str, list[FrameScore], str, str]:
    """(answer, choice, frames, target id, note). Raises LLMError when the reply is unusable."""
    out = llm.generate_json(prompt, ANSWER_SCHEMA, usage=usage)
    if not isinstance(out, dict) or not isinstance(out.get("answer"), str) or not isinstance(out.get("frames"), list):
        raise LLMError("answer is not an object with 'answer' and 'frames'")
    choice = parse_choice(out.get("choice"), options)
    if choice is None:
        raise LLMError(f"choice {str(out.get('choice') or '')[:20]!r} is not one of the options")
    frames, dropped = [], 0
    for i, s in enumerate(out["frames"]):
        try:
            stamp = int(str(s).strip())
        except ValueError:
            dropped += 1
            continue
        if stamp in candidates and all(f.stamp_ns != stamp for f in frames):
            frames.append(FrameScore(candidates[stamp].tour_id, stamp, 1.0 / (1 + i), candidates[stamp].object_ids))
        else:
            dropped += 1
    target = str(out.get("target") or "")
    note = f"dropped {dropped} frame(s) the LLM named that are not candidate keyframes" if dropped else ""
    return out["answer"].strip(), choice, frames, target if target in sub.objects else "", note
