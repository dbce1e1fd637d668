"""AskEngine on tiny real memories (sqlite + qdrant local + MiniLM)."""

from __future__ import annotations

import copy
import math

import pytest

from helpers_ask import KITCHEN, KITCHEN_RELS, T0, add_objects, make_memory
from vlkng_ros.core.ask.engine import AskEngine
from vlkng_ros.core.ask.types import AskRequest
from vlkng_ros.core.llm.base import LLM, LLMError

SEC = 1_000_000_000


@pytest.fixture(scope="module")
def kitchen(tmp_path_factory):
    mem = make_memory(tmp_path_factory.mktemp("kitchen"))
    add_objects(mem, KITCHEN, KITCHEN_RELS)
    yield mem
    mem.close()


def seconds(res):
    return [(f.stamp_ns - T0) // SEC for f in res.frames]


@pytest.mark.parametrize("question,target,seen", [
    ("Where did I see a cup?", "o-mug", {10, 11, 12}),                       # synonym
    ("Where did I see something to boil water with?", "o-kettle", {11, 12, 13}),  # affordance
    ("where was the couch I could sit on", "o-sofa", {30, 31, 32}),        # paraphrase
])
def test_synonyms_paraphrases_affordances_find_the_object(kitchen, question, target, seen):
    res = AskEngine(kitchen, kitchen.cfg).ask(AskRequest(question))
    assert res.success and res.found
    assert res.target_object_id == target
    assert set(seconds(res)[:3]) <= seen
    assert res.goal is not None and res.goal_source == "object_position"
    node = kitchen.graph.get_objects([target])[0]
    tx, ty = res.target_position
    assert abs(tx - node.position[0]) + abs(ty - node.position[1]) < 1.0
    # the goal stands off from it (robot radius + clearance at least), facing it
    d = math.hypot(res.goal.x - tx, res.goal.y - ty)
    assert d >= kitchen.cfg.ask.robot_radius_m + kitchen.cfg.ask.goal_clearance_m - 1e-6
    assert abs(math.remainder(res.goal.yaw - math.atan2(ty - res.goal.y, tx - res.goal.x), 2 * math.pi)) < 1e-6
    assert res.frames[0].pose is not None


def test_relation_question_picks_option_and_frames(kitchen):
    res = AskEngine(kitchen, kitchen.cfg).ask(AskRequest(
        "What was on the counter next to the kettle?", ["A. a laptop", "B. a red mug", "C. a plant", "D. a chair"]))
    assert res.choice == "B" and res.target_object_id == "o-mug"
    assert seconds(res)[0] in {10, 11, 12}
    assert {r.predicate for r in res.evidence_relations} >= {"on", "next to"}


def test_top_k_zero_or_less_means_the_configured_ask_top_k(kitchen):
    cfg = copy.deepcopy(kitchen.cfg)
    cfg.ask.top_k = 2
    engine = AskEngine(kitchen, cfg)
    question = "Where did I see a cup?"  # the mug is in 3 frames
    assert len(engine.ask(AskRequest(question)).frames) == 2  # not given: ask.top_k, not a hard-coded 5
    assert len(engine.ask(AskRequest(question, top_k=-1)).frames) == 2
    assert len(engine.ask(AskRequest(question, top_k=1)).frames) == 1


def test_never_seen_object_says_so_without_frames_or_goal(kitchen):
    res = AskEngine(kitchen, kitchen.cfg).ask(AskRequest("Where did I see a giraffe?"))
    assert res.success and not res.found
    assert res.frames == [] and res.goal is None
    assert "not seen" in res.answer and "giraffe" in res.message


@pytest.mark.parametrize("question", ["", "   \n ", "x" * 10_000])
def test_empty_and_huge_questions_are_clear_errors(kitchen, question):
    res = AskEngine(kitchen, kitchen.cfg).ask(AskRequest(question))
    assert not res.success and res.frames == []
    assert ("empty" in res.message) or ("too long" in res.message and "2000" in res.message)


def test_cypher_and_quotes_are_plain_text(kitchen):
    before = (kitchen.graph.count_objects(), kitchen.graph.count_relations())
    for q in ['MATCH (n) DETACH DELETE n', "mug' OR 1=1; DROP TABLE objects; --",
              'the "red" mug}) RETURN n //', "'; MATCH (o:Object) SET o.label = 'pwned"]:
        res = AskEngine(kitchen, kitchen.cfg).ask(AskRequest(q))
        assert res.success
    assert (kitchen.graph.count_objects(), kitchen.graph.count_relations()) == before
    assert all(o.label != "pwned" for o in kitchen.graph.get_objects(["o-mug", "o-kettle"]))
    res = AskEngine(kitchen, kitchen.cfg).ask(AskRequest('the "red" mug}) RETURN n //'))
    assert res.target_object_id == "o-mug"


class GarbageLLM(LLM):
    """Decomposes fine, but answers with frames that do not exist, then with junk."""

    name = "fake"

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.calls = 0

    def generate_json(self, prompt, schema, images=(), usage=None):
        self.calls += 1
        if usage is not None:
            usage.prompt_chars += len(prompt)
        if "decompose" in prompt:
            return {"target": "mug", "attributes": ["red"], "relations": []}
        if self.mode == "junk":
            raise LLMError("model output is not valid JSON: '{\"answer\": \"the mu'")
        if self.mode == "wrong-choice":
            return {"answer": "Z", "choice": "Z", "frames": []}
        return {"answer": "the red mug on the counter", "choice": "", "target": "o-mug",
                "frames": [str(T0 + 99 * SEC), str(T0 + 11 * SEC), "not-a-stamp"]}


@pytest.mark.parametrize("mode", ["junk", "wrong-choice"])
def test_malformed_llm_answer_falls_back_and_says_so(kitchen, mode):
    llm = GarbageLLM(mode)
    opts = ["A. a laptop", "B. a red mug"] if mode == "wrong-choice" else []
    res = AskEngine(kitchen, kitchen.cfg, llm).ask(AskRequest("Where did I see the red mug?", opts))
    assert res.success and res.found and llm.calls == 2
    assert "offline evidence scorer" in res.message
    assert res.target_object_id == "o-mug" and seconds(res)[0] in {10, 11, 12}


def test_llm_frames_not_in_memory_are_dropped(kitchen):
    res = AskEngine(kitchen, kitchen.cfg, GarbageLLM("ok")).ask(AskRequest("Where did I see the red mug?"))
    assert res.answer == "the red mug on the counter"
    assert seconds(res)[0] == 11 and 99 not in seconds(res)
    assert "dropped 2 frame" in res.message
    assert res.prompt_tokens["answer"] <= kitchen.cfg.ask.max_prompt_tokens


def test_ger_finds_what_only_embeddings_can(tmp_path):
    """Label text says 'appliance'; only the description says kettle: GR misses, GER finds it."""
    mem = make_memory(tmp_path)
    specs = [{"id": "o-app", "label": "appliance", "description": "a steel electric kettle for boiling water",
              "position": (1.0, 1.0), "seen": [5, 6]},
             {"id": "o-chair", "label": "chair", "description": "a wooden chair", "position": (4.0, 0.0),
              "seen": [20, 21]}]
    add_objects(mem, specs)
    try:
        eng = AskEngine(mem, mem.cfg)
        ger = eng.ask(AskRequest("Where is the kettle?", mode="ger"))
        gr = eng.ask(AskRequest("Where is the kettle?", mode="gr"))
        assert ger.found and ger.target_object_id == "o-app" and seconds(ger)[0] in {5, 6}
        assert not gr.found and gr.frames == []
    finally:
        mem.close()


@pytest.mark.parametrize("question,target,relations", [
    ("Where can I sit to put on my shoes?", "sit put on shoes", []),      # "put on": a verb, not "on the shoes"
    ("Where can I sit and work on my computer?", "sit work on computer", []),
    ("Where can I wash my hands in the bathroom?", "wash hands", []),     # the place stays a place
    ("Where can I find the green plant in the hallway?", "plant", []),    # finding a thing: not an activity
    ("What did I put on the table?", "put", [("on", "table")]),           # a relation where it is one
    ("Take me to the easy chair.", "easy chair", []),                     # a command names its target
    ("Could you take me to the red mug on the table?", "mug", [("on", "table")]),
    ("Where could I take a nap?", "take nap", []),                        # "take" is not always a command
    ("Where can I have a meal?", "have meal", []),                        # "have" + a thing: a use, not the meal
    ("Where could I have a long soak?", "have long soak", []),
    ("Have you seen my mug?", "mug", []),                                 # "have" asking: no activity
    ("Where can I have it?", "", []),                                     # nothing after "have": as before
    # round 8: a place named by what is done there, a passive of things in general, "while VERBing"
    ("Where is a comfy spot to read a book?", "read book", []),            # the reading, not the book
    ("Where is a good place to do paperwork?", "do paperwork", []),
    ("Where do books get stored?", "stored books", []),                    # the storing of books
    ("Where could I sit while tying my laces?", "sit tying laces", []),    # one activity, no time cue
    ("Where are the books kept?", "books kept", []),                       # these books: where they are
    ("Where is the lamp?", "lamp", []),
])
def test_activity_questions_keep_their_verb_particles(question, target, relations):
    from vlkng_ros.core.ask.query import parse_offline

    pq = parse_offline(question)
    assert pq.target == target and [(r.predicate, r.ref) for r in pq.relations] == relations


@pytest.mark.parametrize("question,cue", [
    ("Where did I see the plant while passing the kitchen?", "when"),  # no activity: a time cue
    ("Where can I sit while the kettle boils?", "when"),              # a clause of its own: a time cue
])
def test_while_is_a_time_cue_outside_an_activity(question, cue):
    from vlkng_ros.core.ask.query import parse_offline

    assert cue in [t.cue for t in parse_offline(question).time]


@pytest.mark.parametrize("question,target,places", [
    ("Where is the trash can?", "trash can", []),  # "can" after a noun is the noun, not the verb
    ("Take me to the watering can", "watering can", []),
    ("Where can I find the trash can?", "trash can", []),
    ("Is there a trash can in the kitchen?", "trash can", ["kitchen"]),
    ("Which room can I sleep in?", "sleep", []),  # the verb: a subject follows it
    ("Where can I sit?", "sit", []),
    ("Where did I see something that shows the time?", "shows time", []),  # "time": what it shows
    ("Where did I see the plant the second time?", "plant", []),  # "time": which sighting
])
def test_function_words_that_are_nouns_here(question, target, places):
    from vlkng_ros.core.ask.query import parse_offline

    pq = parse_offline(question)
    assert pq.target == target and pq.places == places


@pytest.mark.parametrize("question,known,target,places,entities", [
    # a room named by two words is one place, not a place and a thing called "living"/"laundry"
    ("Where did we pass the green plant in the living room?", (), "plant", ["living room"], ["plant"]),
    ("Where is the towel in the laundry room?", (), "towel", ["laundry room"], ["towel"]),
    ("What did I see after I left the living room?", (), "", [], []),
    ("Where is the vase on the table in the dining room?", (), "vase", ["dining room"], ["vase", "table"]),
    ("Where is the living room lamp?", (), "lamp", ["living room"], ["lamp"]),
    ("Where is the mug in the guest bedroom?", (), "mug", ["bedroom"], ["mug"]),
    # a kind of place only this memory has: a place where the memory knows it, a thing elsewhere
    ("Where did I see the lamp in the study?", ("study", "kitchen"), "lamp", ["study"], ["lamp"]),
    ("Where did I see the lamp in the study?", (), "lamp", [], ["lamp", "study"]),
    ("Where is my study guide?", ("study",), "study guide", [], ["study guide"]),
])
def test_rooms_named_in_a_question_are_places(question, known, target, places, entities):
    from vlkng_ros.core.ask.query import parse_offline

    pq = parse_offline(question, known)
    assert (pq.target, pq.places, pq.entities) == (target, places, entities)
    assert not [r for r in pq.relations if r.ref in ("living", "laundry", "dining", "guest", "study")] or not known


@pytest.mark.parametrize("question,target,attributes,places", [
    # a thing named first and asked about as "it": the colon is lost to the words, so without the
    # fronted phrase read back in, "console" and "room" met as a place, "console room"
    ("The media console: which room was it in?", "media console", [], []),
    ("The red mug: where did I see it?", "mug", ["red"], []),
    ("The plant in the kitchen: where was it?", "plant", [], ["kitchen"]),
])
def test_a_thing_named_before_a_colon_is_what_it_asks_about(question, target, attributes, places):
    from vlkng_ros.core.ask.query import parse_offline

    pq = parse_offline(question)
    assert (pq.target, pq.attributes, pq.places) == (target, attributes, places)


def test_a_room_the_memory_knows_steers_the_search(tmp_path):
    """"The lamp in the study": with a study among the memory's places, the study's lamp, not
    the lamp nearest a thing called "study"."""
    from helpers_ask import add_objects, make_memory

    mem = make_memory(tmp_path)
    add_objects(mem, [
        {"id": "o-lamp-bed", "label": "lamp", "description": "a lamp", "position": (1.0, 0.0), "seen": [1, 2, 3, 4],
         "place": "bedroom"},
        {"id": "o-lamp-study", "label": "lamp", "description": "a lamp", "position": (9.0, 0.0), "seen": [20, 21],
         "place": "study"},
    ])
    try:
        res = AskEngine(mem, mem.cfg).ask(AskRequest("Where did I see the lamp in the study?"))
        assert res.found and res.target_object_id == "o-lamp-study"
    finally:
        mem.close()


def test_activity_with_a_particle_finds_the_object_for_it(tmp_path):
    from helpers_ask import add_objects, make_memory

    mem = make_memory(tmp_path)
    add_objects(mem, [
        {"id": "o-bench", "label": "bench", "description": "a wooden bench", "position": (1.0, 0.0),
         "seen": [5, 6, 7], "affordances": ["sit on", "put on shoes at"]},
        {"id": "o-chair", "label": "chair", "description": "a plastic chair", "position": (6.0, 2.0),
         "seen": [20, 21, 22], "affordances": ["sit on"]},
        {"id": "o-rack", "label": "shoe rack", "description": "a metal shoe rack", "position": (1.5, 0.5),
         "seen": [8, 9], "affordances": ["store shoes on"]},
    ])
    res = AskEngine(mem, mem.cfg).ask(AskRequest("Where can I sit to put on my shoes?"))
    mem.close()
    assert res.found and res.target_object_id == "o-bench"


def test_an_affordance_said_word_for_word_beats_the_closest_label(tmp_path):
    """"Where can I sit to watch TV?": the sofa's "watch TV from" says it (0.88); "armchair" is
    only the label closest to "sit watch tv" (0.50), a guess that, found by the label, text and
    affordance signals at once, used to outvote it in the fusion."""
    mem = make_memory(tmp_path)
    add_objects(mem, [
        {"id": "o-armchair", "label": "armchair", "description": "a brown leather armchair", "position": (8.0, -2.0),
         "seen": list(range(40, 80)), "affordances": ["sit on", "read in"]},
        {"id": "o-sofa", "label": "sofa", "description": "a gray fabric sofa", "position": (1.3, -1.8),
         "seen": [5, 6, 7, 8, 9], "affordances": ["sit on", "lie down on", "watch TV from"]},
        {"id": "o-bench", "label": "bench", "description": "a brown wood bench", "position": (0.4, 1.4),
         "seen": [20, 21, 22], "affordances": ["sit on", "put on shoes at"]},
        {"id": "o-chair", "label": "chair", "description": "a black wood chair", "position": (2.4, 4.4),
         "seen": [30, 31, 32], "affordances": ["sit on"]},
        {"id": "o-stand", "label": "tv stand", "description": "a black wood tv stand", "position": (1.0, -4.0),
         "seen": [10, 11], "affordances": ["put things on"]},
    ])
    res = AskEngine(mem, mem.cfg).ask(AskRequest("Where can I sit to watch TV?"))
    mem.close()
    assert res.found and res.target_object_id == "o-sofa"


def test_first_saw_question_leads_with_the_first_visit():
    """"When did I first see the plant?": a frame of the plant's first visit ranks first even
    when a later, clearer view scores higher; the other frames keep their order."""
    from vlkng_ros.core.ask.answer import FrameScore, visit_first
    from vlkng_ros.core.ask.query import parse_offline
    from vlkng_ros.core.model import ObjectNode, Observation

    sightings = [1, 2, 3, 60, 61, 62]  # seconds: a first visit, then a second one a minute later
    node = ObjectNode("o-plant", "plant", observations=[
        Observation("home", s * SEC, (10, 10, 50, 50), "c", "o1") for s in sightings])
    scored = [FrameScore("home", s * SEC, score, ["o-plant"]) for s, score in
              [(61, 0.9), (62, 0.8), (2, 0.5), (60, 0.4), (1, 0.3)]]
    first = visit_first(scored, node, parse_offline("Where was I when I first saw the plant?"))
    assert [f.stamp_ns // SEC for f in first] == [2, 61, 62, 60, 1]
    last = visit_first(scored, node, parse_offline("Where did I last see the plant?"))
    assert [f.stamp_ns // SEC for f in last] == [61, 62, 2, 60, 1]  # already led by the last visit
    assert visit_first(scored, node, parse_offline("Where is the plant?")) == scored


@pytest.mark.parametrize("related", [True, False])
def test_what_stands_on_a_loosely_placed_object_pins_its_goal(tmp_path, related):
    """A TV stand seen from one spot has a loose range (its node sits 2.2 m short of it); the TV
    seen on it, well triangulated, stands inside its footprint. The goal goes to where the TV
    says the stand is; without the "on" relation it stays at the stand's own estimate."""
    from vlkng_ros.core.model import Relation

    mem = make_memory(tmp_path)
    try:
        add_objects(mem, [
            {"id": "o-stand", "label": "tv stand", "description": "a black wood tv stand", "position": (6.5, 3.9),
             "position_var": 0.85, "seen": [10, 11, 12, 13, 14], "affordances": ["put things on"]},
            {"id": "o-tv", "label": "tv", "description": "a black tv", "position": (8.4, 5.0),
             "position_var": 0.05, "seen": [20, 21, 22, 23, 24, 25], "affordances": ["watch shows on"]},
        ])
        if related:
            mem.graph.apply_merge("home#000001", [], [Relation("o-tv", "on", "o-stand", [T0 + s * SEC for s in (20, 21, 22)], "home")])
        res = AskEngine(mem, mem.cfg).ask(AskRequest("Where was the tv stand?"))
        assert res.found and res.target_object_id == "o-stand"
        truth = (8.3, 4.95)  # where the stand really is (under the TV)
        error = math.hypot(res.target_position[0] - truth[0], res.target_position[1] - truth[1])
        assert (error < 1.0) if related else (error > 1.5)
    finally:
        mem.close()


def test_a_relation_that_cannot_be_true_does_not_move_the_goal(tmp_path):
    """Perception once said a chair was "on" the sofa, but both are well placed 2.9 m apart: the
    chair is not inside the sofa's footprint, so it does not pull the sofa's goal toward it."""
    from vlkng_ros.core.model import Relation

    mem = make_memory(tmp_path)
    try:
        add_objects(mem, [
            {"id": "o-sofa", "label": "sofa", "description": "a green sofa", "position": (3.3, -3.4),
             "position_var": 0.25, "seen": [10, 11, 12, 13], "affordances": ["sit on"]},
            {"id": "o-chair", "label": "chair", "description": "a brown chair", "position": (2.05, -0.55),
             "position_var": 0.09, "seen": list(range(20, 40)), "affordances": ["sit on"]},
        ])
        mem.graph.apply_merge("home#000001", [], [Relation("o-chair", "on", "o-sofa", [T0 + s * SEC for s in (20, 21)], "home")])
        res = AskEngine(mem, mem.cfg).ask(AskRequest("Where did I see the couch?"))
        assert res.found and res.target_object_id == "o-sofa"
        assert math.hypot(res.target_position[0] - 3.3, res.target_position[1] + 3.4) < 0.5
    finally:
        mem.close()


@pytest.mark.parametrize("related", [True, False])
def test_a_far_small_thing_seen_from_one_spot_is_placed_on_what_it_stands_on(tmp_path, related):
    """A toaster seen only from (0, 0) while the robot turned: its bearings meet at the camera, so
    its node sits at the range prior, 2.5 m along the line to it (true place 4.6 m off). It was
    seen on the counter, which is well placed: the goal goes where its bearings cross the counter.
    Without the relation it stays where its bearings alone put it."""
    from dataclasses import replace

    from vlkng_ros.core.geometry import Ray, RayAccumulator
    from vlkng_ros.core.model import Relation

    truth = (4.4, 1.3)
    rays = RayAccumulator()
    for wobble in (-0.01, 0.0, 0.01):
        rays.add(Ray((0.0, 0.0), math.atan2(truth[1], truth[0]) + wobble))
    (px, py), var = rays.solve()
    assert math.dist((px, py), truth) > 1.5 and var > 0.5
    mem = make_memory(tmp_path)
    try:
        add_objects(mem, [
            {"id": "o-toaster", "label": "toaster", "description": "a silver toaster", "position": (px, py),
             "position_var": var, "seen": [10, 11, 12], "affordances": ["toast bread"]},
            {"id": "o-counter", "label": "counter", "description": "a white counter", "position": (4.5, 1.5),
             "position_var": 0.05, "seen": list(range(20, 30)), "affordances": ["put things on"]},
        ])
        toaster = replace(mem.graph.get_objects(["o-toaster"])[0], ray_stats=rays.to_list())
        rels = [Relation("o-toaster", "on", "o-counter", [T0 + s * SEC for s in (10, 11)], "home")] if related else []
        mem.graph.apply_merge("home#000001", [toaster], rels)
        res = AskEngine(mem, mem.cfg).ask(AskRequest("Where did I see the toaster?"))
        assert res.found and res.target_object_id == "o-toaster"
        error = math.hypot(res.target_position[0] - truth[0], res.target_position[1] - truth[1])
        assert (error < 0.5) if related else (error > 1.5)
    finally:
        mem.close()


def test_the_evidence_leads_with_the_answers_object():
    """A retrieval score can be highest for an object under the relevance floor (the table for
    "where should I put the milk?"); the reply's evidence still starts with the answer's object."""
    from vlkng_ros.core.ask.answer import evidence
    from vlkng_ros.core.ask.graph_retrieval import Subgraph
    from vlkng_ros.core.model import ObjectNode

    sub = Subgraph(objects={"o-table": ObjectNode("o-table", "table"), "o-fridge": ObjectNode("o-fridge", "fridge"),
                            "o-mug": ObjectNode("o-mug", "mug")},
                   scores={"o-table": 1.0, "o-fridge": 0.98, "o-mug": 0.5})
    assert [o.id for o in evidence(sub)[0]] == ["o-table", "o-fridge", "o-mug"]
    assert [o.id for o in evidence(sub, lead="o-fridge")[0]] == ["o-fridge", "o-table", "o-mug"]
    assert [o.id for o in evidence(sub, lead="o-gone")[0]] == ["o-table", "o-fridge", "o-mug"]


def test_options_are_read_one_way_from_questions_to_prompt_to_choice():
    from vlkng_ros.core.ask.options import parse_choice, parse_options, render_options
    from vlkng_ros.core.tour import _question_problem as validate_tour_question

    opts = parse_options(["A. a laptop", "(b) a red mug", "a plant"])
    assert opts == [("A", "a laptop"), ("B", "a red mug"), ("C", "a plant")]
    assert render_options(opts) == "A. a laptop | B. a red mug | C. a plant"
    assert parse_choice(" b. a red mug", opts) == "B" and parse_choice("Z", opts) is None
    assert parse_choice("", []) == ""
    # a tour's questions.json is checked with the same reading of the letters
    q = {"id": "q1", "type": "object", "question": "What was on the desk?", "options": ["A. x", "(B) y"]}
    assert validate_tour_question({**q, "answer": "B"}) is None
    assert "not one of the options" in validate_tour_question({**q, "answer": "C"})


@pytest.mark.parametrize("question", ["Show me where the armchair is.", "What room was the armchair in?",
                                      "Which room was I in when I first noticed the armchair?"])
def test_of_two_things_once_called_the_asked_name_the_one_called_so_most_often_is_the_target(tmp_path, question):
    """Perception called an office chair an armchair in one of three chunks and the armchair a
    chair in one of two: both nodes are "chair" by majority and both were called "armchair", so
    both are found. The office chair, seen far more often, ranks first in retrieval; the armchair
    was called by the asked name in a larger share of its chunks (1 of 2 vs 1 of 3), so it is the
    target and gets the goal, also when the question asks when it was first seen."""
    mem = make_memory(tmp_path)
    try:
        add_objects(mem, [
            {"id": "o-office", "label": "chair", "description": "a brown wooden chair", "position": (7.3, -3.6),
             "seen": list(range(10, 27)), "labels_seen": ["chair", "armchair"],
             "label_votes": {"chair": 2, "armchair": 1}, "places": ["office"]},
            {"id": "o-arm", "label": "chair", "description": "a navy fabric chair", "position": (5.4, 4.6),
             "seen": [40, 41, 42, 43], "labels_seen": ["chair", "armchair"],
             "label_votes": {"chair": 1, "armchair": 1}, "places": ["living room"]},
        ])
        res = AskEngine(mem, mem.cfg).ask(AskRequest(question))
        assert res.found and res.target_object_id == "o-arm"
        assert res.target_position == pytest.approx((5.4, 4.6))
        assert res.goal is not None and math.hypot(res.goal.x - 5.4, res.goal.y - 4.6) < 2.5  # not 9 m off at the office chair
    finally:
        mem.close()


def test_name_share_counts_the_chunks_that_called_it_so_shrunk_toward_a_half():
    from vlkng_ros.core.ask.answer import name_share
    from vlkng_ros.core.model import ObjectNode

    once_of_one = ObjectNode("a", "armchair", label_votes={"armchair": 1})
    often = ObjectNode("b", "chair", label_votes={"armchair": 5, "chair": 1})
    assert name_share(once_of_one, "armchair") == pytest.approx(2 / 3)
    assert name_share(often, "armchair") == pytest.approx(6 / 8)  # more evidence beats one lucky chunk
    assert name_share(ObjectNode("c", "chair"), "armchair") == pytest.approx(1 / 3)  # no votes: its label, once


def test_things_of_one_label_placed_well_apart_are_not_pooled_for_the_goal(tmp_path):
    """Three cushions on a sofa, each placed to a few centimetres, 1.2-1.5 m apart: the pink one's
    goal position is its own, not pulled 0.97 m toward the others as if they were fragments of
    it. A fragment that could be the same cushion (0.1 m off, loosely placed) still pools."""
    mem = make_memory(tmp_path)
    try:
        cushion = {"label": "cushion", "position_var": 0.004, "labels_seen": ["cushion"]}
        add_objects(mem, [
            cushion | {"id": "o-pink", "description": "a pink cushion", "attributes": {"color": "pink"},
                       "position": (4.91, -4.61), "seen": list(range(10, 18))},
            cushion | {"id": "o-orange", "description": "an orange cushion", "attributes": {"color": "orange"},
                       "position": (3.66, -4.68), "seen": list(range(20, 29))},
            cushion | {"id": "o-yellow", "description": "a yellow cushion", "attributes": {"color": "yellow"},
                       "position": (3.50, -4.14), "seen": list(range(30, 40))},
        ])
        res = AskEngine(mem, mem.cfg).ask(AskRequest("Where was the pink throw pillow?"))
        assert res.found and res.target_object_id == "o-pink"
        assert res.target_position == pytest.approx((4.91, -4.61), abs=1e-6)
        add_objects(mem, [cushion | {"id": "o-pink-bit", "description": "a pink cushion", "attributes": {"color": "pink"},
                                     "position": (4.91, -4.51), "position_var": 0.3, "seen": [50, 51]}],
                    chunk="home#000001")
        res = AskEngine(mem, mem.cfg).ask(AskRequest("Where was the pink throw pillow?"))
        assert res.target_position != pytest.approx((4.91, -4.61), abs=1e-6)  # the fragment counts
        assert math.dist(res.target_position, (4.91, -4.61)) < 0.1
    finally:
        mem.close()
