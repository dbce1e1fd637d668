"""Presence questions for the found/not-found decision: things a tour saw, and things it never saw.

For a generated tour (eval/sim), *present* questions ask for every object class the robot saw
(an annotated box in some frame), by its label and by each catalog synonym; *absent* questions
ask for catalog classes that are not in the tour's world, for household things outside the
catalog, and for junk (an injection string, a made-up word). Absent words that share a word
with anything in the world ("clock" when there is an "alarm clock") are left out: finding the
alarm clock for "clock" is not a false "found".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .sim.catalog import CLASSES

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


def _words(text: str) -> set[str]:
    return {w for w in text.lower().replace("-", " ").split() if w}


def presence_questions(tour_dir: str | Path) -> list[PresenceQuestion]:
    """Present and absent questions of one generated tour (deterministic)."""
    root = Path(tour_dir)
    world = json.loads((root / "world.json").read_text())
    seen_tracks: set[str] = set()
    with open(root / "annotations.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                seen_tracks.update(o["gt_track"] for o in json.loads(line).get("objects", []))
    in_world = {o["label"] for o in world["objects"]}
    seen = sorted({o["label"] for o in world["objects"] if o["gt_track"] in seen_tracks})
    world_words = set().union(*(_words(lab) for lab in in_world)) if in_world else set()
    for lab in in_world:
        if lab in CLASSES:
            world_words |= set().union(set(), *(_words(s) for s in CLASSES[lab].synonyms))
    out: list[PresenceQuestion] = []
    for i, lab in enumerate(seen):
        names = [lab, *(CLASSES[lab].synonyms[:MAX_SYNONYMS] if lab in CLASSES else ())]
        for j, name in enumerate(names):
            out.append(PresenceQuestion(TEMPLATES[(i + j) % len(TEMPLATES)].format(name), name, True))
    absent = [c for c in sorted(CLASSES) if c not in in_world and not (_words(c) & world_words)]
    absent += [w for w in OUTSIDE_CATALOG if not (_words(w) & world_words)]
    for i, word in enumerate(absent):
        out.append(PresenceQuestion(TEMPLATES[i % len(TEMPLATES)].format(word), word, False))
    out += [PresenceQuestion(f"where is {j}?", j, False) for j in JUNK]
    return out
