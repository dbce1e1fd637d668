"""What kind of answer a question wants: count, room, existence, attribute, when, duration, route.

Closed-class patterns only ("how many", "which room", "did you see", "what colour", "when did",
"how long", "which way"): they decide the ANSWER TYPE and cut out the phrase that names what the
question is about. What that phrase means is left to retrieval (embeddings, lexicon), as for every
other question. A question none of these patterns fits is an object/place question for the
existing engine (``kind == ""``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from .query import PLACES, RELATION_PREDICATES, place_name, words

# answer types (AskResult.answer_type); "" = the engine's object search / multiple choice
COUNT, ROOM, EXISTENCE, ATTRIBUTE, WHEN, DURATION, ROUTE = (
    "count", "room", "existence", "attribute", "when", "duration", "route")
GRAPH_ONLY = {COUNT, ROOM, EXISTENCE}  # answered from the graph alone, never sent to a model

ATTRIBUTE_WORDS = {"colour": "color", "color": "color", "colored": "color", "coloured": "color",
                   "material": "material", "made of": "material", "made from": "material",
                   "shade": "color", "hue": "color",
                   "size": "size", "big": "size", "large": "size", "shape": "shape", "pattern": "pattern"}
# "around the table" names a neighbourhood, not a containment; scoped like "near"
SCOPE_PREDICATES = ["around", "surrounding", "at"] + [p for p in RELATION_PREDICATES if p not in ("at",)]
_ARTICLES = re.compile(r"^(?:the|a|an|any|some|my|your|our|this|that|these|those|all)\s+", re.I)
_TRAILING = re.compile(r"\s+(?:are|were|is|was|there|do|did|does|have|has|can|could|you|i|we|in total|"
                       r"altogether|in all|today|here|anywhere|at all|in this home|in the home|in the house|"
                       r"in this house|in the building|so far|until now|around|along the way|on the tour|"
                       r"during the tour|on your walk|on the walk)$", re.I)
_COUNT_IMPERATIVE = re.compile(r"^count\s+(?P<noun>.+?)(?:\s+(?:you|i|we)\s+(?:saw|passed|see|seen|noticed))?"
                               r"(?:\s*:?\s*how\s+many)?$", re.I)
_WHICH_WAY_IS = re.compile(r"^which\s+(?:way|direction)\s+(?:is|was)\s+(?P<to>.+?)\s+from\s+(?P<from>.+)$", re.I)
_WHICH_WAY_TO = re.compile(r"which\s+(?:way|direction)\s+(?:is|was)\s+(?:the\s+)?(?P<to>[a-z ]+?)(?:,|$)", re.I)
WHOLE_TOUR = {"home", "house", "building", "apartment", "flat", "place", "total", "all", "tour"}
_COUNT = re.compile(r"^(?:how\s+many|(?:what\s+(?:is|was)\s+)?the\s+(?:total\s+)?number\s+of)\s+(?P<noun>.+?)(?:\s+(?:are|were|is|was|did|do|does|have|has|can|could|"
                    r"there)\b(?P<rest>.*))?$", re.I)
_ROOM = re.compile(r"^(?:in\s+)?(?:which|what)\s+(?:room|part of the (?:house|home|building)|area|place)\s+"
                   r"(?:is|was|are|were|did|do|does|has|had|have|can|could|contains?|holds?)\s+(?P<rest>.+)$", re.I)
_ROOM2 = re.compile(r"^(?:which|what)\s+room\s+(?P<rest>.+)$|"
                    r"^where\s+in\s+(?:the|this)\s+(?:house|home|building|apartment|flat)\s+(?:is|was|are|were)\s+"
                    r"(?P<rest2>.+?)(?:,\s*(?:which|what)\s+room)?$|"
                    r"^(?:the\s+)?room\s+(?:that\s+)?(?P<rest3>.+?)\s+(?:is|was|are|were)\s+(?:in|kept\s+in)$|"
                    r"^(?P<rest4>[a-z ]+?)\s*[:,]\s*(?:which|what)\s+room\s+(?:is|was|are|were)\s+(?:it|they|that)\s+in$", re.I)
_WHERE_PLACE = re.compile(r"^where\s+(?:is|was|are)\s+(?:the\s+)?(?P<place>[a-z ]+?)$", re.I)
_EXIST = re.compile(r"^(?:did|have|had|do)\s+(?:you|we|i)\s+(?:ever\s+)?(?:see|seen|notice|noticed|pass|passed|"
                    r"spot|spotted|find|found|come across|encounter)\s+(?P<rest>.+)$|"
                    r"^(?:is|was|are|were)\s+there\s+(?P<rest2>.+)$|"
                    r"^(?:does|did)\s+(?:the|this)\s+(?:house|home|room|place|kitchen|building|office)\s+"
                    r"(?:have|has|contain)\s+(?P<rest3>.+)$", re.I)
_ATTR = re.compile(r"^(?:what|which)\s+(?:(?:colou?r|shade|hue|material|size|shape|pattern)(?:\s+(?:is|was|are|were))?|"
                   r"(?:is|was|are|were))\s+(?P<rest>.+?)(?:\s+made\s+(?:of|from))?$", re.I)
_ATTR_OF = re.compile(r"^(?:what\s+(?:is|was|are|were)\s+)?the\s+(?P<attr>colou?r|shade|material|size|shape)\s+of\s+"
                      r"(?P<rest>.+)$", re.I)
_WHEN = re.compile(r"^(?:when|at what time|what time)\s+(?:did|do|was|were|have|had)\s+(?:you|we|i)\s+"
                   r"(?P<rest>.+)$", re.I)
_HOW_LONG = re.compile(r"^how\s+long\s+(?:did|were|was|have|had)\s+(?:you|we|i)\s+(?P<rest>.+)$", re.I)
_ROUTE = re.compile(r"which\s+way|how\s+(?:do|can|could|should|would)\s+(?:i|we)\s+(?:get|go|walk)\s+(?:back\s+)?to\b|"
                    r"how\s+(?:do|can|could|should|would)\s+(?:i|we)\s+reach\b|"
                    r"how\s+(?:do|can|could|should|would)\s+(?:i|we)\s+(?:get|go|walk)\s+from\b.+\bto\b|"
                    r"\bway\s+to\s+(?:the|get\s+to)\b|\bway\s+from\b.+\bto\b|directions?\s+to|which\s+direction|should\s+i\s+turn|path\s+to\s+the", re.I)
# not things: "is there room on the table", "which room do these images come from"
NOT_A_THING = re.compile(r"^(?:room|space|enough room|enough space|anything|something|any|it)$|\b(?:images?|pictures?|"
                         r"photos?|shown|this|these|different)\b", re.I)
_ROUTE_TO = re.compile(r"\b(?:to|reach)\s+(?:go\s+to\s+|get\s+to\s+)?(?:the\s+)?(?P<to>[a-z ]+?)(?:\s+from\b|,|$)", re.I)
_ROUTE_FROM = re.compile(r"\bfrom\s+(?:the\s+)?(?P<from>[a-z ]+?)(?:,|\s+which\b|\s+how\b|\s+to\b|$)|"
                         r"\b(?:enter|come in|coming in|start|starting|am)\s+(?:the\s+\w+\s+)?(?:through|at|in|from|near)\s+"
                         r"(?:the\s+)?(?P<from2>[a-z ]+?)(?:,|\s+which\b|\s+how\b|$)", re.I)
_LAST = re.compile(r"\b(?:last|latest|most recently|recently)\b", re.I)
_FIRST = re.compile(r"\b(?:first|earliest|initially)\b", re.I)
_LEAVE = re.compile(r"^(?:leave|left|exit|exited|go out of|get out of|come out of)\s+(?P<place>.+)$", re.I)
_ENTER = re.compile(r"^(?:first\s+)?(?:enter|entered|arrive at|arrived at|arrive in|arrived in|reach|reached|"
                    r"get to|got to|go into|went into|come into|came into)\s+(?P<place>.+)$", re.I)
_SEE = re.compile(r"^(?:(?:first|last|most recently)\s+)?(?:see|saw|seen|notice|noticed|pass|passed|spot|spotted|"
                  r"find|found|come across|came across|encounter|encountered)\s+(?P<thing>.+?)(?:\s+(?:last|first))?$", re.I)
_SUBJECT_VERB = re.compile(r"^(?:you|i|we)\s+(?:ever\s+)?(?:see|saw|seen|notice|noticed|pass|passed|spot|spotted|"
                           r"find|found|count|counted)\b\s*", re.I)
# "benches you came across", "chairs you spotted around the table": the seeing is not part of the thing
_SEEN_CLAUSE = re.compile(r"\s+(?:that\s+|which\s+)?(?:you|i|we)\s+(?:have\s+|had\s+|ever\s+)?(?:saw|see|seen|spotted|spot|"
                          r"passed|pass|noticed|notice|came across|come across|found|find|encountered|counted)\b", re.I)
# how people wrap a question: politeness, "tell me", "do you remember seeing", contractions
_CONTRACTIONS = {"what's": "what is", "where's": "where is", "i'm": "i am", "it's": "it is", "how's": "how is",
                 "there's": "there is", "that's": "that is", "we've": "we have", "you've": "you have",
                 "i've": "i have", "which's": "which is", "who's": "who is"}
_WRAPPERS = [re.compile(p, re.I) for p in (
    r"^(?:please|ok|okay|hey|so|now|and|robot)\s*,?\s+",
    r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell\s+me|say|let\s+me\s+know|remind\s+me)\s+",
    r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?=count\b)",
    r"^(?:do\s+you\s+know|tell\s+me|i\s+(?:want|would\s+like|need)\s+to\s+know|i\s+wonder|remind\s+me)\s+",
    r"^(?:roughly|approximately|about|exactly|so)\s+(?=how\s+many\b)",
    r",?\s+please$")]
_REMEMBER = re.compile(r"^(?:do|did|can)\s+(you|we|i)\s+(?:remember|recall)\s+(?:seeing|noticing|passing|spotting|"
                       r"finding|coming across)\b", re.I)
_IN_PLACE = re.compile(r"^(?:(?:in|inside|at)\s+)(?P<place>.+?)(?:\s+for)?$", re.I)


@dataclass
class TypedQuestion:
    kind: str  # one of the answer types above, "" for the engine's own types
    subject: str = ""  # the thing asked about ("chairs", "exercise equipment"), "" if a place
    place: str = ""  # a place the question scopes to or asks about ("kitchen")
    scope_predicate: str = ""  # "around" / "on" / ... for "how many chairs around the table"
    scope_ref: str = ""  # "dining table"
    attribute: str = ""  # color | material | size | shape | pattern
    cue: str = ""  # when: first | last; events: leave | enter | see
    route_from: str = ""
    route_to: str = ""
    notes: list[str] = field(default_factory=list)


def _clean(phrase: str) -> str:
    p = " ".join(words(phrase.replace("?", " ")))
    prev = None
    while p != prev:
        prev = p
        p = _ARTICLES.sub("", p).strip()
        p = _TRAILING.sub("", p).strip()
    return p


def _split_scope(phrase: str, known_places: Collection[str] = ()) -> tuple[str, str, str, str]:
    """'chairs around the dining table' -> ('chairs', 'around', 'dining table', '');
    'mugs in the kitchen' -> ('mugs', '', '', 'kitchen'): a place by ``query.place_name`` (the
    memory's ``known_places`` included), "in the guest bedroom" -> 'bedroom'."""
    toks = phrase.split()
    for i in range(1, len(toks)):
        for pred in SCOPE_PREDICATES:
            n = len(pred.split())
            if toks[i:i + n] == pred.split():
                head = " ".join(toks[:i])
                ref = _clean(" ".join(toks[i + n:]))
                if not ref:
                    continue
                if ref in WHOLE_TOUR:  # "in the house", "in this home": the whole walk
                    return _clean(head), "", "", ""
                place = place_name(ref, known_places)
                if place:
                    return _clean(head), "", "", place
                return _clean(head), pred, ref, ""
    return _clean(phrase), "", "", ""


def _place_word(phrase: str, known_places: set[str]) -> str:
    return place_name(_clean(phrase), known_places)


def normalise(question: str) -> str:
    """Lower case, one line: contractions spelled out, sentence breaks as commas, and the
    wrapping people put around a question ("Could you tell me ...", "Do you remember seeing
    ...", "..., please") taken off, so that the patterns below see the question itself."""
    low = " ".join(question.strip().rstrip("?.! ").lower().replace("\u2019", "'").split())
    low = " ".join(_CONTRACTIONS.get(w, w) for w in low.split(" "))
    low = re.sub(r"\s*[?.!;]\s+", ", ", low)
    prev = None
    while prev != low:
        prev = low
        for w in _WRAPPERS:
            low = w.sub("", low).strip()
        low = _REMEMBER.sub(r"did \1 see", low)
    return low


def classify(question: str, known_places: set[str] = frozenset()) -> TypedQuestion:  # type: ignore[assignment]
    """The answer type a question asks for and the phrases it is about. ``known_places``: the
    kinds of place in memory (keyframe places), so "where is the patio" is a place question
    in a memory that has a patio."""
    low = normalise(question)
    places = {p.lower() for p in known_places} | PLACES
    m = _WHICH_WAY_IS.match(low)
    if m:
        return TypedQuestion(ROUTE, route_to=_clean(m.group("to")), route_from=_clean(m.group("from")))
    if _ROUTE.search(low):
        to = _ROUTE_TO.search(low.split("which way", 1)[-1] if "which way" in low else low)
        frm = _ROUTE_FROM.search(low)
        to = to or _WHICH_WAY_TO.search(low)
        t = TypedQuestion(ROUTE, route_to=_clean(to.group("to")) if to else "")
        if frm:
            t.route_from = _clean(frm.group("from") or frm.group("from2") or "")
        if t.route_to:
            return t
    m = _COUNT.match(low) or _COUNT_IMPERATIVE.match(low)
    if m:
        noun = _SEEN_CLAUSE.sub("", m.group("noun"))
        rest = _SUBJECT_VERB.sub("", (m.groupdict().get("rest") or "").strip())
        # "how many chairs around the table are there": the scope may sit in the noun phrase
        subject, pred, ref, place = _split_scope(_clean(noun) + (" " + rest if rest else ""), places)
        subject = _clean(subject.split(" did ")[0])
        if subject and not NOT_A_THING.search(subject) and "colo" not in subject:
            return TypedQuestion(COUNT, subject=subject, scope_predicate=pred, scope_ref=ref, place=place)
    m = _HOW_LONG.match(low)
    if m:
        ip = _IN_PLACE.match(_clean(m.group("rest")).replace(" for", ""))
        rest = _clean(m.group("rest"))
        rest = re.sub(r"^(?:in|inside|at)\s+", "", rest)
        rest = re.sub(r"\s+for$", "", rest)
        return TypedQuestion(DURATION, place=_clean(ip.group("place")) if ip else rest)
    m = _ATTR_OF.match(low)
    if m:
        return TypedQuestion(ATTRIBUTE, subject=_clean(m.group("rest")), attribute=ATTRIBUTE_WORDS[m.group("attr")])
    m = _ATTR.match(low)
    if m:
        attr = next((v for k, v in ATTRIBUTE_WORDS.items() if re.search(rf"\b{k}\b", low)), "")
        if attr:
            rest = re.sub(r"^(?:did|does|do)\s+", "", m.group("rest"))
            return TypedQuestion(ATTRIBUTE, subject=_clean(re.sub(r"\bmade\s+(?:of|from)\b", "", rest)),
                                 attribute=attr)
    m = _ROOM.match(low) or _ROOM2.match(low)
    if m:
        rest = _clean(next(g for g in m.groups() if g))
        rest = re.sub(r"^(?:(?:this|the)?\s*(?:home|house|building|apartment|flat|office)\s+)?(?:have|has|contain|contains|hold|holds|"
                      r"see|saw|find|found|notice|noticed)\s+", "", rest)
        rest = re.sub(r"^(?:you|i|we)\s+(?:see|saw|find|found|notice|noticed|keep|put)\s+", "", rest)
        # "which room was I in when I first noticed the waste basket": the thing is the one seen
        rest = re.sub(r"^(?:you|i|we)\s+(?:in|at)\s+(?:when|as|while)\s+(?:you|i|we)\s+(?:(?:first|last|most recently)\s+)?"
                      r"(?:see|saw|seen|notice|noticed|pass|passed|spot|spotted|find|found|come across|came across|"
                      r"encounter|encountered|walked past|walk past)\s+", "", rest)
        rest = re.sub(r"\s+(?:in|located|kept|found|seen|placed)$", "", rest)
        if rest and not NOT_A_THING.search(rest):
            return TypedQuestion(ROOM, subject=_clean(rest))
    m = _WHERE_PLACE.match(low)
    if m and _place_word(m.group("place"), places):
        return TypedQuestion(ROOM, place=_place_word(m.group("place"), places))
    m = _EXIST.match(low)
    if m:
        rest = _clean(m.group("rest") or m.group("rest2") or m.group("rest3") or "")
        subject, pred, ref, place = _split_scope(rest)
        if subject and not NOT_A_THING.search(subject):
            return TypedQuestion(EXISTENCE, subject=subject, scope_predicate=pred, scope_ref=ref, place=place)
    m = _WHEN.match(low)
    if m:
        rest = m.group("rest").strip()
        cue = "first" if _FIRST.search(rest) else "last" if _LAST.search(rest) else ""
        rest = re.sub(r"\bfor\s+the\s+(?:first|last|very\s+first|very\s+last)\s+time\b", "", rest)
        rest = re.sub(r"\b(?:first|last|most recently|recently)\b", "", rest).strip()
        rest = " ".join(rest.split())
        lv = _LEAVE.match(rest)
        if lv:
            return TypedQuestion(WHEN, place=_clean(lv.group("place")), cue="leave")
        en = _ENTER.match(rest)
        if en:
            return TypedQuestion(WHEN, place=_clean(en.group("place")), cue="enter")
        se = _SEE.match(rest)
        if se:
            subject, _, _, place = _split_scope(_clean(se.group("thing")))
            return TypedQuestion(WHEN, subject=subject, place=place, cue=cue or "last")
        ip = _IN_PLACE.match(rest)
        if ip:
            return TypedQuestion(WHEN, place=_clean(ip.group("place")), cue="enter")
    return TypedQuestion("")
