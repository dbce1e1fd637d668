"""Query understanding: what the question is about (target), what it is related to, and when.

Offline parsing uses small CLOSED-class word lists only (function words, relation predicates,
time cues, colours/materials/sizes, room words). Open-class meaning (synonyms, paraphrases,
affordances: "cup" ~ "mug", "something to boil water with" ~ kettle) is never a word list: the
extracted phrases are matched to the memory through text embeddings downstream.
With an LLM configured, one decomposition call (JSON schema) replaces the parse; on LLMError the
offline parse is used and the caller says so.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Collection

from ..intent import parse_intent
from ..llm.base import LLM, LLMError, LLMUsage


# Relation predicates, longest first so "next to" wins over "to" and "on top of" over "on".
RELATION_PREDICATES = [
    "on top of", "in front of", "next to", "close to", "to the left of", "to the right of",
    "left of", "right of", "underneath", "beneath", "behind", "beside", "near", "under",
    "above", "below", "inside", "against", "by", "on", "in", "at",
]
SINGLE_WORD_PREDICATES = {p for p in RELATION_PREDICATES if " " not in p}
# Words that complete a verb rather than name what it acts on ("put *away* my jacket", "sit *down*")
PARTICLES = SINGLE_WORD_PREDICATES | {"up", "down", "away", "out", "off", "back", "over", "around"}
# A verb that asks for a place to have something done, not for the thing ("where can I have a meal?")
LIGHT_VERBS = ("have",)
PREDICATE_CANON = {"on top of": "on", "beneath": "under", "underneath": "under", "below": "under",
                   "beside": "next to", "by": "next to", "close to": "near", "inside": "in"}
TIME_CUES = {
    "first": "first", "earliest": "first", "initially": "first", "beginning": "first",
    "last": "last", "latest": "last", "finally": "last", "recently": "last", "end": "last",
    "after": "after", "before": "before", "when": "when", "while": "when", "during": "when",
    "leaving": "after", "left": "after", "entering": "when", "passing": "when",
}
COLORS = {"red", "green", "blue", "yellow", "orange", "purple", "pink", "brown", "black", "white",
          "gray", "grey", "silver", "gold", "beige", "teal", "cyan", "magenta"}
MATERIALS = {"wooden", "wood", "metal", "metallic", "steel", "plastic", "glass", "ceramic",
             "fabric", "leather", "paper", "stone", "concrete", "cardboard", "marble", "rubber"}
SIZES = {"small", "large", "big", "tiny", "huge", "tall", "short", "medium", "little"}
PLACES = {"kitchen", "office", "lobby", "corridor", "hallway", "hall", "bedroom", "bathroom",
          "living room", "dining room", "garage", "lab", "meeting room", "store", "shop",
          "entrance", "reception", "cafeteria", "storage", "room"}
FUNCTION_WORDS = set("""
a an the this that these those there here it its is are was were be been being am do did does
done i me my we our you your he she they them their what which who whom whose where when why how
see saw seen find found look looked show shown notice noticed pass passed go went going get got
can could would should will shall may might must have has had of to for from with without into
onto upon about as and or but not no any some something anything thing things object objects
place spot one ones kind sort type near just only also very really please tell me us robot
way while during then than so if else right exactly time times colour color made material
""".split())
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# "The media console: which room was it in?": a thing named first (a determiner and at most five
# words before the colon), then asked about as "it"; read as "which room was the media console in?".
# Without this the colon is lost and "console" and "room" meet as a kind of place, "console room".
FRONTED_RE = re.compile(r"^\s*((?:the|a|an|my|our|your|that|this)(?:\s+[^\s:?!.]+){1,5})\s*:\s*(.+)$", re.I)
IT_RE = re.compile(r"\bit\b", re.I)
# "Where can I sit to put on my shoes?": a question for a place to DO something. Its words after
# the subject are one activity ("put on", "work on" are verbs with particles, not relations).
ACTIVITY_RE = re.compile(r"^\s*where\s+(?:can|could|should|would|might|do)\s+(?:i|we)\s+(.+)$", re.I)
# "A comfy spot to *read a book*", "a good place to *do paperwork*": a place named only by what is
# done there asks for the activity, not for a thing (the book)
PLACE_FOR_RE = re.compile(r"\b(?:spot|place|somewhere|anywhere|space)\s+(?:to|where\s+(?:i|we|you)\s+(?:can|could))\s+(.+)$",
                          re.I)
# "Where do books get *stored*?", "where are coats hung?": a passive of things named without a
# determiner (any books, not "the books") asks for the use (storing books), not for where they are
PASSIVE_RE = re.compile(r"^\s*where\s+(?:(?:do|does|did|should|would|can|could|will|might)\s+(.+?)\s+(?:get|be)"
                        r"|(?:are|is|were|was)\s+(.+?))\s+([a-z]+)\s*[?.!]*\s*$", re.I)
PARTICIPLE_RE = re.compile(r"[a-z]+(?:ed|en|wn|ung|ept|ot|ut)$")  # regular and common irregular forms
# (stored, hidden, thrown, hung, kept, got, put)
SIMULTANEOUS = ("while",)  # in an activity question, "while *tying my laces*" is done at once: no time
@dataclass
class TimeCue:
    cue: str  # first | last | after | before | when
    ref: str = ""  # the event/object it is relative to ("the kitchen", "the sofa"), if any
    place: str = ""  # set when ref is a kind of place ("after leaving the kitchen")
    nth: int = 0  # "the second time": 2 (0 = any)


@dataclass
class RelationCue:
    predicate: str  # canonical predicate ("on", "next to", ...)
    ref: str  # the related entity phrase
    attributes: list[str] = field(default_factory=list)  # its colour/material/size words ("the black chair")


@dataclass
class ParsedQuery:
    text: str
    target: str = ""  # phrase naming what is asked about ("" for "what was on the counter?")
    entities: list[str] = field(default_factory=list)  # every entity phrase, target first
    attributes: list[str] = field(default_factory=list)  # colour/material/size words of the target
    relations: list[RelationCue] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    time: list[TimeCue] = field(default_factory=list)
    source: str = "offline"  # offline | llm

    def search_text(self) -> str:
        """What the embedding search looks for: the target with its attributes, else the
        whole question without function words (keeps paraphrases like 'boil water with')."""
        if self.target:
            return " ".join(dict.fromkeys(self.attributes + [self.target]))
        return content_text(self.text) or self.text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def words(text: str) -> list[str]:
    return WORD_RE.findall(text.lower())


def content_text(text: str) -> str:
    return " ".join(w for w in words(text) if w not in FUNCTION_WORDS and w not in TIME_CUES
                    and w not in ORDINALS)


def singular(word: str) -> str:
    """Crude English singular for label lookup (closed rule set, not a synonym list)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def validate_question(question: Any, max_chars: int) -> tuple[str, str]:
    """(cleaned question, error message or ""). Over-long questions are an error, not truncated:
    a silently truncated question could drop the part that matters."""
    if not isinstance(question, str):
        return "", "question must be a string"
    q = " ".join(question.split())
    if not q:
        return "", "empty question: ask about something the robot may have seen"
    if len(q) > max_chars:
        return "", (f"question too long ({len(q)} characters; the limit is {max_chars}, ask.max_question_chars): "
                    "ask one short question")
    return q, ""


SUBJECTS = {"i", "we", "you", "he", "she", "it", "they"}


def _content(word: str) -> bool:
    return word not in FUNCTION_WORDS and word not in PLACES and word not in TIME_CUES and word not in ORDINALS


def _kept_noun(tokens: list[str], i: int) -> bool:
    """A function word that is a noun here: "can" after a content word with no subject after it
    ("the trash can", not "where can I", "which room can we"), and "time" as what a verb acts on
    ("something that shows the time", not "the first time", "at the time")."""
    t = tokens[i]
    if t == "can":
        return i > 0 and _content(tokens[i - 1]) and (i + 1 == len(tokens) or tokens[i + 1] not in SUBJECTS)
    return (t == "time" and i > 1 and tokens[i - 1] == "the" and _content(tokens[i - 2])
            and tokens[i + 1:i + 2] != ["time"])  # "the second time": parse_offline made it "the time time"


def place_name(phrase: str, known: Collection[str] = ()) -> str:
    """The kind of place a phrase names, "" when it names none: one of PLACES or of ``known`` (the
    memory's keyframe places) as written, any "<word> room" ("laundry room", "kids room"), or one
    modifier before a place ("guest bedroom" -> "bedroom", so that it matches the memory's)."""
    p = " ".join(phrase.lower().split())
    places = PLACES | {k.lower() for k in known}
    toks = p.split()
    if p in places:
        return p
    if len(toks) == 2 and toks[1] == "room":
        return p
    if len(toks) >= 2 and " ".join(toks[1:]) in places and toks[-1] != "room":
        return " ".join(toks[1:])
    return ""


def _place_span(tokens: list[str], known: Collection[str]) -> tuple[str, list[str]]:
    """A place named inside a span, as a whole phrase: the span's last words ("after I left the
    living room") or its first ones before a thing ("the living room lamp"): (place, the span
    without it); ("", span) when it names none as a phrase (single place words are left to
    ``_phrase``)."""
    content = [i for i, t in enumerate(tokens) if t not in FUNCTION_WORDS]
    for n in (3, 2, 1):  # the longest place at the end of the span
        if len(content) >= n:
            idx = content[-n:]
            place = place_name(" ".join(tokens[i] for i in idx), known)
            if place and (n > 1 or place not in PLACES):
                return place, [t for i, t in enumerate(tokens) if i not in idx]
    multi = {p for p in PLACES | {k.lower() for k in known} if " " in p}
    for n in (3, 2):  # "the dining room table": a place that opens the span
        if len(content) > n and " ".join(tokens[i] for i in content[:n]) in multi:
            return " ".join(tokens[i] for i in content[:n]), [t for i, t in enumerate(tokens) if i not in content[:n]]
    return "", tokens


def _phrase(tokens: list[str], known: Collection[str] = ()) -> tuple[str, list[str], list[str]]:
    """Content words of a span -> (entity phrase, attribute words, place words)."""
    place, tokens = _place_span(tokens, known)
    attrs = [t for t in tokens if t in COLORS or t in MATERIALS or t in SIZES]
    places = [place] * bool(place) + [t for t in tokens if t in PLACES]
    keep = [t for i, t in enumerate(tokens)
            if _kept_noun(tokens, i) or (_content(t) and t not in attrs and not t.isdigit())]
    return " ".join(keep), attrs, places


def parse_offline(question: str, known_places: Collection[str] = ()) -> ParsedQuery:
    """The question's parts without a model. ``known_places``: the kinds of place in memory
    (keyframe places), so "the lamp in the study" names a place where the memory has a study."""
    pq = ParsedQuery(text=question)
    # "Take me to the easy chair": a command names its target; parse it as "where is" it
    intent = parse_intent(question)
    if intent.kind == "goto":
        question = f"Where is {intent.text}?"
    fronted = FRONTED_RE.match(question)
    if fronted and IT_RE.search(fronted.group(2)):
        question = IT_RE.sub(lambda _m: fronted.group(1), fronted.group(2), count=1)
    toks = words(question)
    # "the second time": an ordinal before "time" counts occurrences, it is not a time cue
    nth = 0
    for i in range(len(toks) - 1):
        if toks[i] in ORDINALS and toks[i + 1] in ("time", "times"):
            nth = ORDINALS[toks[i]]
            toks[i] = "time"
    # split into segments at relation predicates and time cues
    segments: list[tuple[str, list[str]]] = [("head", [])]
    time_attrs: dict[str, list[str]] = {}  # time-cue phrase -> its colour/material/size words
    i = 0
    while i < len(toks):
        matched = None
        for pred in RELATION_PREDICATES:
            n = len(pred.split())
            if toks[i:i + n] == pred.split():
                matched = pred
                break
        if matched:
            segments.append(("rel:" + PREDICATE_CANON.get(matched, matched), []))
            i += len(matched.split())
            continue
        if toks[i] in TIME_CUES:
            segments.append(("time:" + TIME_CUES[toks[i]], []))
            i += 1
            continue
        segments[-1][1].append(toks[i])
        i += 1
    for kind, span in segments:
        phrase, attrs, places = _phrase(span, known_places)
        pq.places.extend(p for p in places if p not in pq.places)
        if kind == "head":
            if phrase:
                pq.target, pq.attributes = phrase, attrs
        elif kind.startswith("rel:"):
            pred = kind[4:]
            if phrase and phrase not in PLACES:
                pq.relations.append(RelationCue(pred, phrase, attrs))
            elif not phrase and not pq.target and not attrs:
                continue
        else:
            place = next((p for p in places), "")
            pq.time.append(TimeCue(kind[5:], phrase, place, nth if place else 0))
            if phrase and attrs:
                time_attrs.setdefault(phrase, attrs)
    # a departure place is when, not where; "which room" names no place
    timed = {t.place for t in pq.time if t.place}
    pq.places = [p for p in pq.places if p not in timed and p != "room"]
    # "which room was I in when I first saw the lamp": the thing is named after the time cue
    if not pq.target:
        pq.target = next((t.ref for t in pq.time if t.ref), "")
        pq.attributes = pq.attributes or time_attrs.get(pq.target, [])  # "... the *black* bookcase"
    # "something to boil water with": the verb phrase is the target description (unless the
    # question is only about a place or a departure: "what did I see in the office?")
    timed_place = any(t.place for t in pq.time)
    if not pq.target and not pq.relations and not pq.places and not timed_place:
        pq.target = content_text(question)
    activity = ACTIVITY_RE.match(question)
    if activity and pq.time and _simultaneous(words(activity.group(1))):
        pq.time = []  # "where could I sit while tying my laces": one activity, no time cue
    if not activity and pq.target:
        _use_phrasing(pq, question)
    if activity and not pq.time:
        verb = next(iter(words(activity.group(1))), "")
        if verb and (verb not in FUNCTION_WORDS or verb in LIGHT_VERBS):  # "where can I find/see X" asks for X
            phrase, attrs, places = _phrase(words(activity.group(1)), known_places)
            toks = [verb] * (verb in LIGHT_VERBS and bool(phrase)) + phrase.split()
            while toks and toks[-1] in SINGLE_WORD_PREDICATES:  # "wash hands in [the bathroom]"
                toks.pop()
            pq.target, pq.attributes, pq.relations = " ".join(toks) or pq.target, attrs, []
            pq.places = [p for p in places if p != "room"] or pq.places
    # "where did I see a mug on the table": if head had no entity, the first relation ref
    # remains a reference, and the answer is whatever stands in that relation to it.
    pq.entities = [e for e in [pq.target] + [r.ref for r in pq.relations] + [t.ref for t in pq.time]
                   if e]
    pq.entities = list(dict.fromkeys(pq.entities))
    return pq


def _simultaneous(tokens: list[str]) -> bool:
    """An activity's words with one ``SIMULTANEOUS`` word, followed by a verb in -ing ("sit while
    *tying*"), and no other time cue: the two are one activity."""
    cues = [i for i, t in enumerate(tokens) if t in TIME_CUES]
    return (len(cues) == 1 and tokens[cues[0]] in SIMULTANEOUS and cues[0] + 1 < len(tokens)
            and tokens[cues[0] + 1].endswith("ing") and cues[0] > 0)


def _use_phrasing(pq: ParsedQuery, question: str) -> None:
    """A question that names a use by its phrasing, not a thing: a place for doing something
    (``PLACE_FOR_RE``: "a comfy spot to read a book" -> "read book", "a good place to do
    paperwork" -> "do paperwork") or a passive of things without a determiner (``PASSIVE_RE``:
    "where do books get stored" -> "stored books"). The verb stays first (as the activity's)."""
    toks: list[str] = []
    place = PLACE_FOR_RE.search(question)
    passive = PASSIVE_RE.match(question)
    if place:
        rest = words(place.group(1))
        if rest and rest[0] not in SUBJECTS and (rest[0] not in FUNCTION_WORDS or rest[0] in LIGHT_VERBS + ("do",)):
            toks = rest[:1] + _phrase(rest[1:])[0].split()
    elif passive:
        things = words(passive.group(1) or passive.group(2) or "")
        verb = passive.group(3).lower()
        if (things and things[0] not in FUNCTION_WORDS and verb not in FUNCTION_WORDS
                and (passive.group(1) or PARTICIPLE_RE.fullmatch(verb))):
            toks = [verb] + _phrase(things)[0].split()
    if len(toks) > 1 and not pq.relations and not pq.time:
        pq.target, pq.attributes = " ".join(toks), []


DECOMPOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "target": {"type": "string"},
        "attributes": {"type": "array", "items": {"type": "string"}},
        "relations": {"type": "array", "items": {
            "type": "object", "properties": {"predicate": {"type": "string"},
                                             "ref": {"type": "string"}},
            "required": ["predicate", "ref"]}},
        "places": {"type": "array", "items": {"type": "string"}},
        "time": {"type": "array", "items": {
            "type": "object", "properties": {"cue": {"type": "string",
                                                     "enum": ["first", "last", "after", "before",
                                                              "when"]},
                                             "ref": {"type": "string"}},
            "required": ["cue"]}},
    },
    "required": ["target"],
}

DECOMPOSE_PROMPT = """You decompose a question a person asks a robot about what it saw on a tour.
Return JSON: target = short noun phrase of the thing asked about (empty if the question asks
"what" is somewhere); attributes = its colour/material/size words; relations = spatial relations
of the target to other things (predicate like "on", "next to", "under", "in"; ref = the other
thing); places = kinds of room mentioned; time = time cues (first/last/after/before/when, with the
event or thing they refer to).
Question: """


def decompose(question: str, llm: LLM | None, usage: LLMUsage | None = None,
              known_places: Collection[str] = ()) -> tuple[ParsedQuery, str]:
    """(parsed query, note). With an LLM: one call; on LLMError or a useless reply, the offline
    parse and a note saying so. ``known_places``: see parse_offline."""
    if llm is None:
        return parse_offline(question, known_places), ""
    try:
        out = llm.generate_json(DECOMPOSE_PROMPT + question, DECOMPOSE_SCHEMA, usage=usage)
        pq = ParsedQuery(text=question, source="llm")
        pq.target = str(out.get("target", "")).strip().lower()
        pq.attributes = [str(a).lower() for a in out.get("attributes", []) if str(a).strip()]
        pq.relations = [RelationCue(PREDICATE_CANON.get(str(r["predicate"]).lower(),
                                                        str(r["predicate"]).lower()),
                                    str(r["ref"]).lower())
                        for r in out.get("relations", []) if str(r.get("ref", "")).strip()]
        pq.places = [str(p).lower() for p in out.get("places", []) if str(p).strip()]
        pq.time = [TimeCue(str(t["cue"]), str(t.get("ref", "")).lower()) for t in out.get("time", [])]
        if not pq.target and not pq.relations:
            raise LLMError("decomposition named neither a target nor a relation")
        pq.entities = list(dict.fromkeys(e for e in [pq.target] + [r.ref for r in pq.relations] if e))
        return pq, ""
    except (LLMError, KeyError, TypeError, AttributeError, ValueError) as e:
        return parse_offline(question, known_places), f"LLM query decomposition failed ({e}); used the offline parser"
