"""Benchmark questions with ground truth, derived from a simulated tour's annotations.

Every answer is checked against what the rendered frames actually show: ``frames`` are the
intervals of consecutive frames in which the answer is visible, targets must have been seen,
and names are chosen so that they pick out exactly one seen object (adding colour, material or
the room only when needed). Labels are swapped for synonyms often, so that string matching is
not enough to retrieve the answer.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from vlkng_ros.eval.sim.catalog import (ACTION_PHRASES, AFFORDANCE_PHRASES, ALL_CLASSES, CLASSES, COLORS,
                                        VARIED_SYNONYMS)
from vlkng_ros.eval.sim.world import SimObject, World

TYPES = ["object_search", "scene_description", "spatial_relation", "action_place", "temporal",
         "count", "room", "existence", "attribute", "when", "route"]
V1_TYPES = TYPES[:5]
SHARE = {"object_search": 0.17, "scene_description": 0.1, "spatial_relation": 0.1,
         "action_place": 0.08, "temporal": 0.1, "count": 0.09, "room": 0.08, "existence": 0.1,
         "attribute": 0.07, "when": 0.06, "route": 0.05}
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
MATERIAL_FORMS = {"wood": ["wood", "wooden"], "metal": ["metal", "metallic", "steel"], "glass": ["glass"],
                  "plastic": ["plastic"], "fabric": ["fabric", "cloth"], "ceramic": ["ceramic", "porcelain"],
                  "leather": ["leather"], "stone": ["stone"], "paper": ["paper"]}
COLOR_FORMS = {"gray": ["gray", "grey"], "navy": ["navy", "navy blue", "dark blue"], "silver": ["silver", "grey", "gray"]}
MATERIALS = ["wood", "metal", "glass", "plastic", "fabric", "ceramic", "leather", "stone", "paper"]
LETTERS = "ABCD"
VISIT_GAP_S = 2.0  # visibility gaps up to this long do not end a sighting (first-sighting questions)
# Generalisation worlds (World.varied) ask each open type in more ways than the tuned worlds.
VARIED_PHRASES: dict[str, list[str]] = {
    "count": ["What's the number of {} you came across?", "Tell me how many {} you spotted.",
              "How many {} have you seen so far?", "Roughly how many {} were around?"],
    "count_scoped": ["Could you count the {} {} the {}?", "What is the number of {} {} the {}?"],
    "room": ["Where in the house is the {}? Which room?", "Tell me the room the {} is in.",
             "The {}: which room was it in?", "Which part of the house has the {}?"],
    "existence": ["Do you remember seeing {a} {w}?", "Did we come across {a} {w}?", "Have you spotted {a} {w}?",
                  "Does the house have {a} {w}?"],
    "color": ["Tell me the colour of the {}.", "What was the colour of the {}?", "What shade was the {}?"],
    "material": ["What's the {} made from?", "What is the material of the {}?"],
    "first": ["At what time did you first spot the {}?", "When did we first come across the {}?"],
    "last": ["What time did you last notice the {}?", "When did we see the {} for the last time?"],
    "route": ["I'm in the {a}. How do I reach the {b}?", "Can you tell me the way from the {a} to the {b}?",
              "Starting at the {a}, which direction is the {b}?"],
}


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


class _Asker:
    def __init__(self, world: World, frames: list[dict[str, Any]], rng: np.random.Generator, fps: float):
        self.world = world
        self.objs = world.by_track()
        self.frames = frames
        self.rng = rng
        self.fps = fps
        self.stamps = [int(f["stamp_ns"]) for f in frames]
        self.places = [f.get("place") for f in frames]
        self.vis: dict[str, list[int]] = defaultdict(list)
        self.area: dict[str, int] = defaultdict(int)
        self.rel_frames: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        for k, f in enumerate(frames):
            for o in f["objects"]:
                self.vis[o["gt_track"]].append(k)
                b = o["bbox"]
                self.area[o["gt_track"]] = max(self.area[o["gt_track"]], (b[2] - b[0]) * (b[3] - b[1]))
            for r in f.get("relations", []):
                self.rel_frames[tuple(r)].append(k)
        self.seen = sorted(self.vis)
        # well seen: several frames and a box of a decent size at least once
        self.good = [t for t in self.seen if len(self.vis[t]) >= 3 and self.area[t] >= 500]

    # -- helpers -------------------------------------------------------------------------------
    def first_visit(self, track: str) -> list[int]:
        """Frames of the first time the object was seen: its first run of frames, continued across
        gaps of up to VISIT_GAP_S (lost behind something for a moment, or glimpsed at the image
        edge just before it came into view) - a one-frame glimpse is not a sighting of its own."""
        idx = sorted(self.vis[track])
        end = 0
        while end + 1 < len(idx) and idx[end + 1] - idx[end] <= 1 + VISIT_GAP_S * self.fps:
            end += 1
        return idx[:end + 1]

    def intervals(self, idx: list[int]) -> list[list[int]]:
        out: list[list[int]] = []
        start = prev = None
        for k in sorted(set(idx)):
            if start is None:
                start = prev = k
            elif k == prev + 1:
                prev = k
            else:
                out.append([self.stamps[start], self.stamps[prev]])
                start = prev = k
        if start is not None:
            out.append([self.stamps[start], self.stamps[prev]])
        return out

    def word(self, label: str) -> str:
        """The label or one of its synonyms (about half the time; generalisation worlds also use
        words the tuned worlds never asked with)."""
        syn = ALL_CLASSES[label].synonyms + (VARIED_SYNONYMS.get(label, ()) if self.world.varied else ())
        if syn and self.rng.random() < 0.5:
            return str(syn[int(self.rng.integers(len(syn)))])
        return label

    def name(self, track: str, allow_color: bool = True, allow_material: bool = True) -> str | None:
        """The shortest wording that picks out ``track`` among every seen object, or None."""
        o = self.objs[track]
        room = self.world.rooms[o.room].kind
        options = [(False, False, False)]
        if allow_color:
            options.append((True, False, False))
        if allow_color and allow_material:
            options.append((True, True, False))
        options += [(allow_color, False, True), (allow_color, allow_material, True)]
        for use_color, use_mat, use_room in options:
            clash = [t for t in self.seen if t != track and self.objs[t].label == o.label
                     and (not use_color or self.objs[t].color == o.color)
                     and (not use_mat or self.objs[t].material == o.material)
                     and (not use_room or self.objs[t].room == o.room)]
            if not clash:
                words = ([o.color] if use_color else []) + ([o.material] if use_mat else []) + [self.word(o.label)]
                text = " ".join(words)
                return f"{text} in the {room}" if use_room else text
        return None

    def short(self, o: SimObject) -> str:
        return f"{_article(o.color)} {o.color} {o.label}"

    def choice(self, correct: str, distractors: list[str]) -> tuple[list[str], str] | None:
        pool = [d for d in dict.fromkeys(distractors) if d != correct]
        if len(pool) < 3:
            return None
        picks = [pool[int(i)] for i in self.rng.permutation(len(pool))[:3]]
        pos = int(self.rng.integers(4))
        opts = picks[:pos] + [correct] + picks[pos:]
        return [f"{LETTERS[i]}. {t}" for i, t in enumerate(opts)], LETTERS[pos]

    def pick(self, phrasings: list[str], varied: str = "") -> str:
        """One of ``phrasings`` (in a generalisation world also one of VARIED_PHRASES[varied])."""
        if varied and self.world.varied:
            phrasings = phrasings + VARIED_PHRASES[varied]
        return phrasings[int(self.rng.integers(len(phrasings)))]

    def question(self, qtype: str, text: str, frames_idx: list[int], targets: list[str],
                 mc: tuple[list[str], str] | None = None, goal: bool = False) -> dict[str, Any] | None:
        frames = self.intervals(frames_idx)
        if not frames:
            return None
        q: dict[str, Any] = {"id": "", "type": qtype, "question": text,
                             "options": mc[0] if mc else None, "answer": mc[1] if mc else None,
                             "frames": frames, "targets": targets}
        if goal and targets:
            o = self.objs[targets[0]]
            q["goal_xy"] = [round(o.x, 3), round(o.y, 3)]
        return q

    # -- question types ------------------------------------------------------------------------
    def object_search(self) -> list[dict[str, Any]]:
        out = []
        templates = ["Where did I see the {}?", "Where was the {}?", "Where can I find the {}?",
                     "Take me to the {}.", "Where did we pass the {}?", "Show me where the {} is."]
        for t in self.good:
            n = self.name(t)
            if n:
                out.append(self.question("object_search", self.pick(templates).format(n), self.vis[t], [t], goal=True))
        for aff, phrasings in AFFORDANCE_PHRASES.items():
            having = [t for t in self.seen if aff in self.objs[t].affordances]
            if len(having) == 1 and having[0] in self.good:
                out.append(self.question("object_search", self.pick(phrasings), self.vis[having[0]], having, goal=True))
        return out

    def scene_description(self) -> list[dict[str, Any]]:
        out = []
        visited_rooms = {r.index for r in self.world.rooms if r.kind in set(self.places)}
        for t in self.good:
            o = self.objs[t]
            room = self.world.rooms[o.room]
            labels_in_room = {x.label for x in self.world.objects if x.room == o.room}
            if room.index in visited_rooms and sum(1 for x in self.good if self.objs[x].label == o.label and self.objs[x].room == o.room) == 1:
                distract = [self.short(self.objs[d]) for d in self.seen if self.objs[d].label not in labels_in_room]
                mc = self.choice(self.short(o), distract)
                if mc:
                    text = self.pick(["Which of these was in the {}?", "What did I see in the {}?",
                                      "Which of these objects is in the {}?"]).format(room.kind)
                    out.append(self.question("scene_description", text, self.vis[t], [t], mc))
            n = self.name(t, allow_color=False)
            if n:
                mc = self.choice(o.color, list(COLORS))
                if mc:
                    text = self.pick(["What color was the {}?", "What colour is the {}?"]).format(n)
                    out.append(self.question("scene_description", text, self.vis[t], [t], mc))
            n = self.name(t, allow_material=False)
            if n and o.material in MATERIALS and self.rng.random() < 0.5:
                mc = self.choice(o.material, MATERIALS)
                if mc:
                    out.append(self.question("scene_description", f"What is the {n} made of?", self.vis[t], [t], mc))
        return out

    def spatial_relation(self) -> list[dict[str, Any]]:
        out = []
        triples = {r: k for r, k in self.rel_frames.items() if len(k) >= 2}
        support_of: dict[tuple[str, str], list[str]] = defaultdict(list)  # (rel, support) -> subjects
        neighbours: dict[str, set[str]] = defaultdict(set)
        for (s, p, o) in triples:
            if p == "next to":
                neighbours[s].add(o)
                neighbours[o].add(s)
            else:
                support_of[(p, o)].append(s)
        for (s, p, o), idx in triples.items():
            subj, obj = self.objs[s], self.objs[o]
            if p == "next to":
                if len(neighbours[o]) != 1:
                    continue
                on = self.name(o)
                if not on:
                    continue
                text = self.pick(["What was next to the {}?", "What did I see beside the {}?"]).format(on)
            else:
                on = self.name(o)
                if not on:
                    continue
                peers = support_of[(p, o)]
                if len(peers) == 1:
                    text = self.pick(["What was {} the {}?", "What did I see {} the {}?"]).format(p, on)
                else:
                    buddies = [b for b in neighbours[s] if b in peers and all(
                        b not in neighbours[x] for x in peers if x != s)]
                    bn = self.name(buddies[0]) if buddies else None
                    if not bn:
                        continue
                    text = f"What was {p} the {on} next to the {bn}?"
                    idx = sorted(set(idx) & set(self.vis[buddies[0]])) or idx
            related = {x for x in neighbours[o]} | {x for (pp, oo), xs in support_of.items() if oo == o for x in xs}
            distract = [self.short(self.objs[d]) for d in self.seen
                        if d not in related and d != o and self.objs[d].label != subj.label]
            mc = self.choice(self.short(subj), distract)
            if mc:
                out.append(self.question("spatial_relation", text, idx, [s], mc))
            if p != "next to":  # "where was X?" -> "on the desk"
                n = self.name(s)
                others = [f"{pp} the {self.objs[oo].label}" for (ss, pp, oo) in triples
                          if pp != "next to" and self.objs[oo].label != obj.label]
                mc = self.choice(f"{p} the {obj.label}", others)
                if n and mc:
                    out.append(self.question("spatial_relation", f"Where exactly was the {n}?", idx, [s], mc))
        return out

    def action_place(self) -> list[dict[str, Any]]:
        out = []
        for aff, phrasings in ACTION_PHRASES.items():
            having = [t for t in self.seen if aff in self.objs[t].affordances]
            if len(having) == 1 and having[0] in self.good:
                for text in phrasings[: 1 + int(self.rng.integers(2))]:
                    out.append(self.question("action_place", text, self.vis[having[0]], having, goal=True))
        return out

    def temporal(self) -> list[dict[str, Any]]:
        out = []
        room_kinds = sorted({r.kind for r in self.world.rooms})
        first = {t: self.vis[t][0] for t in self.good}
        for t in self.good:
            k = first[t]
            place = self.places[k]
            n = self.name(t)
            if not n or not place:
                continue
            mc = self.choice(f"in the {place}", [f"in the {r}" for r in room_kinds])
            if mc:
                idx = self.first_visit(t)
                text = self.pick(["Where was I when I first saw the {}?",
                                  "Which room was I in when I first noticed the {}?"]).format(n)
                out.append(self.question("temporal", text, idx, [t], mc, goal=True))
        # leaving a room: what came into view right after
        leaves: dict[str, list[int]] = defaultdict(list)
        for k in range(1, len(self.places)):
            if self.places[k - 1] and self.places[k] != self.places[k - 1] and self.places[k - 1] != "hallway":
                leaves[self.places[k - 1]].append(k)
        window = int(10 * self.fps)
        for room, ks in leaves.items():
            for nth, k in enumerate(ks[:2]):
                recent = {o["gt_track"] for f in self.frames[max(0, k - int(4 * self.fps)):k] for o in f["objects"]}
                fresh = [t for t in self.good if t not in recent and
                         len([i for i in self.vis[t] if k <= i < k + window]) >= 2]
                if not fresh:
                    continue
                t = min(fresh, key=lambda x: (next(i for i in self.vis[x] if i >= k), -self.area[x]))
                later = {o["gt_track"] for f in self.frames[k:k + 3 * window] for o in f["objects"]}
                distract = [self.short(self.objs[d]) for d in self.seen
                            if d not in later and d not in recent and self.objs[d].label != self.objs[t].label]
                mc = self.choice(self.short(self.objs[t]), distract)
                if not mc:
                    continue
                when = "" if len(ks) == 1 else (" the first time" if nth == 0 else " the second time")
                text = self.pick(["What did I see right after leaving the {}{}?",
                                  "Right after I left the {}{}, what did I see?"]).format(room, when)
                idx = [i for i in self.vis[t] if k <= i < k + window]
                out.append(self.question("temporal", text, idx, [t], mc))
        # which first
        order = sorted(first, key=lambda t: first[t])
        gap = int(10 * self.fps)
        for _ in range(4):
            if len(order) < 2:
                break
            a, b = (order[int(i)] for i in self.rng.choice(len(order), 2, replace=False))
            if abs(first[a] - first[b]) < gap:
                continue
            na, nb = self.name(a), self.name(b)
            if not na or not nb:
                continue
            early = a if first[a] < first[b] else b
            mc = ([f"A. the {na}", f"B. the {nb}"], "A" if early == a else "B")
            idx = self.first_visit(early)
            out.append(self.question("temporal", f"Which did I see first, the {na} or the {nb}?", idx, [early], mc))
        return out


class _AskerV2(_Asker):
    """Open-answer question types of tour-format v2, each phrased several ways."""

    def plural(self, label: str) -> str:
        w = self.word(label)
        if w.endswith(("s", "sh", "ch", "x")):
            return w + "es"
        if w.endswith("y") and w[-2:-1] not in "aeiou":
            return w[:-1] + "ies"
        return w + "s"

    def open_q(self, qtype: str, text: str, frames_idx: list[int], targets: list[str], answers: list[str],
               goal: bool = False) -> dict[str, Any] | None:
        q = self.question(qtype, text, frames_idx, targets, None, goal)
        if q is not None:
            q["answer"], q["answers"] = answers[0], list(dict.fromkeys(answers))
        return q

    def majority_place(self, track: str) -> str | None:
        places = [self.places[k] for k in self.vis[track] if self.places[k]]
        return max(sorted(set(places)), key=places.count) if places else None

    def count(self) -> list[dict[str, Any]]:
        out = []
        by_label: dict[str, list[str]] = defaultdict(list)
        for t in self.seen:
            by_label[self.objs[t].label].append(t)
        for label, tracks in by_label.items():
            if not all(t in self.good for t in tracks):
                continue  # a glimpse may or may not count: no ground truth a person would agree on
            n = len(tracks)
            text = self.pick(["How many {} did you see?", "How many {} were there in total?",
                              "Count the {} you passed: how many?", "How many {} are in this home?"], "count").format(self.plural(label))
            idx = sorted({k for t in tracks for k in self.vis[t]})
            out.append(self.open_q("count", text, idx, tracks, [str(n), NUMBER_WORDS[n] if n < len(NUMBER_WORDS) else str(n)]))
        # scoped: "how many books on the shelf" (what stands on it), "how many chairs around the
        # table" (the chairs set at it: same room, within a metre of its edge)
        around: dict[tuple[str, str], list[str]] = defaultdict(list)
        for o in self.world.objects:
            if o.support and o.gt_track in self.seen and o.support in self.seen:
                around[(o.support, o.support_rel or "on")].append(o.gt_track)
        for anchor in [o for o in self.world.objects if o.label in ("table", "desk") and o.gt_track in self.seen]:
            for o in self.world.objects:
                if o.label == "chair" and o.room == anchor.room and o.gt_track in self.seen and \
                        abs(o.x - anchor.x) <= anchor.hx + 1.0 and abs(o.y - anchor.y) <= anchor.hy + 1.0:
                    around[(anchor.gt_track, "around")].append(o.gt_track)
        for (sup, rel), tracks in around.items():
            labels = {self.objs[t].label for t in tracks}
            if len(labels) != 1 or not all(t in self.good for t in tracks):
                continue
            label = labels.pop()
            n = len(tracks)
            sn = self.name(sup)
            if not sn:
                continue
            text = self.pick(["How many {} are {} the {}?", "How many {} did you see {} the {}?"], "count_scoped").format(
                self.plural(label), rel, sn)
            out.append(self.open_q("count", text, sorted({k for t in tracks for k in self.vis[t]}), tracks,
                                   [str(n), NUMBER_WORDS[n] if n < len(NUMBER_WORDS) else str(n)]))
        return out

    def room(self) -> list[dict[str, Any]]:
        out = []
        for t in self.good:
            place = self.majority_place(t)
            if not place or place != self.world.rooms[self.objs[t].room].kind:
                continue  # seen mostly through a door: the room it is in is not what the frames show
            n = self.name(t)
            if not n or " in the " in n:
                continue
            text = self.pick(["In which room did you see the {}?", "Which room is the {} in?",
                              "What room was the {} in?", "In which room is the {}?"], "room").format(n)
            out.append(self.open_q("room", text, self.vis[t], [t], [place], goal=True))
        return out

    def existence(self) -> list[dict[str, Any]]:
        out = []
        phr = ["Did you see {a} {w}?", "Is there {a} {w} anywhere?", "Have you seen {a} {w}?",
               "Was there {a} {w} in the house?"]
        for t in self.good:
            w = self.word(self.objs[t].label)
            out.append(self.open_q("existence", self.pick(phr, "existence").format(a=_article(w), w=w), self.vis[t], [t], ["yes"]))
        present = {o.label for o in self.world.objects}
        absent = [c for c in sorted(ALL_CLASSES if self.world.varied else CLASSES) if c not in present]
        for label in [absent[int(i)] for i in self.rng.permutation(len(absent))[:4]]:
            w = self.word(label)
            q = {"id": "", "type": "existence", "question": self.pick(phr, "existence").format(a=_article(w), w=w),
                 "options": None, "answer": "no", "answers": ["no"], "frames": [], "targets": [],
                 "expect_found": False}
            out.append(q)
        return out

    def attribute(self) -> list[dict[str, Any]]:
        out = []
        for t in self.good:
            o = self.objs[t]
            n = self.name(t, allow_color=False)
            if n:
                text = self.pick(["What colour was the {}?", "What color is the {}?", "Which colour did the {} have?"],
                                 "color").format(n)
                out.append(self.open_q("attribute", text, self.vis[t], [t], COLOR_FORMS.get(o.color, [o.color])))
            n = self.name(t, allow_material=False)
            if n and o.material in MATERIAL_FORMS and self.rng.random() < 0.6:
                text = self.pick(["What was the {} made of?", "What material is the {}?"], "material").format(n)
                out.append(self.open_q("attribute", text, self.vis[t], [t], MATERIAL_FORMS[o.material]))
        return out

    def when(self) -> list[dict[str, Any]]:
        out = []
        for t in self.good:
            n = self.name(t)
            if not n:
                continue
            if self.rng.random() < 0.5:
                idx = self.first_visit(t)
                text = self.pick(["When did you first see the {}?", "When did I first pass the {}?"], "first").format(n)
                answer = self.stamps[idx[0]]
            else:
                rev = sorted(self.vis[t])[::-1]
                end = 0
                while end + 1 < len(rev) and rev[end] - rev[end + 1] <= 1 + VISIT_GAP_S * self.fps:
                    end += 1
                idx = rev[:end + 1][::-1]
                text = self.pick(["When did you last see the {}?", "When did I last see the {}?"], "last").format(n)
                answer = self.stamps[idx[-1]]
            out.append(self.open_q("when", text, idx, [t], [str(answer)]))
        return out

    def route(self) -> list[dict[str, Any]]:
        out = []
        kinds = [r.kind for r in self.world.rooms]
        unique = {k for k in kinds if kinds.count(k) == 1}
        runs: list[tuple[str, int, int]] = []  # (place, first frame, last frame)
        for k, p in enumerate(self.places):
            if not p:
                continue
            if runs and runs[-1][0] == p:
                runs[-1] = (p, runs[-1][1], k)
            else:
                runs.append((p, k, k))
        pairs: dict[tuple[str, str], list[str]] = {}
        for i, (a, _, a_end) in enumerate(runs):
            if a not in unique:
                continue
            passed: list[str] = []
            for b, b_start, b_end in runs[i + 1:]:
                if b == a:
                    break
                if not passed or passed[-1] != b:
                    passed.append(b)
                if b in unique and b != "hallway" and (a, b) not in pairs:
                    pairs[(a, b)] = list(passed)
                    out.append(self.open_q("route", self.pick([
                        "From the {a}, which way to the {b}?", "How do I get from the {a} to the {b}?",
                        "Which way is the {b} from the {a}?"], "route").format(a=a, b=b),
                        list(range(b_start, b_end + 1)), [], [", ".join(passed)]))
        return out


def make_questions(world: World, frames: list[dict[str, Any]], seed: int, fps: float,
                   minutes: float) -> list[dict[str, Any]]:
    """Questions of every type, about ``48 * sqrt(minutes / 3)`` of them, spread over the types."""
    rng = np.random.default_rng([int(seed), 0x0A5C])
    asker = _AskerV2(world, frames, rng, fps)
    pools = {t: [q for q in getattr(asker, t)() if q is not None] for t in TYPES}
    target = max(len(TYPES), int(round(48 * math.sqrt(max(minutes, 0.05) / 3.0))))
    chosen: dict[str, list[dict[str, Any]]] = {}
    for t in TYPES:  # one per target object and type first, then repeats
        pool = [pools[t][int(i)] for i in rng.permutation(len(pools[t]))]
        seen_text: set[str] = set()
        firsts, rest, used = [], [], set()
        for q in pool:
            if q["question"] in seen_text:
                continue
            seen_text.add(q["question"])
            key = tuple(q["targets"]) or (q["question"],)  # never-seen things: one each
            (rest if key in used else firsts).append(q)
            used.add(key)
        chosen[t] = firsts + rest
    # existence: questions about things never seen take turns with the ones about things seen
    yes = [q for q in chosen["existence"] if q.get("expect_found", True)]
    no = [q for q in chosen["existence"] if not q.get("expect_found", True)]
    chosen["existence"] = [q for pair in zip(yes, no) for q in pair] + yes[len(no):] + no[len(yes):]
    quota = {t: min(len(chosen[t]), max(1, int(round(target * SHARE[t])))) for t in TYPES}
    spare = target - sum(quota.values())
    while spare > 0:
        grew = False
        for t in TYPES:
            if spare > 0 and quota[t] < len(chosen[t]):
                quota[t] += 1
                spare -= 1
                grew = True
        if not grew:
            break
    out: list[dict[str, Any]] = []
    for t in TYPES:
        out += sorted(chosen[t][: quota[t]], key=lambda q: (q["frames"][0][0] if q["frames"] else 0, q["question"]))
    for i, q in enumerate(out, 1):
        q["id"] = f"q{i}"
    return out
