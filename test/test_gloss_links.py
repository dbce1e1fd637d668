"""Names the found decision links to what perception saw through the dictionary's other relations.

* "greenery", "green foliage": foliage is a plant organ "in higher *plants*", a plant part, which
  WordNet lists as a part of a plant and of nothing else. A thing seen as "plant" is the greenery
  asked for. A drawer (a part of chests, sideboards, desks) finds no dresser, a keyboard (a part of
  pianos, organs, typewriters, computers) no piano.
* "waste basket", "a container ...; for discarded paper and other *rubbish*", and a trash can, "a
  bin that holds *rubbish*": two containers defined by what they hold. A "bin" (the genus alone)
  finds no laundry basket, which holds dirty clothes.
* "beaker", "a cup (usually without a handle)": a thing seen as "mug" is what a cup finds. A
  "tumbler", a glass, finds no mug, and a cup is no glass."""

from __future__ import annotations

import pytest

from helpers_ask import add_objects, ask_ok, make_memory  # keyframes at x = 0.5 m per second seen
from vlkng_ros.core.lexicon import find_wordnet_dir, hold_alike, make_lexicon

needs_wordnet = pytest.mark.skipif(find_wordnet_dir() is None, reason="no WordNet files installed")


def _thing(name: str, label: str, description: str, x: float, seen: list[int], place: str) -> dict:
    return {"id": f"o-{name}", "label": label, "description": description, "position": (x, 0.8),
            "seen": seen, "place": place}


PLANT = _thing("plant", "plant", "a green potted plant", 2.5, [4, 5, 6], "office")
TRASH = _thing("trash", "trash can", "a black plastic trash can", 5.5, [10, 11, 12], "kitchen")
MUG = _thing("mug", "mug", "an orange ceramic mug", 8.5, [16, 17], "kitchen")
LAUNDRY = _thing("laundry", "laundry basket", "a white plastic laundry basket", 11.5, [22, 23], "bedroom")
DRESSER = _thing("dresser", "dresser", "a brown wooden dresser", 14.5, [28, 29], "bedroom")
PIANO = _thing("piano", "piano", "a black upright piano", 17.5, [34, 35], "living room")
GLASS = _thing("glass", "glass", "a clear drinking glass", 20.5, [40, 41], "dining room")


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    mem = make_memory(tmp_path_factory.mktemp("glosslink"))
    add_objects(mem, [PLANT, TRASH, MUG, LAUNDRY, DRESSER, PIANO, GLASS])
    yield mem
    mem.close()


@needs_wordnet
def test_the_lexicon_links_a_part_of_one_whole_and_containers_of_one_content():
    lex = make_lexicon("wordnet")
    assert lex.part_of_one_whole("greenery", "plant")  # foliage, "in higher plants", a plant part
    assert not lex.part_of_one_whole("drawer", "dresser")  # a part of chests, desks, sideboards ...
    assert not lex.part_of_one_whole("keyboard", "piano")  # of pianos, organs, typewriters, computers
    assert hold_alike(lex, "waste basket", "trash can")  # both hold rubbish
    assert not hold_alike(lex, "bowl", "glass")  # food or liquids / liquids: an everyday word
    assert not hold_alike(lex, "laundry basket", "trash can")  # dirty clothes / rubbish


@needs_wordnet
@pytest.mark.parametrize("question, target", [
    ("Where was I when I first saw the green greenery in the office?", "o-plant"),
    ("Where can I find the black waste basket?", "o-trash"),
    ("Which room was I in when I first noticed the wastebasket?", "o-trash"),
    ("Where can I find the orange beaker?", "o-mug"),
    ("Where is the cup?", "o-mug"),  # kept: the embedder's cup is a mug
])
def test_a_name_the_dictionary_links_finds_the_thing(memory, question, target):
    res = ask_ok(memory, question)
    assert res.found and res.target_object_id == target, (res.found, res.target_object_id)


@needs_wordnet
@pytest.mark.parametrize("question, not_at", [
    ("Where is the drawer?", "o-dresser"),  # a part of many things: the dresser is not "the drawer"
    ("Where is the keyboard?", "o-piano"),  # a computer's as much as a piano's
    ("Where is the tumbler?", "o-mug"),  # a glass
    ("Where is the bin?", "o-laundry"),  # a container for rubbish, not for dirty clothes
])
def test_a_part_or_a_container_of_another_kind_is_not_found(memory, question, not_at):
    res = ask_ok(memory, question)
    assert res.target_object_id != not_at or not res.found, (res.found, res.target_object_id)


@needs_wordnet
def test_the_routes_stop_where_the_dictionary_says_more(memory):
    from vlkng_ros.core.ask.engine import AskEngine

    rule = AskEngine(memory, memory.cfg).found_rule
    assert rule.match("cup", ["glass"]) < rule.margin  # a beaker's genus finds the mug, not a glass
    assert rule.match("tumbler", ["mug"]) < rule.margin  # a glass: no genus the embedder finds as a mug
    assert rule.match("apple", ["plant"]) < rule.margin  # a fruit: a plant organ five steps up, not three
    assert rule.match("fruit", ["plant"]) < rule.margin  # a class of things seen and named apart
    assert rule.match("countertop", ["table"]) < rule.margin  # a counter's part before a tabletop
    assert rule.match("dresser", ["wardrobe"]) < rule.margin  # both keep clothes, as furniture
    assert rule.match("dumbbell", ["exercise machine"]) < rule.margin  # "an exercising weight": a weight
