"""A word's rare senses reached from the other side, and a room that must not outweigh a name.

"bed" names a thing seen as "cushion" only through bed's sixth sense ("layer, bed", what the
billiard-table cushion is a kind of): the lexicon counts a word's ``MAX_SENSES`` common senses
only, in either direction. And "the armchair in the living room" is the armchair the memory files
under the hallway, said so, not a cushion in the living room the embedder finds a little alike."""

from __future__ import annotations

import pytest

from helpers_ask import add_objects, ask_ok, make_memory  # keyframes at x = 0.5 m per second seen
from vlkng_ros.core.lexicon import find_wordnet_dir, is_kind_of, make_lexicon

CUSHION = {"id": "o-cushion", "label": "cushion", "description": "a blue cushion", "position": (5.5, 0.8),
           "seen": [10, 11, 12], "place": "living room"}
SOFA = {"id": "o-sofa", "label": "sofa", "description": "a grey fabric sofa", "position": (6.8, 0.8),
        "seen": [13, 14], "place": "living room"}
ARMCHAIR = {"id": "o-armchair", "label": "armchair", "description": "a brown leather armchair",
            "position": (10.5, 0.8), "seen": [20, 21, 22], "place": "hallway"}

needs_wordnet = pytest.mark.skipif(find_wordnet_dir() is None, reason="no WordNet files installed")


@needs_wordnet
def test_a_rare_sense_of_the_asked_word_reached_from_the_label_does_not_name_it():
    lex = make_lexicon("wordnet")
    assert not is_kind_of(lex, "cushion", "bed")  # bed's sixth sense, "layer, bed"
    # the common senses still link, both ways a relation is read
    assert is_kind_of(lex, "couch", "sofa") and is_kind_of(lex, "coffee table", "table")
    assert is_kind_of(lex, "armchair", "chair") and is_kind_of(lex, "bolster", "pillow")


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    mem = make_memory(tmp_path_factory.mktemp("farsense"))
    add_objects(mem, [CUSHION, SOFA, ARMCHAIR])
    yield mem
    mem.close()


@needs_wordnet
def test_the_bed_is_not_found_where_only_a_cushion_was_seen(tmp_path):
    mem = make_memory(tmp_path)
    try:
        add_objects(mem, [CUSHION, SOFA])
        res = ask_ok(mem, "Where is the bed?")
        assert not res.found and res.target_object_id != "o-cushion"
        assert ask_ok(mem, "Where is the cushion?").target_object_id == "o-cushion"
    finally:
        mem.close()


@needs_wordnet
def test_a_thing_named_in_another_room_beats_one_only_alike_in_the_asked_room(memory):
    res = ask_ok(memory, "Where is the armchair in the living room?")
    assert res.found and res.target_object_id == "o-armchair"
    assert "hallway" in res.answer  # where it was seen, said plainly
    # a thing named in the asked room still comes first
    assert ask_ok(memory, "Where is the sofa in the living room?").target_object_id == "o-sofa"
