"""The found rule's readings (core/ask/found.py ``READINGS``): one case per row, each a phrase and
the labels an object was seen under that the row decides, asserting what a user sees (found or
not, at ``ask.found_margin``) with the real WordNet lexicon and the shipped embedder, and that the
same object without that row would be decided the other way; and the table's order is the one
docs/ASK.md ("The found decision") shows."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from vlkng_ros.core.ask import found
from vlkng_ros.core.ask.found import (ALSO_READS, DROPS, NAMES, READINGS, SCORES, SETS_ASIDE, FoundRule,
                                      check_readings)
from vlkng_ros.core.config import VlkngConfig

DOC = Path(__file__).resolve().parents[1] / "docs" / "ASK.md"


@pytest.fixture(scope="module")
def rule():
    from vlkng_ros.core.ask.graph_retrieval import relevance_floor
    from vlkng_ros.core.embeddings.registry import make_text_embedder
    from vlkng_ros.core.lexicon import make_lexicon

    cfg = VlkngConfig()
    embedder = make_text_embedder(cfg.embeddings)
    lexicon = make_lexicon(cfg.embeddings.lexicon, cfg.embeddings.wordnet_dir)
    if not hasattr(lexicon, "senses"):
        pytest.skip("no WordNet files installed")
    return FoundRule(embedder, relevance_floor(embedder.name), cfg.ask.found_margin, lexicon)


# (row, phrase asked for, labels the object was seen under, its description, found?)
CASES = [
    ("closed parts", "coffeemug", ["mug"], "", True),  # read as "coffee mug", a kind of mug
    ("description", "kettle", ["thing"], "a steel kettle on the stove", True),
    ("other sense", "laptop", ["notebook", "book"], "", False),  # the notebook is a book: no computer
    ("rare sense", "stool", ["toilet"], "", False),  # a toilet is a stool only in stool's 4th sense
    ("unsure link", "hob", ["shelf"], "", False),  # hob's shelf is its last, untagged sense
    ("names", "hamper", ["laundry basket"], "", True),
    ("narrower kind", "fern", ["plant"], "", True),
    ("head described", "water boiler", ["kettle"], "", True),
    ("made with", "bookcase", ["shelf"], "", True),  # "furniture with shelves"
    ("other kind", "coffee machine", ["coffee table"], "", False),  # the shared word alone: 0.26
    ("sibling", "skateboard", ["sideboard"], "", False),
    ("not its head", "waste basket", ["basket"], "", False),
    ("filed under", "candle", ["lamp"], "", False),
    ("defined alike", "parasol", ["umbrella"], "", True),
    ("part of one whole", "greenery", ["plant"], "", True),  # foliage, a part of plants only
    ("holds alike", "waste basket", ["trash can"], "", True),  # both hold rubbish
    ("genus named", "beaker", ["mug"], "", True),  # "a cup": the embedder's cup is a mug
    ("parts match", "media console", ["tv stand"], "", True),
    ("other heads", "exercise equipment", ["exercise bike"], "", True),
    ("stands out", "cup", ["mug"], "", True),
    ("definitions", "light", ["lamp"], "", True),
]


def _found(rule: FoundRule, phrase: str, labels: list[str], description: str) -> bool:
    return rule.match(phrase, labels, description) >= rule.margin


def test_every_row_has_its_case():
    assert [c[0] for c in CASES] == [r.name for r in READINGS]


@pytest.mark.parametrize("row, phrase, labels, description, expected", CASES, ids=[c[0] for c in CASES])
def test_each_reading_decides_its_case(rule, monkeypatch, row, phrase, labels, description, expected):
    """Found (or not) as a user would see it, and the other way once the row is taken out."""
    assert _found(rule, phrase, labels, description) is expected, (row, rule.match(phrase, labels, description))
    rows = [r for r in READINGS if r.name == row]
    assert len(rows) == 1, f"no reading {row!r} in the table"
    monkeypatch.setattr(found, "READINGS", tuple(r for r in READINGS if r.name != row))
    assert _found(rule, phrase, labels, description) is not expected, f"{row!r} does not decide {phrase!r}"


def _reads(row) -> str:
    if not row.per_label:
        return "the phrase" if row.effect == ALSO_READS else "the object"
    if row.only:
        return f"only {row.only}"
    return "all kept" + (f", less {', '.join(row.skips)}" if row.skips else "")


def test_the_table_is_the_documented_order():
    """docs/ASK.md's table lists every row, in order, with what it reads and what it does."""
    text = DOC.read_text()
    section = text[text.index("## The found decision"):]
    section = section[:section.index("\n## ")]
    documented = [tuple(c.strip() for c in m.group(1).split("|")[:3])
                  for m in re.finditer(r"^\| \d+ \|(.*)\|$", section, re.M)]
    assert documented == [(r.name, _reads(r), r.effect) for r in READINGS]


def test_what_removes_labels_runs_before_what_reads_them():
    effects = [r.effect for r in READINGS]
    first_label_name = next(i for i, r in enumerate(READINGS) if r.per_label and r.effect == NAMES)
    assert max(i for i, e in enumerate(effects) if e == DROPS) < first_label_name  # senses before names
    scores = [i for i, e in enumerate(effects) if e == SCORES]
    assert scores == list(range(len(READINGS) - len(scores), len(READINGS)))  # scores last
    assert max(i for i, e in enumerate(effects) if e == SETS_ASIDE) < min(scores)
    # and the loop's own check refuses a table where a scoring row runs before what it skips
    stands_out = next(r for r in READINGS if r.name == "stands out")
    with pytest.raises(ValueError, match="stands out"):
        check_readings((stands_out, *(r for r in READINGS if r is not stands_out)))
    with pytest.raises(ValueError, match="twice"):
        check_readings((*READINGS, READINGS[-1]))
    with pytest.raises(ValueError, match="unknown effect"):
        check_readings((replace(READINGS[0], effect="maybe"),))


def test_a_part_whose_definition_names_the_label_is_found_where_its_whole_is(rule, monkeypatch):
    """"White lampshade" got no goal on a read generated tour (721): the lamp was seen as "light".
    A lampshade, "a ... shade used to screen a *light* bulb", is a part of a lamp only, and a lamp
    and a light are both "a source of illumination"; the embedder puts the two 0.08 over
    background, under the margin alone. Not so a candle (filed under lamp, not one), nor a vase."""
    assert _found(rule, "lampshade", ["light"], "")
    assert not _found(rule, "lampshade", ["vase"], "")
    assert not _found(rule, "lampshade", ["candle"], "")
    monkeypatch.setattr(found, "READINGS", tuple(r for r in READINGS if r.name != "part of one whole"))
    assert not _found(rule, "lampshade", ["light"], "")


def test_a_row_that_sets_labels_aside_keeps_them_from_the_scores(rule, monkeypatch):
    """"Waste basket" and a thing seen as "basket": set aside (not its head), the shared word is
    never scored; run after the scores, the embedder's 0.35 over background would find it."""
    assert not _found(rule, "waste basket", ["basket"], "")
    late = [r for r in READINGS if r.name != "not its head"] + [r for r in READINGS if r.name == "not its head"]
    monkeypatch.setattr(found, "READINGS", tuple(late))
    assert _found(rule, "waste basket", ["basket"], "")


def test_a_word_formed_on_the_label_names_it_through_an_untagged_sense(rule):
    """"Washbasin" is a "basin for washing the hands" only in its second sense, untagged like
    every other, and the embedder finds the two words less alike than background: the unsure-link
    reading dropped it, and a sink seen as "basin" was "not seen" when asked for as a washbasin
    (fresh seed 683). The word is wash + basin: its form says which sense is meant. A hob, whose
    shelf sense is as untagged but whose form says nothing of shelves, stays dropped."""
    assert _found(rule, "washbasin", ["basin"], "")
    assert not _found(rule, "hob", ["shelf"], "")
