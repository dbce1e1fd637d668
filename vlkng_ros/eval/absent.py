"""Presence questions for the found/not-found decision: things a tour saw, and things it never saw.

For a generated tour (eval/sim), *present* questions ask for every object class the robot saw
(an annotated box in some frame), by its label and by each catalog synonym; *absent* questions
ask for catalog classes that are not in the tour's world, for household things outside the
catalog, and for junk (an injection string, a made-up word). Absent words that share a word
with anything in the world ("clock" when there is an "alarm clock") are left out: finding the
alarm clock for "clock" is not a false "found". Separately (``shares_word``), compounds that
share a word with something seen but end in the head noun of an absent thing ("coffee machine"
with a coffee table seen and no machine in the world, "desk drawer" with a desk): built by
that rule from the world's own labels, so every world asks its own.

``activity_questions``: the same two sides for questions that name a use, not a thing ("where can
I have a meal?"): present when a class the tour saw affords it, absent when no class in the world
does (the catalog's own activity and affordance phrasings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .sim.catalog import ACTION_PHRASES, AFFORDANCE_PHRASES, ALL_CLASSES, CLASSES

OUTSIDE_CATALOG = (
    "piano", "bicycle", "microwave", "washing machine", "guitar", "fireplace", "printer",
    "aquarium", "treadmill", "dishwasher", "ironing board", "vacuum cleaner", "ladder",
    "fire extinguisher", "suitcase", "candle", "teddy bear", "hair dryer", "trash can",
    "mirror", "skateboard", "violin", "telescope", "blender", "toothbrush", "scissors",
    "wine bottle", "baby stroller", "globe", "sewing machine",
)
JUNK = ("'; DROP TABLE objects; --", "blorptangle", "the quantum flux capacitor")
MAX_SYNONYMS = 99  # synonyms asked per seen class (besides its label)
TEMPLATES = ("where is the {}?", "where did you see a {}?", "take me to the {}", "have you seen my {}?")


@dataclass(frozen=True)
class PresenceQuestion:
    question: str
    target: str  # the word asked for
    present: bool
    label: str = ""  # for a present question: the class it asks for (the world's label)
    shares_word: bool = False  # an absent compound sharing a word with a thing seen


def _words(text: str) -> set[str]:
    return {w for w in text.lower().replace("-", " ").split() if w}


def presence_questions(tour_dir: str | Path) -> list[PresenceQuestion]:
    """Present and absent questions of one generated tour (deterministic)."""
    in_world, seen_set = _world_classes(Path(tour_dir))
    seen = sorted(seen_set)
    world_words = set().union(*(_words(lab) for lab in in_world)) if in_world else set()
    for lab in in_world:
        if lab in CLASSES:
            world_words |= set().union(set(), *(_words(s) for s in CLASSES[lab].synonyms))
    out: list[PresenceQuestion] = []
    for i, lab in enumerate(seen):
        names = [lab, *(CLASSES[lab].synonyms[:MAX_SYNONYMS] if lab in CLASSES else ())]
        for j, name in enumerate(names):
            out.append(PresenceQuestion(TEMPLATES[(i + j) % len(TEMPLATES)].format(name), name, True, lab))
    absent = [c for c in sorted(CLASSES) if c not in in_world and not (_words(c) & world_words)]
    absent += [w for w in OUTSIDE_CATALOG if not (_words(w) & world_words)]
    for i, word in enumerate(absent):
        out.append(PresenceQuestion(TEMPLATES[i % len(TEMPLATES)].format(word), word, False))
    out += [PresenceQuestion(f"where is {j}?", j, False) for j in JUNK]
    heads = list(dict.fromkeys(w.split()[-1] for w in absent if w.split()[-1] not in world_words))
    for i, lab in enumerate(seen if heads else ()):
        # the seen label's first word (a modifier, or the whole label) before an absent head
        first, head = lab.lower().replace("-", " ").split()[0], heads[i % len(heads)]
        compound = f"{first} {head}"
        out.append(PresenceQuestion(TEMPLATES[i % len(TEMPLATES)].format(compound), compound, False,
                                    shares_word=True))
    return out


def _world_classes(root: Path) -> tuple[set[str], set[str]]:
    """(labels in the world, labels of those the tour saw: an annotated box in some frame)."""
    world = json.loads((root / "world.json").read_text())
    seen_tracks: set[str] = set()
    with open(root / "annotations.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                seen_tracks.update(o["gt_track"] for o in json.loads(line).get("objects", []))
    return ({o["label"] for o in world["objects"]},
            {o["label"] for o in world["objects"] if o["gt_track"] in seen_tracks})


def activity_questions(tour_dir: str | Path) -> list[PresenceQuestion]:
    """Questions for a use ("where can I have a meal?", "something to boil water with"): present
    when a class the tour saw affords it (``label``: those classes, "|"-joined), absent when no
    class in the world does; a use only unseen things in the world afford is not asked. The
    classes of a generalisation world (``--varied``) count as the usual ones do: a dresser seen
    serves "put away my jacket" ("store clothes in"), and a world with a candle ("give light")
    is never asked for light as an absent use."""
    in_world, seen = _world_classes(Path(tour_dir))
    out: list[PresenceQuestion] = []
    for affordance, phrasings in [*ACTION_PHRASES.items(), *AFFORDANCE_PHRASES.items()]:
        classes = {c for c, k in ALL_CLASSES.items() if affordance in k.affordances}
        if classes & seen:
            out += [PresenceQuestion(q, affordance, True, "|".join(sorted(classes & seen))) for q in phrasings]
        elif not classes & in_world:
            out += [PresenceQuestion(q, affordance, False) for q in phrasings]
    return out


def held_classes(memory, tour_dir: str | Path) -> dict[str, dict[str, set[str]]]:
    """What a memory built from a generated tour holds of each class it saw: class label ->
    {"held": nodes holding most of a matched observation set of an object of that class,
    "merged": nodes holding some of its observations but mostly another object's}. A class
    with neither was never built (perception missed it). Observations are matched to the
    annotations by box overlap (eval/metrics.py), never through labels."""
    from collections import Counter, defaultdict

    from .metrics import node_track_counts

    world = json.loads((Path(tour_dir) / "world.json").read_text())
    label_of = {o["gt_track"]: o["label"] for o in world["objects"]}
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"held": set(), "merged": set()})
    for node_id, tracks in node_track_counts(memory, tour_dir).items():
        counts: Counter = Counter()
        for track, n in tracks.items():
            counts[label_of.get(track, "")] += n
        main = counts.most_common(1)[0][0]
        for lab in counts:
            out[lab]["held" if lab == main else "merged"].add(node_id)
    return dict(out)


@dataclass(frozen=True)
class RoomQuestion:
    question: str
    label: str  # the class asked for
    room: str  # the kind of room it is in (world.json), asked for by name
    through_door: bool  # most of the frames that saw the objects asked for were taken in another room


def _sightings(root: Path) -> tuple[dict, dict[str, list[str]], set[str]]:
    """(world.json, per seen track the places of the frames that saw it, every place a frame was in)."""
    world = json.loads((root / "world.json").read_text())
    seen: dict[str, list[str]] = {}
    visited: set[str] = set()
    with open(root / "annotations.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                frame = json.loads(line)
                visited.add(frame.get("place") or "")
                for o in frame.get("objects", []):
                    seen.setdefault(o["gt_track"], []).append(frame.get("place") or "")
    return world, seen, visited - {""}


def room_questions(tour_dir: str | Path) -> list[RoomQuestion]:
    """Present questions naming the room a seen thing is in ("where is the plant in the living
    room?"), one per (class, kind of room) the tour saw, for rooms the robot entered (a frame was
    taken there: a room never entered has no frame named after it, so no memory can know it).
    ``through_door``: the frames that saw things of that class in that room were mostly taken
    from another room (seen through a door), where the camera's room is the wrong answer."""
    world, seen, visited = _sightings(Path(tour_dir))
    places: dict[tuple[str, str], list[str]] = {}
    for o in world["objects"]:
        if o["gt_track"] in seen and o["room"] in visited:
            places.setdefault((o["label"], o["room"]), []).extend(seen[o["gt_track"]])
    out = []
    for i, ((label, room), where) in enumerate(sorted(places.items())):
        through = sum(p == room for p in where) * 2 < len(where)
        out.append(RoomQuestion(TEMPLATES[i % len(TEMPLATES)].format(f"{label} in the {room}"), label, room, through))
    return out


def true_rooms(memory, tour_dir: str | Path) -> dict[str, tuple[str, str, bool]]:
    """Per object node of a memory built from a generated tour: (the class, the kind of room, seen
    mostly through a door) of the ground-truth object holding most of its matched observations."""
    from .metrics import node_track_counts

    world, seen, _ = _sightings(Path(tour_dir))
    by_track = {o["gt_track"]: o for o in world["objects"]}
    out = {}
    for node_id, tracks in node_track_counts(memory, tour_dir).items():
        track = tracks.most_common(1)[0][0]
        if track in by_track:
            o = by_track[track]
            where = seen.get(track, [])
            out[node_id] = (o["label"], o["room"], sum(p == o["room"] for p in where) * 2 < len(where))
    return out
