"""Was the thing asked for seen at all? The one place that decides ``found``.

A memory must never answer "found" (with a goal a robot would drive to) for something it did
not see. Retrieval always returns the *closest* objects; the question is whether the closest is
close enough to be the thing asked for, or just the least unrelated thing in the memory
("kettle" -> the plant).

Retrieval fuses many signals (labels, affordances, relations, vectors) and so always finds
*something*; whether that something is the thing named is decided here, on each candidate's own
evidence (its labels and description), by the lexicon's and the embedder's own structure rather
than by a constant fit to one world. ``FoundRule.match``'s readings of one object, and their order,
are one table, ``READINGS`` (docs/ASK.md, "The found decision"): what each reads, and whether it
names the thing, drops or sets labels aside from the later readings, or scores them:

* a label *names* the phrase when it is the phrase, the phrase is its head noun ("table": a
  "coffee table"), or the lexicon calls the label a name for it or a kind of it ("sofa" for
  "couch", a "laundry basket" for "hamper"). The other direction (the phrase is a narrower kind:
  "settee" -> "sofa") counts only when the label's own common senses relate back: "suitcase" is a
  rare sense of "bag", so a bag seen is not a suitcase. A compound the lexicon does not know
  ("bedside table") is not named through its head noun alone (a coffee table is a table too).
  A label that in a common sense is a kind of the phrase a few steps up ("apple": a fruit) names
  it too, and the phrase is looked up in its dictionary form ("WC": "w.c."). So does a label the
  dictionary describes in at least two of the phrase's distinctive definition words, when both are
  kinds of one thing a few steps up (``lexicon.defined_alike``: a parasol, "a handheld collapsible
  source of shade", is an umbrella, "a lightweight handheld collapsible canopy"), and a two-word
  compound the lexicon lacks whose parts name a two-word label's (``_parts_match``: "media
  console" a tv stand: television is a medium, console and stand both small tables). So does a
  label the phrase is a kind of up to ``ANCESTOR_DEPTH`` steps below, in the label's common senses
  (``_narrower_kind``: a fern is a plant three steps up, a bolster a cushion two; a label WordNet
  lacks is read by its head: a houseplant is a "potted plant"), and one a two-word compound the
  lexicon lacks names by its head when the dictionary describes the label with the compound's
  modifier (``_head_described``: "water boiler", a kettle: its kind the teakettle is "for boiling
  water"). A compound sharing its modifier with a label names it when the dictionary defines both
  heads for one use (``_parts_match``, ``lexicon.same_purpose``: "shoe shelf", a shoe rack; rack and
  shelf both "for holding objects"), and a closed compound the lexicon lacks is read apart
  ("wineshelf": wine shelf). A compound the lexicon knows as no kind of its head noun is not a
  thing seen under that head (``_not_its_head``: a "waste basket" is a container, not the basket).
  Where the embedder also finds phrase and label alike beyond background, a name of a part of the
  label's kind and of nothing else names it (``_part_names_whole``: "greenery", foliage, a plant
  part), so do two containers defined as holding one distinctive thing (``_holds_alike``: a waste
  basket and a trash can, rubbish), and a phrase defined as nothing but a genus the embedder finds
  as the label (``_genus_named``: a "beaker", "a cup", and a mug);
* otherwise the label's embedding similarity to the phrase must beat how similar *either* of them
  is to other everyday household things (``BACKGROUND``, a fixed list independent of any memory
  or world: for a small embedder unrelated household objects are already about 0.4-0.5 similar,
  so "kettle" ~ "plant" is background, not a match) by ``ask.found_margin``; the curve of that
  margin is bench/bench_absent.py's. The lexicon's definitions are compared the same way, by a
  wider margin (``gloss_match``: "lamp" and "light" are both defined as a source of illumination),
  the phrase in its commonest sense that is a thing ("light": the device, not the radiation), and
  a compound the lexicon lacks through its head's definition ("desk lamp": a lamp) against labels
  without a modifier of their own. A compound that shares only a word with a label but ends in
  another head noun ("coffee machine" and a "coffee table", "desk drawer" and a "desk") is
  matched by the two heads alone ("machine" against "table"), never through the shared word;
* a named thing's candidates are checked even below the retrieval's relevance floor (their own
  evidence decides); a question that names no thing ("where can I boil water?") keeps the floor,
  and an object the activity only names as what is acted on ("DROP TABLE") does not serve it
  unless its affordances hold the verb. A determiner before the phrase ("the low table", with
  colour/size words between: "the pink scatter cushion") makes it a thing, whatever its first
  word could also be; "that" after a noun is no determiner ("something that gives light");
* an activity's candidate serves it only on its own evidence (``activity_evidence``): one of its
  affordances says the activity (``affordance_match``: the embedder's similarity beyond both
  phrases' level against ``ACTIVITY_BACKGROUND``, everyday household activities independent of any
  world, by ``ACTIVITY_MARGIN``; the whole activity or two of its words shared, or only its verb:
  "drink from" for "drink coffee"; what is acted on also as a kind an affordance names: "put milk"
  as "put drink"), or a definition names what is acted on within one step, and the verb, or a
  label names the phrase's first word or its object ("couch sit"). A shared word alone does not count: the plant's "water" for "boil water", the
  umbrella's "keep *dry*" for "dry my hands" (bench_absent --activities draws the curve). The
  phrase is read by its structure in the question: a first verb followed by a later one acting
  on a thing ("sit and *work on my computer*", "sit to *watch TV*") is only how it is done, and a
  use that is only that first verb (the chair's "sit on") serves it only when the thing also does
  the later verb (the sofa's "watch TV from" for "sit to watch a film"); a thing after "for" is
  what the activity is for ("heat water for *tea*"), never read as what is acted on; a word after
  an object pronoun is a state ("keep me *dry*": no drying of hands); a use ending in "on" puts
  nothing *in* ("put flowers in": no counter); a thing the lexicon names as what is acted on
  (a notebook, a book) is read, not sat at. With such a manner verb only a use done *at* the thing
  serves (``PLACE_WORDS``: "work at", not the printer's "print documents" for "sit and write a
  letter"); a question for a place ("a spot to read a book") or a passive ("where do books get
  stored") is never served by the thing acted on; a verb written inflected is read in its
  dictionary form (``activity_form``: "stored books" is "store books"); and one verb acting on
  two different things ("store books", a shoe rack's "store shoes on") is no match unless the
  things are alike. A use doing the opposite of the activity does not serve it (``_opposite_use``,
  WordNet's antonyms through its adjective clusters, ``lexicon.opposed``: "keep my groceries
  *cold*" is no stove's "*heat* food", heating making hot); "drink coffee" is never "drink drink"
  (the fridge's "store *drinks*"); a verb with a particle the verb lexicon does not relate to its
  first word ("put away": storing) shares no verb with a use of that word alone ("put things on"),
  and is served by a use whose verb the dictionary defines by it (``lexicon.defined_by_verb``:
  store, "put away for storage") acting on a kind of the thing (``_alike_things``: a jacket and
  the wardrobe's clothes are both clothing); two uses sharing only what is acted on, of a thing
  defined (or named) by the use's verb and not the activity's (a towel, "cloth ... for *drying*";
  a hand dryer), are matched by their verbs ("wash" against "dry": no match), and so are two
  such uses when the thing's is done in, on, at or from it and its verb is one the verb lexicon
  relates to none of the activity's (``_verbs_apart``: the sofa's "watch TV from" for "change the
  TV channel"). A question for what it is done *with* (``INSTRUMENT``: "something to switch TV
  channels with") is never served by a use done in, on, at or from a thing (a board's "cut bread
  on"), and a phrasal verb later in the activity ("sit to *put on* my shoes") shares no verb with
  its first word alone ("put things on");
* an activity's serving targets are ordered by what their dictionary definitions say they are for
  (``definition_fit``: "a table where breakfast is eaten" serves "have a meal" before the apple),
  and after a light verb ("have a bath") the thing is looked for by name first. What serves the
  activity's purpose ("for *dinner*", "have a *meal*") comes first: a use done at the thing whose
  verb the purpose's definition names (``purpose_verbs``: a meal is "eaten", the table's "eat at"
  before the chair's "sit on"). A question for a place to do it ("a comfy spot to read a book")
  first takes a thing one does it in, on or at (``done_within``: the armchair's "read in", not the
  lamp's "read by"), one just below the relevance floor when none above it is one; "do X" there is
  read by what X's definition names ("paperwork": "work ...", the desk's "work at"). In the same
  way a thing doing what the purpose is for ("sit down for breakfast": the table's "eat at") is
  taken just below the floor, first, when none above it does, and a use saying the whole
  activity in the dictionary's words (``names_use``: the wardrobe for "put away my jacket") when
  nothing above the floor serves. A thing named by its kind and what it is for, which no label
  names as a whole ("a comfy *seat for reading*"), is found at a thing the lexicon names as that
  kind one of whose uses serves the purpose (``kind_for_use``: the armchair's "read in"), never at
  one of the kind alone (a kitchen chair).

When nothing is found the answer text may offer the closest thing ("the closest thing I saw is a
bag"), never as a goal or a target.

Existence questions ("is there a kettle?") and the GoTo action call ``decide_found`` too; no
second threshold exists anywhere.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import numpy as np

from ..lexicon import (ANCESTOR_SENSES, HYPONYM_STRENGTH, SECONDARY_NAME_SHARE, defined_alike, definition_word, definition_words,
                       defined_by_verb, defining_objects, handles_what_is_described, hold_alike, in_common_senses, is_kind_of,
                       names_a_time, one_use_siblings, opposed, same_purpose, sibling_kinds, usage_words, verb_base)
from .query import (COLORS, FUNCTION_WORDS, LIGHT_VERBS, MATERIALS, PARTICLES, PASSIVE_RE, PLACE_FOR_RE, singular,
                    words)

if TYPE_CHECKING:
    from ..embeddings.base import TextEmbedder
    from .graph_retrieval import Subgraph
    from .query import ParsedQuery

# Everyday household things (not any world's object list): what an unrelated label in a
# memory typically looks like to the embedder. A match must stand out from these.
BACKGROUND = (
    "cup", "plate", "spoon", "pan", "jar", "bottle", "box", "basket", "bucket", "broom",
    "blanket", "curtain", "carpet", "rug", "door", "window", "stairs", "radiator", "fan", "heater",
    "phone", "camera", "keyboard", "speaker", "radio", "clock", "picture", "poster", "painting",
    "frame", "candle holder", "drawer", "cabinet", "stool", "crib", "dresser", "mat", "hanger",
    "hook", "shoe", "hat", "coat", "glove", "bag", "wallet", "key", "pen", "notebook", "toy",
    "doll", "ball", "bin", "sponge", "soap", "brush", "comb", "glass", "tray", "cloth",
)
BACKGROUND_QUANTILE = 0.9
GLOSS_OFFSET = 0.28  # what a match through definitions must beat beyond ask.found_margin: "pear" and
# "apple" (two fruits) have definitions 0.49 above background, "lamp" and "light" (source) 0.53
GLOSS_SENSES = 2  # a label's definitions: its two most common senses ("light": radiation, a light source)
DEFINITION_DEPTH = 4  # steps up from what an activity acts on (its commonest sense) to a word of a
# definition: "jacket" -> coat, overgarment, garment, clothing ("clothes", wardrobe's "storage space
# for clothes", is clothing one step up)
DEFINITION_ADMIT_STEPS = 1  # below the floor only a definition naming what is acted on, a kind of it or
# what it is a kind of ("a shelf on which to keep books"): one farther ("storage space for clothes",
# 5 steps from a jacket; "armor for the head", 2 from a face) only orders things above the floor
DEFINITION_FLOOR_SHARE = 0.5  # below the floor, a thing whose definition serves an activity still needs
# this share of it: the retrieval relates it to the question at all (a wardrobe 0.28 for "put away my
# jacket"; a bowl "for holding liquids" is 0.15 for "boil water")
VERB_MARKERS = ("to", "can", "could", "may", "will", "would", "must")  # the word after one is a verb:
# "where you can *wash* your hands" names no wash (laundry)
DEFINITION_PURPOSE = ("for", "to", "which", "where", "used")  # what follows says what a thing is for
# Everyday household activities (not any world's affordances): what an unrelated use typically looks
# like to the embedder. An affordance serving an activity must stand out from these.
ACTIVITY_BACKGROUND = (
    "sweep the floor", "take out the trash", "fold laundry", "iron a shirt", "feed the cat",
    "walk the dog", "vacuum the carpet", "mop the floor", "brush teeth", "comb hair",
    "open the window", "lock the door", "answer the phone", "write a letter", "pay the bills",
    "play a board game", "listen to music", "make the bed", "peel potatoes", "chop vegetables",
    "pour a drink", "wrap a present", "paint a wall", "charge the phone", "hang a picture",
    "dust the furniture", "polish shoes", "sew a button", "knit a scarf", "call a friend",
    "check the mail", "wipe the counter", "empty the bin", "change a light bulb", "tidy the room",
    "fix a leak", "wash the car", "play the piano", "do homework", "take a photo",
)
ACTIVITY_MARGIN = 0.22  # an affordance serves an activity when their similarity beats the higher of their
# ACTIVITY_BACKGROUND levels by this. Curve on read seeds 43-46 / 41-42 varied (bench_absent --activities),
# present found-right and absent false-found: no gate 0.84 / 0.79 and 0.59 / 0.29; 0.14: 0.84 / 0.79 and
# 0.29 / 0.24; 0.18: 0.84 / 0.79 and 0.24 / 0.12; 0.22: 0.84 / 0.79 and 0.18 / 0.06; 0.26: 0.80 / 0.75 and
# 0.18 / 0.06. Under it: a monitor's "display" for "shows the time" +0.21, a plant's "water" for "keep me dry" +0.16
VERB_JOINERS = ("and", "or", "to", "while")  # in a question, the word after one is a verb ("sit and
# *work*", "sit while *tying* my laces")
PURPOSE_MARKERS = ("for",)  # the things after one say what an activity is for, not what it acts on
# ("heat water for *tea*": tea is not heated; "sit down for *dinner*")
OBJECT_PRONOUNS = ("me", "you", "him", "her", "it", "us", "them")  # after a verb, the word after one
# is a state the activity leaves it in, no verb of it ("keep me *dry*": nothing is dried)
CONTAINMENT = ("in", "into", "inside")  # a use ending in one of these puts a thing inside another,
SUPPORT = ("on", "onto", "upon")  # in one of these on top of it: "put flowers in" is no "put things on"
POSITION_WORDS = (*CONTAINMENT, *SUPPORT, "at", "from")  # a use ending in one of these is done where
# one is: in, on or at the thing ("read in", "watch TV from"); "by" or "near" it is only beside it
INSTRUMENT = ("with",)  # a question ending in one asks for what the activity is done with, not where: a
# use done in, on, at or from a thing ("watch TV from", "cut bread on") is no instrument
PLACE_WORDS = (*POSITION_WORDS, "by", "near")  # a use ending in one of these is done at the thing ("work
# at", "read by"); one without is what the thing does ("print documents")
# "the best *seat for a movie night*", "a comfy *seat to read in*": a kind after a determiner (and
# one word that rates it), then what it is for, to the question's end
KIND_FOR_RE = re.compile(r"\b(?:a|an|the|some|any)\s+(?:[a-z]+\s+)?([a-z]+)\s+(?:for|to)\s+([a-z][a-z' ]*?)"
                         r"\s*[?.!]*\s*$", re.I)
DETERMINERS = ("the", "a", "an", "my", "your", "our", "his", "her", "their", "this", "some", "any")
# not "that": after a noun it starts a relative clause ("something that gives light": an activity)
USE_STOPWORDS = frozenset((*DETERMINERS, "its", "me", "you", "it", "them", "us", "thing", "things", "something",
                           "with", "for", "at", "from", "to", "of", "by", "and", "or", "while", "bit"))
# not an activity's or affordance's own word ("put *things* on", "lie down for a *bit*")


class Asked(NamedTuple):
    """What each reading of ``FoundRule.match`` is given: the phrase as written, its words, the
    object's labels (lower case, repeats kept) and its description."""
    phrase: str
    wanted: list[str]
    labels: list[str]
    description: str


ALSO_READS = "also reads"  # the phrase, rewritten: the whole table reads the rewrite too, the better result counts
NAMES = "names it"  # 1.0 when it holds (for the object, or for a label it reads); no later reading runs
DROPS = "drops"  # the labels it holds for are read by no later reading
SETS_ASIDE = "sets aside"  # the labels it holds for are read only by later readings that do not skip them
SCORES = "scores"  # a score for each label it reads; ``match`` is the best of all of them (-1.0 without any)


@dataclass(frozen=True)
class Reading:
    """One row of ``READINGS``: ``read(rule, asked, label)`` (label "" when ``per_label`` is false:
    it reads the phrase or the object, once) and what its answer does (``effect``). A per-label
    reading reads the labels no earlier row dropped, less those set aside by the rows in
    ``skips``, and with ``only`` just those set aside by that row."""
    name: str
    effect: str
    read: Callable[["FoundRule", Asked, str], Any]
    why: str
    skips: tuple[str, ...] = ()
    only: str | None = None
    per_label: bool = True


OTHER_KIND, SIBLING, NOT_ITS_HEAD, FILED_UNDER = "other kind", "sibling", "not its head", "filed under"
SET_ASIDE = (OTHER_KIND, SIBLING, NOT_ITS_HEAD, FILED_UNDER)  # what a phrase is not, whatever the embedder finds

# ``FoundRule.match``, one row after another: the order is the rule. A reading that names the thing
# ends it; one that drops or sets labels aside runs before every reading it keeps them from.
READINGS: tuple[Reading, ...] = (
    Reading("closed parts", ALSO_READS, lambda r, q, _: r._closed_parts(q.phrase), per_label=False, why=(
        "a closed compound the lexicon lacks is read apart too ('shoeshelf': shoe shelf), before "
        "anything else, and the better of the two readings counts (``_closed_parts``)")),
    Reading("description", NAMES, lambda r, q, _: set(q.wanted) <= set(words(q.description)), per_label=False, why=(
        "the object's description has every word of the phrase")),
    Reading("other sense", DROPS, lambda r, q, lab: r._other_sense(q.phrase, lab, q.labels), why=(
        "a label with two common senses is read in the one the object's other labels name: a "
        "'notebook' also seen as 'book' is no notebook computer, nor a laptop (``_other_sense``)")),
    Reading("rare sense", DROPS, lambda r, q, lab: r.lexicon.rare_sense_only(q.phrase, lab)
            or r.lexicon.rare_sense_only(lab, q.phrase), why=(
                "a label the phrase names only in a rare sense of its own is another thing: a 'stool' is a "
                "seat, not the toilet of its fourth sense; and one that names the phrase only in a rare "
                "sense of the label's: a thing seen as 'couch' is the sofa (5 tags), not the "
                "psychiatrist's couch, a bed (0) (``Lexicon.rare_sense_only``)")),
    Reading("unsure link", DROPS, lambda r, q, lab: r._unsure_sense(q.phrase, lab), why=(
        "a label the lexicon links to the phrase only through a sense of the phrase it cannot call the "
        "common one, which the embedder finds less alike than unrelated household things: the kitchen "
        "'hob' is no 'shelf beside an open fire' (``_unsure_sense``, ``Lexicon.unsure_link``)")),
    Reading("names", NAMES, lambda r, q, lab: r.names(lab, q.phrase), why=(
        "the label is the phrase, the phrase is its head noun, or the lexicon calls the label a name "
        "or a kind of it: 'sofa' for 'couch', a 'coffee table' for 'table' (``names``)")),
    Reading("narrower kind", NAMES, lambda r, q, lab: r._narrower_kind(q.phrase, lab), why=(
        "the phrase is a kind of the label a few steps up, in the label's common senses: a fern is a "
        "plant, a bolster a cushion; a houseplant a 'potted plant' by its head (``_narrower_kind``)")),
    Reading("head described", NAMES, lambda r, q, lab: r._head_described(q.phrase, lab), why=(
        "a two-word compound the lexicon lacks whose head names the label, which the dictionary "
        "describes with the compound's modifier: a 'water boiler' is a kettle (``_head_described``)")),
    Reading("made with", NAMES, lambda r, q, lab: r._made_with_part(q.phrase, lab), why=(
        "the phrase is defined as its genus with the label, a part WordNet lists (a bookcase, "
        "'furniture with shelves', seen as 'shelf'), or a compound the lexicon lacks shares its "
        "modifier with a label defined as a kind of what the compound's head handles (a 'soap pump', "
        "a soap dispenser), or names a part of the label the embedder finds alike (a 'worktop', "
        "work top: a counter's countertop) (``_made_with_part``)")),
    Reading(OTHER_KIND, SETS_ASIDE, lambda r, q, lab: _other_head(q.wanted, words(r._label_apart(q.wanted, lab)))
            or r._modifier_names(q.phrase, lab),
            why=("a compound sharing a word with the label but ending in another head ('coffee machine' "
                 "and a 'coffee table', 'desk drawer' and a 'desk'; 'night table' and a 'nightstand' the "
                 "lexicon lacks, night stand), or whose modifier alone names the label ('fridge printer' "
                 "and a 'refrigerator'): matched by the two heads only, never by the shared word, which "
                 "alone makes them 0.26-0.31 over background (``_other_head``, ``_label_apart``, "
                 "``_modifier_names``)")),
    Reading(SIBLING, SETS_ASIDE, lambda r, q, lab: (
        _sibling(q.wanted, words(lab)) and r.lexicon.names_a_thing(q.phrase) and r.lexicon.names_a_thing(lab))
        or r._closed_sibling(q.phrase, lab), skips=(OTHER_KIND,), why=(
        "two kinds of one head the lexicon knows apart ('dining table', 'coffee table'; 'sideboard', "
        "'skateboard'): siblings, not names of one thing; their definitions and embeddings share the "
        "head, which says nothing of which one was seen (``_sibling``, ``_closed_sibling``)")),
    Reading(NOT_ITS_HEAD, SETS_ASIDE, lambda r, q, lab: r._not_its_head(q.phrase, lab), skips=(OTHER_KIND, SIBLING), why=(
        "a compound the lexicon knows as no kind of its head noun ('waste basket': a container, not a "
        "basket; 'trash can': a bin) is no thing seen under that head; a laundry basket seen as "
        "'basket' is 0.35 over background for 'waste basket', by the shared word (``_not_its_head``)")),
    Reading(FILED_UNDER, SETS_ASIDE, lambda r, q, lab: r._filed_under(q.phrase, lab),
            skips=(OTHER_KIND, SIBLING, NOT_ITS_HEAD), why=(
                "a kind the dictionary files under the label without calling it one (a candle under "
                "lamp) is no thing seen as the label, whatever the embedder finds alike (candle / lamp "
                "0.23 over background: both give light) (``_filed_under``)")),
    Reading("defined alike", NAMES, lambda r, q, lab: defined_alike(r.lexicon, q.phrase, lab, GLOSS_SENSES)
            or r._one_use(q.phrase, lab), skips=SET_ASIDE, why=(
                "the dictionary describes both in the same distinctive words ('handheld collapsible': "
                "a parasol and an umbrella), whatever genus it gives each (``lexicon.defined_alike``), "
                "or as two kinds of one thing for one use, which the embedder finds alike too: a "
                "schoolbag, 'a bag for carrying', and a backpack, 'a bag carried' (``_one_use``)")),
    Reading("part of one whole", NAMES, lambda r, q, lab: r._part_names_whole(q.phrase, lab), skips=SET_ASIDE, why=(
        "the phrase names a part of the label's kind and of nothing else, and a definition on the way "
        "up says whose part it is, the embedder agreeing: 'greenery', green foliage, a plant organ "
        "'in higher plants', is the plant seen; not a drawer nor a keyboard, parts of many things "
        "(``_part_names_whole``, ``Lexicon.part_of_one_whole``); or a part of one whole the label "
        "names or is defined alike, whose definition names the label: a 'lampshade', 'to screen a "
        "light bulb', a lamp's, is the light seen (``_part_of_named``)")),
    Reading("holds alike", NAMES, lambda r, q, lab: r._holds_alike(q.phrase, lab), skips=SET_ASIDE, why=(
        "two kinds of one thing the dictionary defines as holding, or for, one distinctive thing, "
        "the embedder agreeing: a 'waste basket', a container 'for discarded paper and other "
        "rubbish', is the trash can, 'a bin that holds rubbish' (``_holds_alike``, "
        "``lexicon.hold_alike``)")),
    Reading("genus named", NAMES, lambda r, q, lab: r._genus_named(q.phrase, lab), skips=SET_ASIDE, why=(
        "the phrase is defined as nothing but its genus, which the embedder finds as the label and the "
        "dictionary does not relate to it, and the phrase itself is above background for the label: a "
        "'beaker', 'a cup (usually without a handle)', is the mug a cup would find (``_genus_named``)")),
    Reading("parts match", NAMES, lambda r, q, lab: r._parts_match(q.phrase, lab), skips=(SIBLING,), why=(
        "a two-word compound the lexicon lacks and a two-word label, read by their parts: 'media "
        "console' is a 'tv stand', a 'shoe shelf' a 'shoe rack' (``_parts_match``); it reads the "
        "labels set aside as another kind, not its head or filed under too, not siblings")),
    Reading("other heads", SCORES, lambda r, q, lab: max(r._heads_match(q.wanted, r._label_apart(q.wanted, lab)),
                                                          r._kind_match(q.phrase, lab)),
            only=OTHER_KIND, why=(
                "a label of another kind is scored by its head against the phrase's head ('machine' "
                "against 'table'; 'stand', a small table, against 'table' for a 'night table' and a "
                "nightstand: 1.0, the modifier shared), or when the label is a kind of a thing with the phrase's modifier, "
                "by that thing's head: an exercise bike is an 'exercise device' (``_heads_match``, "
                "``_kind_match``)")),
    Reading("stands out", SCORES, lambda r, q, lab: r._stands_out(q.phrase, lab), skips=SET_ASIDE, why=(
        "the label's embedding similarity to the phrase beyond the higher of their background levels "
        "(``_stands_out``)")),
    Reading("definitions", SCORES, lambda r, q, lab: r.gloss_match(q.phrase, [lab]), skips=SET_ASIDE, why=(
        "the same through the lexicon's definitions, less ``GLOSS_OFFSET``: 'lamp' and 'light' are "
        "both defined as a source of illumination (``gloss_match``)")),
)


def check_readings(rows: tuple[Reading, ...]) -> None:
    """The table's order holds: names unique, known effects, and a row skips (or reads only) labels
    set aside by an earlier row; a ``ValueError`` names the row that breaks it."""
    aside: set[str] = set()
    for i, row in enumerate(rows):
        if row.effect not in (ALSO_READS, NAMES, DROPS, SETS_ASIDE, SCORES):
            raise ValueError(f"reading {row.name!r}: unknown effect {row.effect!r}")
        if row.name in {r.name for r in rows[:i]}:
            raise ValueError(f"reading {row.name!r} twice")
        if not row.per_label and row.effect not in (ALSO_READS, NAMES):
            raise ValueError(f"reading {row.name!r}: only a per-label reading can {row.effect}")
        late = [n for n in (*row.skips, *([row.only] if row.only else [])) if n not in aside]
        if late:
            raise ValueError(f"reading {row.name!r} runs before the rows setting {late} aside")
        if row.effect == SETS_ASIDE:
            aside.add(row.name)


check_readings(READINGS)


class FoundRule:
    """``decide_found`` with the background vectors cached per embedder (thread-safe)."""

    def __init__(self, embedder: "TextEmbedder", floor: float, margin: float, lexicon=None,
                 fixed_vectors: "Callable[[list[str]], np.ndarray] | None" = None) -> None:
        """``fixed_vectors``: how the fixed background lists (``BACKGROUND``,
        ``ACTIVITY_BACKGROUND``) are embedded; the ask engine passes the memory's on-disk cache
        (``Memory.embed_cached``, which `vlkng build` fills), so a one-shot ``vlkng ask`` does not
        embed them again, nor load torch for a batch that size. Default: ``embedder``."""
        from ..lexicon import KIND_OF_MIN, NoLexicon

        self.embedder = embedder
        self._fixed_vectors = fixed_vectors
        self.lexicon = lexicon if lexicon is not None else NoLexicon()
        self.kind_of_min = KIND_OF_MIN
        self.floor = float(floor)
        self.margin = float(margin)
        self._bg: np.ndarray | None = None
        self._act_bg: np.ndarray | None = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._definitions: dict[str, list[tuple[dict[str, int], frozenset[str]]]] = {}

    def _vecs(self, texts: list[str]) -> np.ndarray:
        """Embeddings, cached (labels and phrases repeat from question to question)."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vecs = np.asarray(self.embedder.embed_texts(missing), dtype=np.float32)
            with self._lock:
                if len(self._cache) > 20000:
                    self._cache.clear()
                self._cache.update(zip(missing, vecs))
        with self._lock:
            return np.stack([self._cache[t] if t in self._cache else
                             np.asarray(self.embedder.embed_texts([t])[0], dtype=np.float32) for t in texts])

    def _fixed(self, texts: tuple[str, ...]) -> np.ndarray:
        if self._fixed_vectors is None:
            return self._vecs(list(texts))
        return np.asarray(self._fixed_vectors(list(texts)), dtype=np.float32)

    def warm_up(self) -> None:
        """Embed the background lists now, not at the first question."""
        self.background_level("object")
        self._act_level("use")

    def background_level(self, phrase: str) -> float:
        """How similar ``phrase`` is to unrelated household things (a high quantile)."""
        if self._bg is None:
            self._bg = self._fixed(BACKGROUND)
        sims = self._bg @ self._vecs([phrase or "object"])[0]
        return float(np.quantile(sims, BACKGROUND_QUANTILE))

    def names_thing(self, pq: "ParsedQuery") -> bool:
        """The question names a thing to find (not an activity, not "what is on the counter")."""
        if not pq.target:
            return False
        if _written_as_noun(pq):
            return True
        known = self.lexicon.names_a_thing(pq.target)
        if known is None:  # a phrase the lexicon does not know: an activity when it starts with a verb
            first = words(pq.target)[:1]
            return not (first and len(self.lexicon.related_verbs(first[0])) > 1)
        return known

    def names(self, label: str, phrase: str) -> bool:
        """Is a thing seen as ``label`` the thing ``phrase`` names, in so many words? The label is
        the phrase, the phrase is the label's head noun ("table": a "coffee table"), or the
        lexicon calls the label (or its head) a name for the phrase or a kind of it ("sofa" for
        "couch", "laundry basket" for "hamper"). Only that direction: a "bag" is not necessarily
        a "suitcase" (suitcase is one of bag's rarer senses), a "lamp" not necessarily a "candle"."""
        lw, pw = words(label), words(phrase)
        if not lw or not pw:
            return False
        if lw[-len(pw):] == pw or "".join(lw) == "".join(pw):
            return True  # or the same words written apart or together ("night stand": a nightstand)
        if any(is_kind_of(self.lexicon, name, phrase) for name in dict.fromkeys((label, lw[-1]))):
            return True
        base = self.lexicon.base_form(phrase)  # "WC" is WordNet's "w.c.", "fruits" its "fruit"
        if any(in_common_senses(self.lexicon, name, phrase) for name in dict.fromkeys((label, lw[-1]))):
            return True  # the label, in one of its common senses, is a kind of the phrase (in one
            # of the phrase's common senses: no "bed" by a cushion's "layer, bed") a few steps up
            # ("apple": an edible fruit, a fruit), not only one step
        related = self.lexicon.related(phrase).get(label, 0.0)
        if SECONDARY_NAME_SHARE * HYPONYM_STRENGTH - 1e-9 <= related <= HYPONYM_STRENGTH + 1e-9:
            return True  # the phrase's kinds hold the label ("low table" -> coffee table, by its definition)
        # the phrase is a narrower kind of the label ("settee": a sofa, "washbasin": a sink), in
        # the label's own common senses too: "suitcase" names a rare sense of "bag", and a bag
        # seen (the backpack) is no suitcase; and only when its definition says so
        # (``Lexicon.defined_as_kind``): a candle, "stick of wax with a wick", is filed under
        # lamp, and a thing seen as "lamp" is no candle
        return (related >= self.kind_of_min and bool({phrase.lower(), base} & set(self.lexicon.related(label)))
                and self.lexicon.defined_as_kind(phrase, label) is not False)

    def match(self, phrase: str, labels: list[str], description: str = "") -> float:
        """How much an object seen under ``labels`` is the thing ``phrase`` names: 1.0 when a
        label names it (``names``) or the description has every word of it; else the best
        label's embedding similarity minus the higher of its and the phrase's background level,
        or the same through definitions (``gloss_match``), compared with ``ask.found_margin``.
        The readings and their order are the table ``READINGS``. Not the object's own text
        (description, what it is used for): a towel "used to: dry hands with" is 0.38 over
        background for "hand dryer" (bookcase / a shelf "used to: store books on": 0.26), so a
        thing's use would name other things with that use."""
        labels = [lab.lower() for lab in labels if lab and lab.strip()]
        if not labels or not words(phrase):
            return -1.0
        return self._match(phrase, labels, description)

    def _closed_parts(self, phrase: str) -> str:
        """A closed compound the lexicon lacks, written apart: the one way to cut the word into two
        words of at least ``MIN_PART`` letters that both name things ("shoeshelf": shoe shelf,
        "laundrybasket": laundry basket), else "". A word the lexicon knows ("schoolbag",
        "wastebasket") is read as it is."""
        pw = words(phrase)
        if len(pw) != 1 or self.lexicon.names_a_thing(pw[0]) is not None:
            return ""
        word = pw[0]
        cuts = [f"{word[:i]} {word[i:]}" for i in range(MIN_PART, len(word) - MIN_PART + 1)
                if self.lexicon.names_a_thing(word[:i]) and self.lexicon.names_a_thing(word[i:])]
        return cuts[0] if len(cuts) == 1 else ""

    def _match(self, phrase: str, labels: list[str], description: str) -> float:
        """``match`` by ``READINGS``, each row in its order over the labels it reads (``Reading``)."""
        asked = Asked(phrase, words(phrase), labels, description)
        kept = list(dict.fromkeys(labels))
        aside: dict[str, set[str]] = {}
        also, scores = -1.0, [-1.0]
        for row in READINGS:
            if not row.per_label:
                got = row.read(self, asked, "")
                if got and row.effect == ALSO_READS:
                    also = self.match(got, labels, description)
                elif got and row.effect == NAMES:
                    return max(also, 1.0)
                continue
            pool = [lab for lab in kept if (row.only is None or lab in aside.get(row.only, ()))
                    and not any(lab in aside.get(name, ()) for name in row.skips)]
            if row.effect == NAMES:
                if any(row.read(self, asked, lab) for lab in pool):
                    return max(also, 1.0)
            elif row.effect == DROPS:
                dropped = {lab for lab in pool if row.read(self, asked, lab)}
                kept = [lab for lab in kept if lab not in dropped]
            elif row.effect == SETS_ASIDE:
                aside[row.name] = {lab for lab in pool if row.read(self, asked, lab)}
            else:
                scores += [row.read(self, asked, lab) for lab in pool]
        return max(also, *scores)

    def _made_with_part(self, phrase: str, label: str) -> bool:
        """Is a thing seen as ``label`` the phrase by the dictionary's other pointers: the phrase is
        defined as its genus *with* the label, a part WordNet lists (``Lexicon.made_with``: a
        bookcase, "furniture with shelves", seen as "shelf"; the label's head for a compound label),
        or a two-word compound the lexicon lacks shares its modifier with a two-word label whose
        definition describes it as a kind of what the compound's head handles
        (``lexicon.handles_what_is_described``: a "soap pump", a soap dispenser), or a two-word
        compound the lexicon lacks names a part of the label (``Lexicon.parts_named``) the embedder
        finds alike too (a "work top": a counter's countertop; not a table's tabletop, -0.14)?"""
        lw, pw = words(label), words(phrase)
        if lw and any(self.lexicon.made_with(phrase, name) for name in dict.fromkeys((label, lw[-1]))):
            return True
        if (len(pw) == len(lw) == 2 and pw[0] == lw[0] and pw[1] != lw[1] and self.lexicon.names_a_thing(phrase) is None
                and handles_what_is_described(self.lexicon, pw[1], label, pw[0])):
            return True  # "soap pump", a soap dispenser: "dispenser of *liquid* soap", a pump "moves *fluid*"
        if len(pw) == 2 and lw and not set(pw) & set(lw) and self.lexicon.names_a_thing(phrase) is None:
            whole = label if self.lexicon.names_a_thing(label) is not None else lw[-1]  # "kitchen counter": a counter
            # a "worktop" (work top) is a counter: its countertop is a "work surface" (0.07 over
            # background; a table's tabletop -0.14)
            return any(self._stands_out(phrase, part) > 0.0 for part in self.lexicon.parts_named(whole, pw[0], pw[1]))
        return False

    def _unsure_sense(self, phrase: str, label: str) -> bool:
        """Does the lexicon link the label to the phrase only through a sense of the phrase it cannot
        call the common one (``Lexicon.unsure_link``: a "hob" is "a shelf beside an open fire" only
        in its last untagged sense) while the embedder finds them less alike than either is to
        unrelated household things (``_stands_out`` below 0)? Neither source then says that sense is
        meant, and a robot sent to a shelf 13 m away for the kitchen hob is sent to the wrong thing.
        Not when the phrase is one word formed on the label's head ("washbasin": wash + basin, and
        a "basin for washing the hands" in its second, untagged sense; ``_closed_split``): the word itself then says
        which sense is meant, as the dictionary's link does."""
        lw = words(label)
        if lw and self._closed_split(phrase, lw[-1]) is not None:
            return False
        return self.lexicon.unsure_link(phrase, label) and self._stands_out(phrase, label) < 0.0

    def _one_use(self, phrase: str, label: str) -> bool:
        """Two kinds of one thing defined for one use (``lexicon.one_use_siblings``: a schoolbag, "a
        bag for *carrying* school books", and a backpack, "a bag *carried* by a strap") that the
        embedder, too, finds more alike than either is to unrelated household things
        (``_stands_out`` above 0: schoolbag / backpack 0.16). Neither source alone: siblings of
        one use the embedder does not relate are other things (a dining table and a coffee table
        are set aside as siblings before this)."""
        return one_use_siblings(self.lexicon, phrase, label) and self._stands_out(phrase, label) > 0.0

    def _part_names_whole(self, phrase: str, label: str) -> bool:
        """A part of one whole only, whose definitions name it (``Lexicon.part_of_one_whole``:
        "greenery", foliage, a plant organ "in higher *plants*"), is a thing seen as that whole (the
        label, or its head for a compound the lexicon lacks) when the embedder, too, finds the two
        more alike than either is to unrelated household things (``_stands_out`` above 0:
        greenery / plant 0.06). A perceiver names the plant it sees, not its foliage."""
        lw = words(label)
        whole = label if self.lexicon.names_a_thing(label) is not None else lw[-1]  # "potted plant": a plant
        if not self.lexicon.part_of_one_whole(phrase, whole):
            return self._part_of_named(phrase, label)
        return self._stands_out(phrase, label) > 0.0

    def _part_of_named(self, phrase: str, label: str) -> bool:
        """A part of one whole only (``Lexicon.part_whole``) whose definitions on the way up name
        the label, every word of it, where the whole is what the label names (``names``) or is
        defined alike (``gloss_match`` at least the margin), the embedder agreeing (``_stands_out``
        above 0): a "lampshade", "a ... shade used to screen a *light* bulb", a lamp's part, is a
        thing seen as "light" (lamp and light: both "a source of illumination"; lampshade / light
        0.08). Three sources, each alone too weak: a part's definition names what it serves, and
        the dictionary files a lamp and a light apart."""
        names, said = self.lexicon.part_whole(phrase)
        if not names or not {definition_word(w) for w in words(label)} <= said:
            return False
        return self._stands_out(phrase, label) > 0.0 and any(
            self.names(label, name) or self.gloss_match(name, [label]) >= self.margin for name in names)

    def _holds_alike(self, phrase: str, label: str) -> bool:
        """Two kinds of one thing the dictionary defines as holding one distinctive thing
        (``lexicon.hold_alike``), which the embedder, too, finds more alike than either is to
        unrelated household things (``_stands_out`` above 0): a waste basket, "a container ... for
        discarded paper and other *rubbish*", and a trash can, "a bin that holds *rubbish*" (0.18
        over background). Neither source alone: one shared word is what two different containers
        may both mention, and the embedder relates any two containers."""
        return hold_alike(self.lexicon, phrase, label, GLOSS_SENSES) and self._stands_out(phrase, label) > 0.0

    def _genus_named(self, phrase: str, label: str) -> bool:
        """The dictionary defines the phrase (one of its common senses that are things) as nothing
        but what it is a kind of, one step up (``Lexicon.bare_genus``: a "beaker" is "a cup (usually
        without a handle)"), and the embedder finds that genus as the label (``_stands_out`` at
        least the margin: cup / mug) and the phrase itself above background for it (beaker / mug
        0.11), though the dictionary relates neither to the label (WordNet files a mug under
        drinking vessel, not cup). The phrase is another name of its genus, and is found where the
        genus is. A "tumbler", "a glass with a flat bottom but no handle or stem", says more than its
        genus; a "kettle", "a metal pot for stewing or boiling", too."""
        if self._stands_out(phrase, label) <= 0.0:
            return False
        lw = words(label)
        # a compound genus by its head, as a compound is matched against a label of another head
        # (``_heads_match``): a dumbbell, "an exercising weight", is no "exercise machine" (the
        # shared word 0.3 over background), a weight against a machine below it
        return any(self._stands_out(words(k)[-1], label) >= self.margin
                   and not any(self.lexicon.kind_steps(a, b) is not None for a, b in ((label, k), (lw[-1], k), (k, label)))
                   for k in self.lexicon.bare_genus(phrase))

    def _heads_match(self, wanted: list[str], label: str) -> float:
        """A compound against a label with another head: its head against the label's. When the
        label's head is one of the compound's own modifiers ("table board" and a "table"), the
        compound names a kind of its head, which is the label only when its head is a kind of the
        label in the label's common senses (``_narrower_kind``: a "seat bench" is a seat, a bench
        being "a long seat"), not however the lexicon relates the two words (board and table are
        one only in the rare sense "food or meals")."""
        head = words(label)[-1]
        if head in wanted[:-1] or singular(head) in {singular(w) for w in wanted[:-1]}:
            return 1.0 if self._narrower_kind(wanted[-1], head) else -1.0
        return self.match(wanted[-1], [head])

    def _modifier_names(self, phrase: str, label: str) -> bool:
        """A two-word compound the lexicon lacks whose modifier, not its head, names the label
        (``names``) with no word shared: a "fridge printer" and a thing seen as "refrigerator" are
        matched by their heads (printer / refrigerator), like a compound sharing the label's word
        ("fridge printer" and "fridge", ``_other_head``); the whole compound against the label would
        carry the modifier's synonymy (0.34 over background)."""
        pw, lw = words(phrase), words(label)
        if len(pw) != 2 or not lw or set(pw) & set(lw) or self.lexicon.names_a_thing(phrase) is not None \
                or not self.lexicon.names_a_thing(pw[1]):  # "couch sit": a thing and what is done with it
            return False
        return self.names(label, pw[0]) and not self.names(label, pw[1])

    def _closed_sibling(self, phrase: str, label: str) -> bool:
        """A closed compound the lexicon knows and a phrase (closed, or two words) ending in the same
        word naming a thing after another front ("side|board" and "skate|board" or "table board";
        "book|case", "stair|case"): two kinds of boards, like "dining table" and "coffee table"
        (``_sibling``), and the embedder's likeness of them is their shared letters (skateboard /
        sideboard 0.26 over background, table board / sideboard 0.27). Neither names the other
        (``names``, checked first)."""
        theirs = self._closed_split(label)
        if theirs is None:
            return False
        pw = words(phrase)
        mine = (pw[0], pw[1]) if len(pw) == 2 else self._closed_split(phrase, theirs[1])
        return mine is not None and mine[1] == theirs[1] and mine[0] != theirs[0]

    def _label_apart(self, wanted: list[str], label: str) -> str:
        """A one-word label the lexicon lacks that is the phrase's modifier closed up with another
        word naming a thing, written apart ("nightstand" for a "night table": night stand), so that
        it is read as the two-word label would be (another head after the shared modifier); else the
        label. "Night" names no thing itself, so ``_closed_parts`` does not cut the label."""
        lw = words(label)
        if len(wanted) != 2 or len(lw) != 1 or self.lexicon.names_a_thing(lw[0]) is not None:
            return label
        front, rest = wanted[0], lw[0][len(wanted[0]):]
        if not lw[0].startswith(front) or len(rest) < MIN_PART or not self.lexicon.names_a_thing(rest):
            return label
        return f"{front} {rest}"

    def _closed_split(self, word: str, tail: str = "") -> tuple[str, str] | None:
        """(front, tail) of one word the lexicon knows as a thing, cut before the longest ending of
        ``MIN_PART`` letters or more that names a thing itself after a front of as many ("sideboard":
        side, board); ``tail``: only that ending. None when there is none ("lamp", "board")."""
        ws = words(word)
        if len(ws) != 1 or not self.lexicon.names_a_thing(ws[0]):
            return None
        w = ws[0]
        for n in range(len(w) - MIN_PART, MIN_PART - 1, -1):
            if (w[-n:] == tail if tail else self.lexicon.names_a_thing(w[-n:])):
                return w[:-n], w[-n:]
        return None

    def _not_its_head(self, phrase: str, label: str) -> bool:
        """A compound the lexicon knows, and a label ending in its head noun, when none of the
        compound's common senses is a kind of that head up to ``HEAD_KIND_DEPTH`` steps
        (``Lexicon.ancestors``) and its definitions do not name the head: a "waste basket" is
        "a container with an open top" (WordNet's wastebasket), a "trash can" a bin, so a thing seen
        as "basket" or "can" is another thing; a "coffee table" is a table, a "notebook computer"
        a computer four steps up, a "TV set" a receiving set, a "bath mat" "a heavy towel or *mat*"."""
        pw, lw = words(phrase), words(label)
        if len(pw) < 2 or not lw or lw[-1] != pw[-1] or lw == pw or self.lexicon.names_a_thing(phrase) is None:
            return False
        head = pw[-1]
        if {head, self.lexicon.base_form(head)} & set(self.lexicon.ancestors(phrase, HEAD_KIND_DEPTH)):
            return False
        return definition_word(head) not in definition_words(" ".join(self.lexicon.glosses(phrase, GLOSS_SENSES)))

    def _narrower_kind(self, phrase: str, label: str) -> bool:
        """Is the thing ``phrase`` names a kind of the label, a few steps up (``ANCESTOR_DEPTH``) and
        in the label's common senses (``Lexicon.kind_steps``)? A fern is a plant three steps up
        (pteridophyte, vascular plant), a bolster a cushion two (a pillow); ``names`` takes one step
        only. A label the lexicon lacks is read by its head noun ("potted plant": a plant; a
        houseplant is one), as a compound names a kind of its head. The label's rarer senses do
        not count: a suitcase is a "bag" only in bag's fourth sense. Nor a kind the dictionary
        files there without saying so (``Lexicon.defined_as_kind``): a candle, "stick of wax with
        a wick in the middle", is a lamp only by WordNet's hierarchy; a perceiver seeing one calls
        it a candle, and a thing seen as "lamp" is no candle."""
        lw = words(label)
        unknown = len(lw) > 1 and self.lexicon.names_a_thing(label) is None
        return any(self.lexicon.kind_steps(phrase, name) is not None
                   and self.lexicon.defined_as_kind(phrase, name, senses=ANCESTOR_SENSES) is not False
                   for name in dict.fromkeys((label, lw[-1] if unknown else label)))

    def _filed_under(self, phrase: str, label: str) -> bool:
        """The phrase is a kind of the label in WordNet's hierarchy (``Lexicon.kind_steps``) that
        its definition does not call one (``Lexicon.defined_as_kind``): what the dictionary knows of
        the two is that relation, and it says the thing is not named so."""
        return (self.lexicon.kind_steps(phrase, label) is not None
                and self.lexicon.defined_as_kind(phrase, label, senses=ANCESTOR_SENSES) is False)

    def _other_sense(self, phrase: str, label: str, labels: list[str]) -> bool:
        """A label with two common senses (``Lexicon.glosses``), on an object also
        seen as what the label is a kind of (``Lexicon.ancestors``), which the phrase does not
        match: that other label says in which sense the object was the label, and the phrase
        names another. A "notebook" seen as "book" too is "a book with blank pages", not the
        notebook computer: no laptop (notebook / laptop 0.32 over background, the embedder
        reading the word in both senses), nor a "notebook computer" (a name of notebook's second
        sense)."""
        if words(label) == words(phrase) or len(self.lexicon.glosses(label, 2)) < 2:
            return False
        kinds = self.lexicon.ancestors(label)
        seen_as = [lab for lab in labels if lab != label and kinds.get(lab, 0) >= 1]
        return bool(seen_as) and all(self.match(phrase, [lab]) < self.margin for lab in seen_as)

    def _head_described(self, phrase: str, label: str) -> bool:
        """A two-word compound the lexicon lacks, read by its head: a label sharing no word with it
        that its head names (``names``: the label is the head, a name or a kind of it) is the thing when the
        dictionary describes the label with the phrase's modifier, in the label's definitions, its
        kinds' or those of what it is a kind of one step up. "Water boiler": a kettle (kettle,
        boiler: "a metal pot for stewing or boiling"; its kind the teakettle, "a kettle for boiling
        *water* to make tea"); "hand weight": a dumbbell, an exercising weight, "raised and lowered
        by use of the *hands*". A "coffee machine" is no computer though a computer is a machine."""
        pw, lw = words(phrase), words(label)
        if len(pw) != 2 or set(pw) & set(lw) or self.lexicon.names_a_thing(phrase) is not None:
            return False
        if not self.names(label, pw[1]):
            return False
        kinds = [k for k, steps in self.lexicon.ancestors(label, 1, 1).items() if steps == 1]
        texts = [*self.lexicon.kind_definitions(label, 1), *(g for k in kinds for g in self.lexicon.kind_definitions(k, 1, False))]
        return definition_word(pw[0]) in definition_words(" ".join(texts))

    def _parts_match(self, phrase: str, label: str) -> bool:
        """A two-word compound the lexicon lacks and a two-word label with another head, read by
        their parts: the modifiers are two words that name each other ("media" and "tv":
        television is a medium) and the heads name each other or are kinds of one thing one step up
        (``sibling_kinds``: a console and a stand are both small tables). "Media console" is a "tv
        stand"; a "chair laptop" is no "coffee table" (chair and coffee name different things)."""
        pw, lw = words(phrase), words(label)
        if len(pw) != 2 or len(lw) != 2 or pw[1] == lw[1] or self.lexicon.names_a_thing(phrase) is not None:
            return False
        if pw[0] == lw[0]:
            # one modifier: heads the dictionary defines as for one use are two names of one thing
            # ("shoe shelf": a shoe rack, a rack and a shelf both "for holding objects"); other
            # heads decide alone (``match``): a "laundry bag" and a laundry basket are both
            # containers, a soap box and a soap dispenser too, for no one use
            return same_purpose(self.lexicon, pw[1], lw[1])
        if not (self.names(lw[0], pw[0]) or self.names(pw[0], lw[0])):
            return False
        return (self.names(lw[1], pw[1]) or self.names(pw[1], lw[1]) or sibling_kinds(self.lexicon, pw[1], lw[1])
                or same_purpose(self.lexicon, pw[1], lw[1]))

    def _kind_match(self, phrase: str, label: str) -> float:
        """A compound and a label with another head: is the label a kind of (one to
        ANCESTOR_DEPTH steps up, never its own names) a thing with the phrase's modifier, whose head
        the phrase's head names? "Exercise equipment" and an exercise bike, an "exercise device":
        equipment / device 0.26 over background; "exercise mat": mat / device -0.16. The whole
        phrase against the ancestor would carry the shared word again (exercise mat / exercise
        device 0.33), and the heads against any ancestor would find a "desk lamp" at a desk (a
        lamp is furniture, as a desk is)."""
        pw = words(phrase)
        kinds = self.lexicon.ancestors(label) or self.lexicon.ancestors(words(label)[-1])
        best = -1.0
        for kind, steps in kinds.items():
            kw = words(kind)
            if steps >= 1 and len(kw) > 1 and set(pw[:-1]) <= set(kw[:-1]):
                best = max(best, self.match(pw[-1], [kw[-1]]))
        return best

    def _stands_out(self, a: str, b: str) -> float:
        """How far ``a`` and ``b``'s similarity beats the higher of their background levels."""
        vecs = self._vecs([a, b])
        return float(vecs[0] @ vecs[1]) - max(self.background_level(a), self.background_level(b))

    def gloss_match(self, phrase: str, labels: list[str]) -> float:
        """``match`` through the lexicon's definitions, for synonyms the embedder does not
        relate by name: the definition of the phrase's commonest sense that is a thing ("where is
        the light?" asks for "any device serving as a source of illumination", light's second
        sense, not the radiation; a second sense that *is* a thing is not added: "banana" the
        fruit would be a sibling of "apple") and the label's definitions (its common senses)
        against each other, the names against the labels' definitions ("lamp": "an artificial
        source of visible illumination"; "light": "any device serving as a source of
        illumination"), each beating its background, less ``GLOSS_OFFSET`` (definitions share
        the lexicographer's wording: "a piece of furniture ...", "a kitchen appliance ...")."""
        mine = [phrase, *self.lexicon.glosses(phrase, 1, things_only=True)]
        pw = words(phrase)
        if len(mine) == 1 and len(pw) > 1:
            # a compound the lexicon lacks ("desk lamp") is a kind of its head: the head's
            # definition stands in, against labels without a modifier of their own (a "coffee
            # table" is another kind of table than a "bedside table")
            mine = [pw[-1], *self.lexicon.glosses(pw[-1], 1, things_only=True)]
            labels = [lab for lab in labels if len(words(lab)) == 1]
        best = -1.0
        for lab in labels:
            theirs = [lab, *self.lexicon.glosses(lab, GLOSS_SENSES)]
            pairs = [(a, b) for a in mine for b in theirs if (a, b) != (mine[0], lab)]
            best = max([best, *(self._stands_out(a, b) - GLOSS_OFFSET for a, b in pairs)])
        return best

    def serves(self, phrase: str, node, text: str = "") -> bool:
        """For an activity ("where can I boil water?"): an object the phrase only names as what
        is acted on ("put my *cup*", "DROP *TABLE*"), or the lexicon names as what its purpose
        acts on (``purpose_clause`` of the question ``text``: a notebook, a kind of book, for "sit
        and read a *book*"; not the backpack of "where did I leave my *rucksack*", what is asked
        for) does not serve it unless one of its affordances is the phrase's verb (or a related one),
        and never when the question asks for a place to do it (``PLACE_FOR_RE``: "a spot to read a
        *book*")."""
        pw = words(phrase)
        place = bool(PLACE_FOR_RE.search(text or ""))
        clause = self.purpose_clause(_content(phrase), text)[1:] or (
            _content(phrase)[1:] if place or PASSIVE_RE.match(text or "") else [])  # "books get stored"
        things = [w for w in clause if self._thing_word(w)]
        acted_on = [lab for lab in _labels(node) if words(lab) and (
            words(lab)[-1] in pw[1:] or any(self.names(lab, w) for w in things))]
        if not acted_on or any(self.names(lab, phrase) for lab in acted_on):
            return True
        if place:
            return False  # "a comfy spot to read a book": a place for it, never the book read
        verbs = {pw[0], *self.lexicon.related_verbs(pw[0])}
        return any(words(a)[:1] and words(a)[0] in verbs for a in node.affordances)

    def _act_level(self, phrase: str) -> float:
        """How similar an activity ``phrase`` is to unrelated household activities (a high quantile)."""
        if self._act_bg is None:
            self._act_bg = self._fixed(ACTIVITY_BACKGROUND)
        return float(np.quantile(self._act_bg @ self._vecs([phrase])[0], BACKGROUND_QUANTILE))

    def _act_stands_out(self, a: str, b: str) -> float:
        vecs = self._vecs([a, b])
        return float(vecs[0] @ vecs[1]) - max(self._act_level(a), self._act_level(b))

    def affordance_match(self, phrase: str, affordances, text: str = "", labels=()) -> float:
        """``_affordance_match`` of the phrase or a variant in the affordances' own words, as
        retrieval reads it: what is acted on as the kind an affordance names ("put milk": "put
        drink", the fridge's "store drinks"; not what the activity is for: the tea of "heat water
        for tea" is no drink the fridge stores), a two-word verb as one the verb lexicon relates that
        starts an affordance ("stretch out relax": "lie down relax", the sofa's "lie down on")."""
        affordances = [a for a in dict.fromkeys(affordances) if a and a.strip()]
        if any(self.names_act(phrase, a) for a in affordances):
            return 1.0
        toks = words(phrase)
        variants = [phrase]
        own = {w for a in affordances for w in words(a)}
        purpose = _purpose_words(words(text))
        for i, tok in enumerate(toks[1:], 1):
            related = self.lexicon.related(tok) if tok not in USE_STOPWORDS and singular(tok) not in purpose else {}
            variants += [" ".join(toks[:i] + [w] + toks[i + 1:]) for w in sorted(own)
                         if singular(w) not in (singular(tok), singular(toks[0]))  # "drink coffee" is
                         # no "drink drink": the fridge's "store *drinks*" names no drinking
                         and max(related.get(w, 0.0), related.get(singular(w), 0.0)) >= self.kind_of_min]
        # a verb of two words ("stretch out"): its few senses are its meaning; a one-word verb's
        # relatives span all its senses ("browse": graze, eat; "show": display)
        related = self.lexicon.related_verbs(" ".join(toks[:2])) if len(toks) > 2 else {}
        for aff in affordances:
            aw = words(aff)
            for m in (2, 1):
                if len(aw) >= m and " ".join(aw[:m]) in related:
                    variants.append(" ".join(aw[:m] + toks[2:]))
                    break
        verb = self._phrasal_verb(toks)
        for aff in affordances:  # "put away jacket": "store jacket", store being "... put away for storage";
            # not "take bath": "eat bath", eat being "take in solid food"
            aw = words(aff)
            if aw and verb and self._defined_for(aw[0], verb, toks):
                variants.append(" ".join([aw[0], *(w for w in toks[1:] if w not in verb.split())]))
        return max(self._affordance_match(v, affordances, text, labels) for v in dict.fromkeys(variants))

    def _defined_for(self, verb: str, other: str, toks: list[str]) -> bool:
        """Does the dictionary define ``verb`` by doing ``other`` (``defined_by_verb``) to what the
        activity ``toks`` acts on: where a definition says what ``other`` acts on
        (``defining_objects``), a thing the activity acts on is a kind of it. "Store" ("put away
        for storage") for "put the milk"; not "eat" ("take in solid food") for "take a bath"."""
        if not defined_by_verb(self.lexicon, verb, other):
            return False
        acted = [t for t in (self._thing_word(w) for w in toks[1:] if w not in other.split()) if t]
        for objects in defining_objects(self.lexicon, verb, other, PARTICLES, FUNCTION_WORDS, DETERMINERS):
            theirs = [t for t in (self._thing_word(w) for w in objects) if t]
            if not theirs or not acted or any(is_kind_of(self.lexicon, a, t) for a in acted for t in theirs):
                return True
        return False

    def act_nouns(self, phrase: str) -> list[str]:
        """The words of an activity named by what is done rather than by a verb: after a light verb
        ("have a long *soak*") or the whole phrase when its first word is no verb ("*movie* night"),
        those naming an act, event or state, not a thing (``names_a_thing`` false: a meal or a
        coffee is a thing, looked for by its definitions) nor a time (``names_a_time``: the night
        of a movie night is when, not what). [] when the activity has a verb of its own."""
        pw = words(phrase)
        if pw[:1] and pw[0] in LIGHT_VERBS:
            pw = pw[1:]
        elif not pw or len(self.lexicon.related_verbs(pw[0])) > 1:
            return []
        return [singular(w) for w in pw if w not in USE_STOPWORDS and self.lexicon.names_a_thing(singular(w)) is False
                and not names_a_time(self.lexicon, singular(w))]

    def names_act(self, phrase: str, aff: str) -> bool:
        """Does the dictionary say the use ``aff`` is the activity named by a noun (``act_nouns``):
        a definition or usage example of one of the use's words names it? "Watch" is to "see a
        *movie*" (the sofa's "watch TV from" for a movie night); a bath is where "you *soak* and
        wash your body" (the bathtub's "take a bath in" for a long soak). Only that direction: a
        soak's own definition, "*washing* something by allowing it to soak", makes no sink's "wash
        hands at" a place for one."""
        nouns = self.act_nouns(phrase)
        return bool(nouns) and any(n in usage_words(self.lexicon, w) for w in _content(aff) for n in nouns)

    def _made_for(self, labels, verb: str, other: str) -> bool:
        """Do the definitions of a thing seen as ``labels`` (its commonest sense and its kinds:
        ``Lexicon.kind_definitions``) or the labels themselves name ``verb`` (or its doer: a hand
        *dryer*) and not ``other``? A towel is "cloth ... for *drying*", no washing; a washbasin is
        "where you can *wash* your hands"."""
        labels = list(dict.fromkeys(labels))
        text = set(words(" ".join([*labels, *(g for lab in labels for g in self.lexicon.kind_definitions(lab, 1))])))

        def forms(v: str) -> set[str]:
            return _verb_forms(v) | {v + "er", v + "r"}
        return bool(forms(verb) & text) and not forms(other) & text

    def _phrasal_verb(self, toks: list[str]) -> str:
        """An activity's verb: its first word, or it with a particle right after it or ending the
        phrase when the verb lexicon knows the two as one verb ("put away", "sit down", "put books
        away")."""
        for i in (1, len(toks) - 1) if len(toks) > 1 else ():
            if toks[i] in PARTICLES and len(self.lexicon.related_verbs(f"{toks[0]} {toks[i]}")) > 1:
                return f"{toks[0]} {toks[i]}"
        return toks[0] if toks else ""

    def _other_verb(self, phrase: str, aff: str) -> str:
        """The word the activity and the affordance start a verb with when the activity's verb there
        is one of two words the verb lexicon does not relate to its first ("put away": storing, not
        putting; "sit to *put on* my shoes": donning them) while the affordance has the first alone
        ("put things on"): the shared word is no shared verb ("sit down" is a way to sit: shared).
        The verb is the activity's first word or a later one ("sit to put on shoes"); "" when none."""
        toks, aw = words(phrase), words(aff)
        for i, tok in enumerate(toks):
            if aw[:1] != [tok]:
                continue
            verb = self._phrasal_verb(toks[i:]).split()
            if (len(verb) == 2 and aw[:2] != verb
                    and verb[0] not in self.lexicon.related_verbs(" ".join(verb))):
                return singular(tok)
        return ""

    def _verbs_apart(self, verbs: set[str], verb: str) -> bool:
        """Is an affordance's ``verb`` one the verb lexicon knows and relates to none of the activity's
        ``verbs`` (nor they to it)? "Watch" (the sofa's "watch TV from") is no way to "switch TV
        channels"; "change" (the remote's "change the channel") is. Without a verb lexicon: no."""
        theirs = self.lexicon.related_verbs(verb)
        mine = [v for v in verbs if self.lexicon.related_verbs(v)]
        return bool(theirs) and bool(mine) and all(v not in theirs and verb not in self.lexicon.related_verbs(v)
                                                   for v in mine)

    def _alike_things(self, act: list[str], own: list[str]) -> bool:
        """Does a thing the affordance acts on name (itself or one step up) what a thing the
        activity acts on is a kind of, up to ``DEFINITION_DEPTH`` steps ("store clothes in" for a
        jacket: both clothing; not a shoe rack's shoes for books)?"""
        mine = [self._thing_word(w) for w in act]
        theirs = [self._thing_word(w) for w in own]
        return any(set(self.lexicon.ancestors(b, 1, 1)) & set(self.lexicon.ancestors(a, DEFINITION_DEPTH, 1))
                   for a in mine if a for b in theirs if b)

    def purpose_clause(self, act: list[str], text: str) -> list[str]:
        """The words of an activity (``_content``) that say what it is for when its first verb is
        only how it is done: a later verb in the question ``text`` (after "and", "or", "to") with a
        thing it acts on ("sit and *work on my computer*", "sit to *watch TV*"; not "stretch out and
        relax", where lying down is the relaxing, nor "sit to rest my legs": the lexicon relates
        resting to sitting). [] when there is none."""
        tokens = words(text)
        manner = self.lexicon.related_verbs(act[0]) if act else {}
        for verb in (self._verb_word(w) for v, w in zip(tokens, tokens[1:]) if v in VERB_JOINERS):
            if verb in act[1:] and verb not in manner:
                rest = act[act.index(verb):]
                if any(self._thing_word(w) for w in rest[1:]):
                    return rest
        return []

    def _affordance_match(self, phrase: str, affordances, text: str = "", labels=()) -> float:
        """How much one of a thing's ``affordances`` ("wash hands at", "keep dry in the rain") is the
        activity ``phrase`` (a verb and what it acts on: "wash hands"): 1.0 when the affordance says
        the whole activity ("sit on" for "sit"), two of its words ("put on shoes at" for "sit to
        put on shoes") or is only one of its verbs, with no object of its own ("drink from" for
        "drink coffee", "work at" for "sit and work on my computer"); else their embedding
        similarity beyond both their levels against
        ``ACTIVITY_BACKGROUND``. A shared word alone does not count: the plant's "water" for "boil
        water" (water is what is boiled, not what the plant does), the umbrella's "keep *dry*" for
        "dry my hands" are matched by the words they do not share ("boil" against nothing: no
        match; "hands" against "keep rain"), as a compound sharing a word with a label is matched
        by its head (``match``). The activity's verbs are its first word and, in the question
        ``text``, any after "and", "or", "to", "can", ... ("sit and *work* on my computer", "the
        couch I could *sit* on")."""
        act = _content(phrase)
        if not act:
            return -1.0
        tokens = words(text)
        verbs = {act[0], *(self._verb_word(w) for v, w in zip(tokens, tokens[1:]) if v in VERB_JOINERS + VERB_MARKERS)}
        states = {singular(w) for v, p, w in zip(tokens, tokens[1:], tokens[2:])
                  if p in OBJECT_PRONOUNS and singular(v) in verbs}
        purpose = self.purpose_clause(act, text)
        purpose_of = _purpose_words(tokens)
        where = tokens[-1] if tokens and tokens[-1] in (*CONTAINMENT, *SUPPORT, *INSTRUMENT) else ""
        best = -1.0
        affordances = list(dict.fromkeys(a for a in affordances if a and a.strip()))
        for aff in affordances:
            own = _content(aff)
            shared = set(act) & set(own)
            other = self._other_verb(phrase, aff)
            if other and set(own) <= {other}:
                continue  # "put away my jacket", "put on my coat": the table's "put things on" is
                # only the word, not the verb
            shared.discard(other)
            if set(own) <= shared and not shared & verbs:
                continue  # the affordance is only a word the activity uses otherwise: the plant's "water"
            if self._opposite_use(act, aff):
                continue  # "keep my groceries cold": the stove's "heat food" makes them hot
            if where and _other_relation(where, words(aff)[-1]):
                continue  # "something to put flowers in" (a container) is no "put things on" (a surface);
                # "something to switch channels with" (an instrument) no "watch TV from" (a place)
            if purpose and set(own) <= shared and not shared & set(purpose):
                # the affordance is only how the activity is done ("sit on" for "sit and work on my
                # computer"): it must serve what the activity is for, or another of the thing's uses
                # does its verb ("sit to watch a film": the sofa's "watch TV from")
                if any(_content(a)[:1] == purpose[:1] for a in affordances):
                    return 1.0
                best = max(best, self._act_stands_out(" ".join(purpose), aff))
                continue
            if purpose and words(aff)[-1] not in PLACE_WORDS and own[:1] != purpose[:1]:
                continue  # "sit and write a letter": one sits at a thing to do it, and the printer's
                # "print documents" is what the printer does, not where anyone sits
            if shared and (shared == set(act) or len(shared) > 1 or set(own) <= shared):
                return 1.0
            if (shared & verbs and own[0] not in shared) or (own and own[0] in shared & states) or (
                    shared and own and not shared & verbs and own[0] not in shared
                    and (self._made_for(labels, own[0], act[0])
                         or (words(aff)[-1] in POSITION_WORDS and self._verbs_apart(verbs, own[0])))):
                # the activity's verb is no verb of the affordance ("dry hands": "keep dry in the
                # rain"), or the affordance's verb is a state the activity leaves one in ("keep me
                # dry": "dry hands with"), or the two share only what is acted on and the thing's
                # definition names its own verb, not the activity's ("wash hands": the towel, "cloth
                # ... for *drying*", and its "dry hands with"), or the use is done in, on, at or from
                # the thing and the verb lexicon relates the two verbs in no sense ("switch TV
                # channels": the sofa's "watch TV from", a place for another thing done with the TV;
                # not the remote's "change the channel"): the words they do not share decide,
                # not what the activity is for ("heat water for tea": heat, against "boil")
                rest_act = " ".join(w for w in act if w not in shared and w not in purpose_of)
                rest_own = " ".join(w for w in own if w not in shared)
                if rest_act and rest_own:
                    best = max(best, self._act_stands_out(rest_act, rest_own))
            elif shared == {act[0]} == set(own[:1]) and act[1:] and own[1:]:
                # one verb, each acting on its own thing ("store books", a shoe rack's "store shoes
                # on"): the verb alone says nothing of the use; the things must be alike too
                if self._alike_things([w for w in act[1:] if w not in purpose_of], words(aff)[1:]):
                    # as written ("clothes", no "clothe"); not what it is for: "heat water for tea"
                    return 1.0  # "store jacket": the wardrobe's "store clothes in"
                if self.match(" ".join(act[1:]), [" ".join(own[1:])]) >= self.margin:
                    best = max(best, self._act_stands_out(phrase, aff))
            elif own:
                best = max(best, self._act_stands_out(phrase, aff))
        return best

    def _opposite_use(self, act: list[str], aff: str) -> bool:
        """Does the affordance ``aff`` do the opposite of the activity's words ``act`` (``_content``):
        a word of what it does (its words before its first preposition: "heat food", "keep dry" of
        "keep dry in the rain") names a state opposite to one of the activity's, by the lexicon's
        antonyms (``lexicon.opposed``)? "Keep my groceries *cold*": the stove's "*heat* food" (heating
        makes hot); "boil *water*": the towel's "*dry* hands". Words the two share are no opposition."""
        does = []
        for w in words(aff):
            if w in USE_STOPWORDS or w in PARTICLES or w in PLACE_WORDS:
                break
            does.append(singular(w))
        mine = [w for w in act if w not in does]
        return any(opposed(self.lexicon, a, b) for a in mine for b in does if b not in act)

    def activity_evidence(self, phrase: str, node, text: str = "") -> bool:
        """Does the thing ``node`` serve the activity ``phrase`` on its own evidence: an affordance
        (``affordance_match`` >= ``ACTIVITY_MARGIN``), or a definition naming what is acted on, a
        kind of it or what it is a kind of (``definition_fit`` within ``DEFINITION_ADMIT_STEPS``:
        "a table at which meals are served"; not a bag's "items" 3 steps from hands, nor the
        helmet's "head" 2 steps from a face), that also names the activity's verb (or one the
        lexicon relates to it) unless that is a light verb: a sink's "water supply" and a mug
        "for holding water" do not boil it."""
        pw = words(phrase)
        if pw and any(self.names(lab, part) for lab in _labels(node) for part in (pw[0], " ".join(pw[1:])) if part):
            return True  # the phrase starts with a thing the label names, read as a verb ("couch I
            # could sit on": "couch sit"; "mug}) RETURN n": "mug return n"), or acts on it ("leave
            # rucksack": a backpack; ``serves`` keeps a thing only acted on from a use it lacks)
        if self.affordance_match(phrase, node.affordances, text, _labels(node)) >= ACTIVITY_MARGIN:
            return True
        fit = self.definition_fit(phrase, _labels(node), with_verb=words(phrase)[0] not in LIGHT_VERBS)
        return fit is not None and fit[1] <= DEFINITION_ADMIT_STEPS

    def done_within(self, phrase: str, node, text: str = "") -> bool:
        """Is the activity ``phrase`` done in, on or at the thing ``node`` (one of its uses ending in
        ``POSITION_WORDS`` serves it: the armchair's "read in"), where one is while doing it, not
        beside it or by means of it (the lamp's "read by")? What a question for a place to do it
        (``PLACE_FOR_RE``: "a comfy spot to read a book") asks for first."""
        uses = [a for a in node.affordances if words(a) and words(a)[-1] in POSITION_WORDS]
        if not uses:
            return False
        if self.affordance_match(phrase, uses, text, _labels(node)) >= ACTIVITY_MARGIN:
            return True
        pw = words(phrase)  # "do paperwork" names its purpose as a light verb does ("have a meal"):
        # "work that involves handling papers", the desk's "work at"
        verbs = self.purpose_verbs(" ".join([LIGHT_VERBS[0], *pw[1:]]), text) if pw[:1] == ["do"] else set()
        return any(words(a)[0] in verbs for a in uses)

    def activity_form(self, phrase: str) -> str:
        """An activity whose verb is written inflected as the lexicon does not list it ("stored
        books", from "where do books get stored?") with the verb in its dictionary form ("store
        books"), an -ing verb after the first too ("sit tying laces": tie); any other phrase as it is."""
        pw = words(phrase)
        if len(pw) < 2 or self.lexicon.names_a_thing(phrase) is not None or self.lexicon.names_a_thing(pw[0]):
            return phrase
        rest = [self._verb_word(w) if w.endswith("ing") else w for w in pw[1:]]  # "sit tying laces": tie
        if len(self.lexicon.related_verbs(pw[0])) > 1:
            return " ".join([pw[0], *rest])
        base = verb_base(self.lexicon, pw[0])
        return " ".join([base, *rest]) if base else phrase

    def _verb_word(self, word: str) -> str:
        """A word as an activity phrase holds it: singular, and a verb's -ing form that names no
        thing in its dictionary form ("tying": tie; "clothing" stays)."""
        if word.endswith("ing") and not self.lexicon.names_a_thing(word):
            return verb_base(self.lexicon, word) or word
        return singular(word)

    def purpose_verbs(self, phrase: str, text: str = "") -> set[str]:
        """What the dictionary says an activity's purpose is done by: the things after "for"
        ("sit down for *dinner*") or after a light verb ("have a *meal*"), the definitions of
        their commonest sense and of what it is a kind of one step up ("meal": "the food served
        and *eaten* at one time"), as verbs in their dictionary form. A thing whose use is one of
        them done at it (``_place_for``: the table's "eat at") serves the purpose, a chair's "sit
        on" only how it is done."""
        pw = words(phrase)
        things = _purpose_words(words(text)) or (
            {w for w in pw[1:] if w not in PARTICLES} if pw[:1] and pw[0] in LIGHT_VERBS else set())
        out: set[str] = set()
        for thing in things:
            for kind in self.lexicon.ancestors(thing, 1, 1):
                for gloss in self.lexicon.glosses(kind, 1):
                    out.update(verb_base(self.lexicon, w) for w in words(gloss) if w not in FUNCTION_WORDS)
        return out - {""}

    def _thing_word(self, word: str) -> str:
        """The word as a thing's name ("hands": hand, not the "hands" that are workers), or ""."""
        for form in dict.fromkeys((singular(word), word)):
            if self.lexicon.names_a_thing(form):
                return form
        return ""

    def _definition_words(self, label: str) -> list[tuple[dict[str, int], frozenset[str]]]:
        """Per definition of the label's commonest sense that is a thing (not a mug's "human
        face") and its kinds (``Lexicon.kind_definitions``): the things
        its purpose names (the words after its first ``DEFINITION_PURPOSE`` word: "a table at
        which *meals are served*", not the "light" of "a small light table"), each with what it
        is a kind of one step up (word -> steps), and all its words (for the verb)."""
        key = label.lower()
        with self._lock:
            hit = self._definitions.get(key)
        if hit is None:
            hit = []
            for text in self.lexicon.kind_definitions(key, 1):
                tokens = words(text)
                start = next((i for i, w in enumerate(tokens) if w in DEFINITION_PURPOSE), len(tokens))
                found: dict[str, int] = {}
                purpose = [w for i, w in enumerate(tokens) if i > start and w not in FUNCTION_WORDS
                           and tokens[i - 1] not in VERB_MARKERS]
                for w in dict.fromkeys(self._thing_word(w) for w in purpose):
                    for kind, steps in self.lexicon.ancestors(w, 1, 1).items():
                        found[kind] = min(found.get(kind, steps), steps)
                hit.append((found, frozenset(tokens)))
            with self._lock:
                if len(self._definitions) > 4096:
                    self._definitions.clear()
                self._definitions[key] = hit
        return hit

    def definition_fit(self, phrase: str, labels: list[str], with_verb: bool = False) -> tuple[int, int] | None:
        """Does a thing seen as ``labels`` serve the activity ``phrase`` by its dictionary
        definitions or those of its kinds? ``phrase`` is a verb and what it acts on ("have meal",
        "put away jacket", "wash hands"); a definition serves it when it names what is acted on or
        a kind of it up to ``DEFINITION_DEPTH`` steps ("a table at which meals are served": the
        dining table, a kind of table; "storage space for clothes": jackets are clothing). The
        sort key (best first): -(things named + the verb itself in that definition: a washbasin
        is "where you can wash your hands", a hand towel only "dries the hands"), total steps.
        None when no definition names them or the phrase names no thing after its verb, or
        (``with_verb``) none that does also names the verb or one the lexicon relates to it."""
        pw = words(phrase)
        acted = [w for w in dict.fromkeys(self._thing_word(w) for w in pw[1:]
                                          if w not in PARTICLES and w not in FUNCTION_WORDS) if w]
        if not acted:
            return None
        kinds = [self.lexicon.ancestors(w, DEFINITION_DEPTH, 1) for w in acted]
        verb = pw[0]
        forms = _verb_forms(verb)
        related = set().union(*(_verb_forms(v) for v in self.lexicon.related_verbs(verb))) if with_verb else set()
        best = None
        for lab in dict.fromkeys(labels):
            own = (self.lexicon.ancestors(lab, DEFINITION_DEPTH + 1)
                   or self.lexicon.ancestors(words(lab)[-1], DEFINITION_DEPTH + 1))
            for named, text in self._definition_words(lab):
                # a kind of thing the label is itself says nothing of its use: a bath and the
                # teacups of "a bowl into which the dregs of teacups are emptied" are containers,
                # a shower and the surface of "a table that has a drop-leaf to enlarge its surface"
                # artifacts, as the bowl and the table are
                steps = [min((k[w] + s for w, s in named.items() if w in k and w not in own), default=None)
                         for k in kinds]
                steps = [s for s in steps if s is not None]
                if steps and (not with_verb or (forms | related) & text):
                    key = (-(len(steps) + bool(forms & text)), sum(steps))
                    best = key if best is None or key < best else best
        return best

    def _serving(self, sub: "Subgraph", pq: "ParsedQuery", defined_only: bool = False) -> list[str]:
        """An activity's targets: those above the relevance floor that serve it (``serves``), in
        retrieval order except that the ones whose definitions serve it (``definition_fit``)
        take their places best fit first ("have a meal": the table, whose kind "a table at which
        meals are served" names the meal, before a bowl "for serving soup"). When none above the
        floor serves it, the best-defined thing the retrieval still relates to it (relevance at
        least ``DEFINITION_FLOOR_SHARE`` of the floor) when its definition names what is acted on
        closely (``DEFINITION_ADMIT_STEPS``): the rule's own judgement over the fused relevance.
        "Put away my jacket" is left to the floor: the wardrobe's "storage space for clothes" is 5
        steps from a jacket, as far as a bag's "items" (parts) from "wash my hands"."""
        targets = [o for o in sub.targets() if o in sub.objects]
        text = pq.text or ""
        served = {o for o in targets if self.serves(pq.target, sub.objects[o], text)} if pq.target else set(targets)
        serving = [o for o in targets if not pq.target or (o in served
                                                           and self.activity_evidence(pq.target, sub.objects[o], text))]
        within = set()
        if pq.target and PLACE_FOR_RE.search(text):  # "a spot to read": what one reads in or at
            within = {o for o in served if self.done_within(pq.target, sub.objects[o], text)}
            serving = [o for o in targets if o in serving or o in within]
        fit = {}
        for o in serving if pq.target else []:
            key = self.definition_fit(pq.target, _labels(sub.objects[o]))
            if key is not None:
                fit[o] = key
        # a use the dictionary says is the activity a noun names ("have a long soak": the bathtub's
        # "take a bath in") is as defined for it as a definition naming it
        named = {o for o in serving if pq.target and any(self.names_act(pq.target, a) for a in sub.objects[o].affordances)}
        above = [o for o in serving if sub.relevance.get(o, 0.0) >= self.floor
                 and (o in fit or o in named or not defined_only)]
        verbs = self.purpose_verbs(pq.target, text) if pq.target else set()
        purposed = {o for o in serving if _place_for(sub.objects[o], verbs)}  # the table one eats at
        for first in (within, purposed):  # the armchair one reads in, below the floor
            if first and not first & set(above):
                above += [o for o in serving if o in first and o not in above and (o in fit or not defined_only)
                          and self.floor * DEFINITION_FLOOR_SHARE <= sub.relevance.get(o, 0.0) < self.floor][:1]
        if above:
            places = [i for i, o in enumerate(above) if o in fit]
            for i, o in zip(places, sorted((above[i] for i in places), key=lambda o: fit[o])):
                above[i] = o
            return sorted(above, key=lambda o: (o not in within, o not in purposed))  # stable
        near = [o for o in serving if sub.relevance.get(o, 0.0) >= self.floor * DEFINITION_FLOOR_SHARE]
        said = [o for o in near if o in named or pq.target and self.names_use(pq.target, sub.objects[o])]
        low = [o for o in fit if fit[o][1] <= DEFINITION_ADMIT_STEPS and o in near]
        return said[:1] or sorted(low, key=lambda o: fit[o])[:1]

    def names_use(self, phrase: str, node) -> bool:
        """Does one of the thing's uses say the activity in the dictionary's words: its verb is the
        activity's or one the dictionary defines by it (``defined_by_verb``: "store", "put away for
        storage") and it acts on what the activity acts on or a kind of thing that is
        (``_alike_things``): the wardrobe's "store clothes in" for "put away my jacket". Like a
        definition naming the use (``DEFINITION_ADMIT_STEPS``), this admits a thing just below the
        relevance floor when none above it serves (the wardrobe, 0.29 against 0.36)."""
        toks = words(phrase)
        verb = self._phrasal_verb(toks).split()
        things = [w for w in toks if w not in verb and w not in USE_STOPWORDS and w not in PARTICLES]
        for aw in map(words, node.affordances):
            theirs = [w for w in aw[1:] if w not in USE_STOPWORDS and w not in PARTICLES and w not in PLACE_WORDS]
            if not aw or not things or not theirs:
                continue
            if aw[:len(verb)] == verb or aw[0] == verb[0] and len(verb) == 1 or \
                    defined_by_verb(self.lexicon, aw[0], " ".join(verb)):
                if {singular(w) for w in things} & {singular(w) for w in theirs} or self._alike_things(things, theirs):
                    return True
        return False

    def _candidates(self, sub: "Subgraph", pq: "ParsedQuery") -> tuple[list[str], bool]:
        """(targets to check, does the question name a thing). A named thing's targets are
        checked on their own evidence even below the retrieval's relevance floor (a "hamper" the
        fused retrieval ranked low is still a laundry basket); an activity's are ``_serving``."""
        if not self.names_thing(pq):
            return self._serving(sub, pq), False
        targets = [o for o in sub.targets() if o in sub.objects]
        above = [o for o in targets if sub.relevance.get(o, 0.0) >= self.floor]
        return above[:MAX_CHECKED] + [o for o in targets if o not in above][:MAX_CHECKED], True

    def _scores(self, sub: "Subgraph", pq: "ParsedQuery") -> tuple[dict[str, float], bool]:
        """(each checked target's ``match``, retrieval order; does the question name a thing).
        For an activity every target kept by ``_candidates`` serves it: 1.0. After a light verb
        ("have a bath", "have a meal") the thing is looked for by name first (the bathtub), and
        only when nothing seen is it, among what is defined for it (the table)."""
        target = pq.target if _written_as_noun(pq) else self.activity_form(pq.target)  # "the white shelving
        # unit" is a thing however its first word reads as a verb ("shelve unit" is no activity)
        if target != pq.target:
            pq = replace(pq, target=target)
        pw = words(pq.target)
        if len(pw) > 1 and pw[0] in LIGHT_VERBS:
            scores, named = self._scores(sub, replace(pq, target=" ".join(pw[1:])))
            if named and any(v >= self.margin for v in scores.values()):
                return scores, True
            return {o: 1.0 for o in self._serving(sub, pq, defined_only=True)}, False
        targets, named = self._candidates(sub, pq)
        if not named:
            return {o: 1.0 for o in targets}, False
        scores = self._of_kind(sub, pq, {o: self.match_node(pq.target, sub.objects[o]) for o in targets})
        if not any(v >= self.margin for v in scores.values()):
            scores.update(self._rest(sub, pq, targets))
        if not any(v >= self.margin for v in scores.values()):
            kinds = self.kind_for_use(sub, pq, targets)
            if kinds:
                return {o: 1.0 for o in kinds}, False
        return scores, True

    def _rest(self, sub: "Subgraph", pq: "ParsedQuery", checked: list[str]) -> dict[str, float]:
        """When none of the ``checked`` targets is the thing named, the targets retrieval ranked
        below them and the objects it offered (``Subgraph.offered``: the labels nearest the phrase),
        each with its ``match``, read once per label list and description; an offered one that is
        the thing becomes a target (``Subgraph.take``)."""
        pool = [o for o in sub.targets() if o not in checked] + [o for o in sub.offers(self._vecs([pq.target])[0]) if o not in sub.objects]
        read: dict[tuple, float] = {}
        out: dict[str, float] = {}
        for o in pool:
            node = sub.node(o)
            key = (tuple(_labels(node)), node.description)
            if key not in read:
                read[key] = self.match_node(pq.target, node)
            out[o] = read[key]
        out = self._of_kind(sub, pq, out)
        for o, v in out.items():
            if v >= self.margin:
                sub.take(o)
        return out

    def _kind_asked(self, pq: "ParsedQuery") -> str:
        """The kind a "<kind> for/to <use>" question (``KIND_FOR_RE``) names in its target, or ""."""
        m = KIND_FOR_RE.search(pq.text or "")
        if not m or PLACE_FOR_RE.search(pq.text or ""):
            return ""
        kind = singular(m.group(1).lower())
        return kind if kind in words(pq.target) and self.lexicon.names_a_thing(kind) else ""

    def _of_kind(self, sub: "Subgraph", pq: "ParsedQuery", scores: dict[str, float]) -> dict[str, float]:
        """A "<kind> for/to <use>" question's named finds are things of that kind (``names``): "a
        table for cooking" is no stove, however near "cooking" a stove's words are."""
        kind = self._kind_asked(pq)
        if not kind:
            return scores
        return {o: v for o, v in scores.items() if any(self.names(lab, kind) for lab in _labels(sub.node(o)))}

    def kind_for_use(self, sub: "Subgraph", pq: "ParsedQuery", targets: list[str]) -> list[str]:
        """A thing named by its kind and what it is for ("a comfy *seat for reading*", "a good
        *chair to work at*", ``KIND_FOR_RE``), which no label names as a whole: the ``targets`` the
        lexicon names as that kind (``names``: an armchair is a seat) one of whose uses serves the
        purpose (``affordance_match`` >= ``ACTIVITY_MARGIN``: the armchair's "read in"), in
        retrieval order. A thing of the kind that does not serve the purpose is no answer: a
        seat for a movie night is not found at a kitchen chair; the answer text may name it."""
        m = KIND_FOR_RE.search(pq.text or "")
        if not m or PLACE_FOR_RE.search(pq.text or ""):
            return []
        kind, use = singular(m.group(1).lower()), _content(m.group(2))
        if not use or kind not in words(pq.target) or not self.lexicon.names_a_thing(kind):
            return []
        use = self.activity_form(" ".join([self._verb_word(use[0]), *use[1:]]))
        out = []
        for o in targets:
            node = sub.objects[o]
            labels = _labels(node)
            if any(self.names(lab, kind) for lab in labels) and \
                    self.affordance_match(use, node.affordances, pq.text or "", labels) >= ACTIVITY_MARGIN:
                out.append(o)
        return out

    def match_node(self, phrase: str, node) -> float:
        """``match`` of an object node: its labels and description."""
        return self.match(phrase, _labels(node), node.description)

    def score(self, sub: "Subgraph", pq: "ParsedQuery") -> float:
        """The number compared with ``margin`` (bench/bench_absent.py draws the curve of it):
        for a named thing, the best target's ``match``; else 1 when a target serves it."""
        scores, _ = self._scores(sub, pq)
        return max(scores.values(), default=-1.0)

    def decide(self, sub: "Subgraph", pq: "ParsedQuery") -> list[str]:
        """The targets that are the thing asked for (best first); [] = not found."""
        scores, named = self._scores(sub, pq)
        if not named:
            return list(scores)
        # an object surely seen in another colour or material than the one asked for comes last
        # (``_seen_otherwise``: perception agreed on it in APART_MIN_VOTES chunks); for a
        # place asked, one only the embedder relates comes after one the lexicon relates (a label
        # naming it, or a definition: a "light" for "lamp"), whatever room either is in: "the
        # armchair in the living room" is the armchair seen in the hallway (the answer says
        # where), not a cushion in the living room at 0.23; then one in the place asked for; then
        # one not seen otherwise at all (one chunk's word, or chunks that disagree, say little of
        # its colour: the office's plant seen once silver and once black is "the green plant in
        # the office", not the green one in the hallway); then one a label names before one only similar to it; of those only similar, one seen under
        # the asked head noun before one of another kind ("the gray seat bench": a gray bench, 0.49,
        # before a gray sofa, a seat defined alike at 0.25, however surely the sofa was seen gray);
        # then one seen in the asked colour or material in a larger share of the chunks that saw it
        # (``asked_share``; retrieval order otherwise)
        def embedder_only(o: str) -> bool:
            return bool(pq.places) and scores[o] < 1.0 and \
                self.gloss_match(pq.target, _labels(sub.objects[o])) < self.margin

        head = singular(words(pq.target)[-1]) if words(pq.target) else ""
        found = sorted((o for o in scores if scores[o] >= self.margin),
                       key=lambda o: (_seen_otherwise(sub.objects[o], pq, surely=True), embedder_only(o),
                                      _elsewhere(sub.objects[o], pq, sub.rooms.get(o)),
                                      _seen_otherwise(sub.objects[o], pq), scores[o] < 1.0,
                                      scores[o] < 1.0 and not _under_head(sub.objects[o], head),
                                      -asked_share(sub.objects[o], pq)))
        return _as_asked_siblings(sub, pq, found) + found


MAX_CHECKED = 5  # targets checked per question (retrieval ranks the right one near the top)
APART_MIN_VOTES = 2  # chunks that gave each of two objects a colour (material) before differing ones set them apart
ATTRIBUTE_RIVAL_SHARE = 0.5  # a colour or material perception gave an object at least this share of the votes of
# its remembered one is one it was seen in too (one view's lighting against another's)
MATERIAL_NOUNS = {"wooden": "wood", "metallic": "metal", "steel": "metal"}  # a material said as an adjective, or
# as the metal it is ("the steel kettle" is the one seen as "metal")
HEAD_KIND_DEPTH = 8  # steps up from a known compound to its head noun ("notebook computer": portable, personal,
# digital computer, computer: 4); beyond it the compound is read as no kind of its head
MIN_PART = 3  # letters of each part of a closed compound read apart ("shoe|shelf"; not "shoes|helf")


def _other_head(phrase: list[str], label: list[str]) -> bool:
    """A compound phrase and a label that share a word but end in different head nouns: they
    name two kinds of things ("coffee machine" and "coffee table", "desk drawer" and "desk")
    unless the lexicon relates them (``FoundRule.names``, checked first)."""
    return len(phrase) > 1 and bool(label) and phrase[-1] != label[-1] and bool(set(phrase) & set(label))


def _verb_forms(verb: str) -> set[str]:
    return {verb, verb + "s", verb + "es", verb + "ed", verb + "d", verb + "ing", verb[:-1] + "ing"}


def _place_for(node, verbs: set[str]) -> bool:
    """One of the thing's uses is one of ``verbs`` done at it ("eat at"; not an apple's "eat")."""
    return any(w[0] in verbs and w[-1] in PLACE_WORDS for w in map(words, node.affordances) if len(w) > 1)


def _purpose_words(tokens: list[str]) -> set[str]:
    """The words after a ``PURPOSE_MARKERS`` word up to the next function word or particle, its
    determiners skipped ("heat water for tea in": tea), singular."""
    out: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok in PURPOSE_MARKERS:
            for w in tokens[i + 1:]:
                if w in DETERMINERS:
                    continue
                if w in USE_STOPWORDS or w in PARTICLES:
                    break
                out.add(singular(w))
    return out


def _other_relation(a: str, b: str) -> bool:
    """Two prepositions ending uses, one of ``CONTAINMENT`` and the other of ``SUPPORT``, or the first
    asking for an instrument (``INSTRUMENT``: "something to cut bread *with*") and the second a place
    one does it in, on, at or from (``POSITION_WORDS``: a board's "cut bread on")."""
    return ((a in CONTAINMENT and b in SUPPORT) or (a in SUPPORT and b in CONTAINMENT)
            or (a in INSTRUMENT and b in POSITION_WORDS))


def _content(phrase: str) -> list[str]:
    """An activity's or affordance's own words: no determiners, pronouns, prepositions or
    particles ("put things on": put), singular."""
    return list(dict.fromkeys(singular(w) for w in words(phrase) if w not in USE_STOPWORDS and w not in PARTICLES))


def _colours(text: str) -> set[str]:
    return {"gray" if w == "grey" else w for w in words(text) if w in COLORS}


def _materials(text: str) -> set[str]:
    """The material words of ``text`` (``query.MATERIALS``), an adjective as its noun ("wooden": wood)."""
    return {MATERIAL_NOUNS.get(w, w) for w in words(text) if w in MATERIALS}


def _attribute_votes(node, kind: str) -> dict[str, int]:
    """Perception's votes for attribute ``kind`` (colour, material) of the object: value -> chunks."""
    return (getattr(node, "attribute_votes", None) or {}).get(kind) or {}


def _seen_as(node, kind: str, read) -> set[str]:
    """The values of attribute ``kind`` (colour, material) the object was seen in: its remembered
    one, or its description's, and any other one perception gave it about as often
    (``ATTRIBUTE_RIVAL_SHARE`` of the votes of the most given one: a yellow mug seen once yellow
    and once green is remembered green by the tie's order, yet is as much the yellow one)."""
    seen = read(str(node.attributes.get(kind, ""))) or read(node.description)
    votes = _attribute_votes(node, kind)
    top = max(votes.values(), default=0)
    return seen | {v for value, k in votes.items() if top and k >= ATTRIBUTE_RIVAL_SHARE * top
                   for v in read(value)}


def _not_as_asked(node, pq: "ParsedQuery", room: str | None = None) -> bool:
    """The question names a colour, a material or a kind of place and the object was seen only in
    another colour or material or is in another kind of place ("the black lamp": a white lamp is a
    lamp, but not the one asked for when a black light was seen too; "the metal lamp": not a wooden
    one; "the plant in the kitchen": not the plant in
    the hallway that was seen through the kitchen door). ``room``: the kind of place the object
    is in (``TourIndex.main_place``, via ``Subgraph.rooms``); else the build-time one."""
    return _seen_otherwise(node, pq) or _elsewhere(node, pq, room)


def _seen_otherwise(node, pq: "ParsedQuery", surely: bool = False) -> bool:
    """The colour or material half of ``_not_as_asked``: seen only in another one. ``surely``:
    and perception agreed on what it saw, its most given value given in APART_MIN_VOTES chunks or
    more (or no votes were kept: the remembered value is all there is). A perceiver misreads
    colours now and then: one chunk's word, or two chunks that disagree (silver, then black, of a
    green plant), say little against where the thing stands."""
    for kind, read in (("color", _colours), ("material", _materials)):
        asked = read(" ".join(pq.attributes))
        seen = _seen_as(node, kind, read)
        if asked and seen and not asked & seen:
            votes = _attribute_votes(node, kind)
            if not surely or not votes or max(votes.values()) >= APART_MIN_VOTES:
                return True
    return False


def asked_rank(node, pq: "ParsedQuery", room: str | None = None) -> int:
    """How far the object is from the colour, material and kind of place the question names: 0
    seen so, each asked value among the ones perception gave it most (its remembered one, or one
    voted as often); 1 seen so, but an asked value only as a rival (``_seen_as``: a brown shelf
    once seen white under one view's light); 2 seen otherwise, but not surely (one chunk's word,
    or chunks that disagree); 3 elsewhere (``_elsewhere``); 4 surely seen otherwise
    (``_seen_otherwise``), as the found rule orders them (``FoundRule.decide``): "the white kitchen
    table" is the white table in the dining room before the brown one in the kitchen, however
    often each was called a table. "The white shelf": a shelf seen white in four chunks of five is
    it before one seen brown twice and white once, however often each was called a shelf."""
    if _seen_otherwise(node, pq, surely=True):
        return 4
    if _elsewhere(node, pq, room):
        return 3
    if _seen_otherwise(node, pq):
        return 2
    for kind, read in (("color", _colours), ("material", _materials)):
        asked = read(" ".join(pq.attributes))
        votes = _attribute_votes(node, kind)
        top = max(votes.values(), default=0)
        if asked and top and not asked & {v for value, k in votes.items() if k >= top for v in read(value)}:
            return 1
    return 0


PRIOR_VOTES = 1.0  # each of "so" and "otherwise" starts with this many votes in a share of what perception
# said of an object (``shrunk_share``): one chunk's word says little, so an object named (or seen in a
# colour) once is not thereby the best match


def shrunk_share(hits: float, total: float) -> float:
    """The share ``hits`` of ``total`` votes, shrunk toward one half by ``PRIOR_VOTES`` each side."""
    return (hits + PRIOR_VOTES) / (total + 2.0 * PRIOR_VOTES)


def asked_share(node, pq: "ParsedQuery") -> float:
    """How surely the object is in the colour and material the question names: for each one asked,
    the share of perception's votes for that attribute of the object that gave an asked value
    (``shrunk_share``; an object without votes counts its remembered value once), multiplied; 1.0 when
    the question names none, 0.0 when no vote gave an asked value (of two shelves never seen yellow,
    the one fewer chunks saw is not the likelier yellow one). "The brown bookshelf": a shelf seen brown in both chunks that saw its
    colour is surer than one seen once brown and once pink, whichever retrieval ranked first."""
    out = 1.0
    for kind, read in (("color", _colours), ("material", _materials)):
        asked = read(" ".join(pq.attributes))
        if not asked:
            continue
        votes = _attribute_votes(node, kind)
        if not votes and node.attributes.get(kind):
            votes = {str(node.attributes[kind]): 1}
        hits = sum(k for value, k in votes.items() if asked & read(value))
        if not hits:
            return 0.0  # never seen so: no surer the fewer chunks saw it otherwise
        out *= shrunk_share(hits, sum(votes.values()))
    return out


def _elsewhere(node, pq: "ParsedQuery", room: str | None = None) -> bool:
    """The place half of ``_not_as_asked``: the question names a kind of place and the object is
    in another one."""
    if not pq.places:
        return False
    if room is None:
        from ..present import main_place

        room = main_place(node)
    return bool(room) and room.lower() not in pq.places


def seen_apart(a, b) -> bool:
    """Were two objects each seen in APART_MIN_VOTES chunks or more in colours (or materials) none
    of which the other was seen in (``_seen_as``)? Then they are two things, however close: a blue
    mug 1.3 m from the yellow one is no fragment of it, and pooled with it moves the yellow one's
    goal onto it. One chunk's colour says little: a bed split in two fragments, one seen once
    white and one once gray, is one bed."""
    for kind, read in (("color", _colours), ("material", _materials)):
        if min(sum(_attribute_votes(n, kind).values()) for n in (a, b)) < APART_MIN_VOTES:
            continue
        sa, sb = _seen_as(a, kind, read), _seen_as(b, kind, read)
        if sa and sb and not sa & sb:
            return True
    return False


def _as_asked(node, pq: "ParsedQuery", room: str | None) -> bool:
    """Every colour, material and kind of place the question names was seen of the object (not
    merely not contradicted: an object of unknown colour is not thereby the red one)."""
    for kind, read in (("color", _colours), ("material", _materials)):
        asked = read(" ".join(pq.attributes))
        if asked and not asked & _seen_as(node, kind, read):
            return False
    return not pq.places or bool(room) and room.lower() in pq.places  # type: ignore[union-attr]


def _as_asked_siblings(sub: "Subgraph", pq: "ParsedQuery", found: list[str]) -> list[str]:
    """The asked colour, material or place chooses among the instances of the kind found: when
    every found target was seen otherwise ("the white bookcase" found only as a black shelf once
    called a bookcase), the subgraph's other targets remembered under a found target's own
    label (another shelf) that were seen as asked (the white shelf) lead, in retrieval order.
    Nothing is added when nothing was found: this picks an instance, it never finds a kind."""
    asks = bool(pq.places) or any(read(" ".join(pq.attributes)) for read in (_colours, _materials))
    if not asks or not found or not all(_not_as_asked(sub.objects[o], pq, sub.rooms.get(o)) for o in found):
        return []
    kinds = {sub.objects[o].label.lower() for o in found}
    return [o for o in sub.targets() if o not in found and o in sub.objects
            and sub.objects[o].label.lower() in kinds and _as_asked(sub.objects[o], pq, sub.rooms.get(o))]


def _sibling(phrase: list[str], label: list[str]) -> bool:
    """A compound phrase and a compound label with one head noun and other modifiers."""
    return len(phrase) > 1 and len(label) > 1 and phrase[-1] == label[-1] and phrase != label


def _written_as_noun(pq: "ParsedQuery") -> bool:
    """Does the question write its target as a noun phrase: a determiner before it, with only the
    asked colour, material or size words between ("the low table", "my potted plant", "the pink
    scatter cushion", "the white shelving unit"), or before its first word (``_determined_head``)?
    Then it names a thing, whatever its first word could also be ("low", "pot", "scatter" and
    "shelving" are verb forms too)."""
    modifiers = "".join(rf"(?:{re.escape(a.lower())}\s+)?" for a in pq.attributes)
    return bool(pq.target) and (re.search(
        rf"\b(?:{'|'.join(DETERMINERS)})\s+{modifiers}{re.escape(pq.target.lower())}\b", (pq.text or "").lower())
        is not None or _determined_head(pq))


def _determined_head(pq: "ParsedQuery") -> bool:
    """Does a determiner stand right before the target's first word in the question ("where is *a
    seat* for cooking?", "where can I find *the table* to work at?")? Then that word is a noun,
    however the rest of the target reads ("seat cooking"): the question names a thing, though one
    that noun may also be a verb ("seat", "table"). An activity's target starts with its verb,
    which no determiner precedes ("where can I have a meal?": "have meal")."""
    first = words(pq.target)[:1]
    text = (pq.text or "").lower()
    return bool(first) and first[0] not in FUNCTION_WORDS and \
        re.search(rf"\b(?:{'|'.join(DETERMINERS)})\s+{re.escape(first[0])}\b", text) is not None


def _labels(node) -> list[str]:
    """The names an object was seen under."""
    return [node.label, *node.labels_seen]


def _under_head(node, head: str) -> bool:
    """Is the object's label (the name most chunks gave it) one ending in the noun ``head``
    (singular)? A name given once is not enough: two desks each once called "table" led a
    nightstand for "the bedside table" (a generated tour sent the robot 9.9 m off)."""
    w = words(node.label or "")
    return bool(head) and bool(w) and singular(w[-1]) == head


def decide_found(rule: FoundRule, sub: "Subgraph", pq: "ParsedQuery") -> list[str]:
    """The one decision: targets of ``sub`` that count as found for ``pq`` (see module doc)."""
    return rule.decide(sub, pq)
