"""Which kind of place an object is in: its sightings' keyframe places (where the CAMERA was),
a near view counting far more than one through a door (graph_retrieval.place_shares), the same
for the room answer, "the plant in the kitchen", the found order and the name shown."""

from __future__ import annotations

import pytest

from helpers_ask import SEC, T0, TOUR, add_objects, make_memory
from vlkng_ros.core.ask.engine import AskEngine
from vlkng_ros.core.ask.graph_retrieval import place_shares
from vlkng_ros.core.ask.types import AskRequest
from vlkng_ros.core.model import Keyframe, ObjectNode, Observation, Pose
from vlkng_ros.core.present import map_payload, object_detail

# The kitchen plant at (5, 0): six glimpses through the kitchen door from the hallway, 4.0-4.5 m
# away, then three views from inside the kitchen, 1.0-1.4 m away.
KITCHEN_PLANT = {"id": "o-kplant", "label": "potted plant", "description": "a green potted plant",
                 "attributes": {"color": "green"}, "position": (5.0, 0.0),
                 "seen": [10, 11, 12, 13, 14, 15, 40, 41, 42], "places": ["hallway", "kitchen"]}
CAMERA = {10: ((0.5, 0.0), "hallway"), 11: ((0.6, 0.0), "hallway"), 12: ((0.7, 0.0), "hallway"),
          13: ((0.8, 0.0), "hallway"), 14: ((0.9, 0.0), "hallway"), 15: ((1.0, 0.0), "hallway"),
          40: ((4.0, 0.0), "kitchen"), 41: ((3.8, 0.0), "kitchen"), 42: ((3.6, 0.0), "kitchen")}
# The hallway plant at (-2, 3): three views from the hallway 1.5 m away, two from the kitchen
# 6-7 m away through the door (so 2 of its 5 sightings were taken in the kitchen: more than the
# kitchen plant's 3 of 9).
HALLWAY_PLANT = {"id": "o-hplant", "label": "potted plant", "description": "a green potted plant",
                 "attributes": {"color": "green"}, "position": (-2.0, 3.0),
                 "seen": [20, 21, 22, 43, 44], "places": ["hallway", "kitchen"]}
CAMERA |= {20: ((-2.0, 1.5), "hallway"), 21: ((-1.5, 1.6), "hallway"), 22: ((-2.5, 1.6), "hallway"),
           43: ((3.4, 0.5), "kitchen"), 44: ((3.2, 0.5), "kitchen")}
SOFA = {"id": "o-sofa", "label": "sofa", "description": "a grey fabric sofa", "position": (-6.0, 0.0),
        "seen": [30, 31], "places": ["living room"]}
CAMERA |= {30: ((-4.5, 0.0), "living room"), 31: ((-4.0, 0.0), "living room")}


def _memory(path, specs):
    mem = make_memory(path)
    add_objects(mem, specs)
    stamps = sorted({T0 + int(s * SEC) for spec in specs for s in spec["seen"]})
    mem.graph.upsert_keyframes(
        Keyframe(TOUR, st, i, 640, 480, Pose.from_xy_yaw(*CAMERA[(st - T0) // SEC][0], 0.0),
                 place=CAMERA[(st - T0) // SEC][1]) for i, st in enumerate(stamps))
    return mem


@pytest.fixture(scope="module")
def one_plant(tmp_path_factory):
    mem = _memory(tmp_path_factory.mktemp("one"), [KITCHEN_PLANT, SOFA])
    yield mem
    mem.close()


@pytest.fixture(scope="module")
def two_plants(tmp_path_factory):
    mem = _memory(tmp_path_factory.mktemp("two"), [KITCHEN_PLANT, HALLWAY_PLANT, SOFA])
    yield mem
    mem.close()


def ask(mem, question, options=()):
    res = AskEngine(mem, mem.cfg).ask(AskRequest(question, list(options)))
    assert res.success, res.message
    return res


def test_a_plant_seen_mostly_through_the_door_is_in_the_room_seen_up_close(one_plant):
    res = ask(one_plant, "Which room is the potted plant in?")
    assert res.answer_type == "room" and res.value.text == "kitchen"
    assert "kitchen" in res.answer
    # what the operator is shown says the same
    plant = next(o for o in map_payload(one_plant)["objects"] if o["id"] == "o-kplant")
    assert plant["place"] == "kitchen" and plant["name"].endswith("in the kitchen")
    assert object_detail(one_plant, "o-kplant")["place"] == "kitchen"
    # and the object answer names that room too
    found = ask(one_plant, "Where did I see the green potted plant?")
    assert found.found and found.target_object_id == "o-kplant" and found.value.text == "kitchen"


def test_the_plant_in_the_kitchen_is_the_one_seen_up_close_there(two_plants):
    res = ask(two_plants, "Where did I see the green potted plant in the kitchen?")
    assert res.found and res.target_object_id == "o-kplant"
    assert abs(res.target_position[0] - 5.0) < 0.5
    hall = ask(two_plants, "Where did I see the green potted plant in the hallway?")
    assert hall.found and hall.target_object_id == "o-hplant"


def test_where_i_was_when_i_first_saw_it_is_where_the_camera_was(one_plant):
    """The camera's place, not the object's: the kitchen plant was first seen from the hallway."""
    res = ask(one_plant, "Which room was I in when I first noticed the potted plant?",
              ["A. in the kitchen", "B. in the hallway", "C. in the living room"])
    assert res.choice == "B"


def _node(position, stamps):
    return ObjectNode("o", "plant", position=position,
                      observations=[Observation(TOUR, s, (0, 0, 1, 1), "c", "o") for s in stamps])


def test_shares_weigh_sightings_by_how_near_the_camera_was():
    frames = {1: ("hallway", (0.0, 0.0)), 2: ("hallway", (0.0, 0.0)), 3: ("kitchen", (4.5, 0.0)),
              4: ("kitchen", None), 5: (None, (0.0, 0.0))}
    def at(tour, stamp):
        return frames.get(stamp) if tour == TOUR else None

    # at 5 m and 0.5 m (closer than a metre counts as a metre): 2 x 1/25 against 1/1
    near = place_shares(_node((5.0, 0.0), [1, 2, 3, 5]), at)
    assert near["kitchen"] == pytest.approx(1.0 / (1.0 + 2 / 25))
    # no position: every named sighting counts alike (the unnamed one not at all)
    assert place_shares(_node(None, [1, 2, 3, 5]), at) == pytest.approx({"hallway": 2 / 3, "kitchen": 1 / 3})
    # a sighting without a camera pose counts as the average of the others
    avg = (2 / 25 + 1.0) / 3
    shares = place_shares(_node((5.0, 0.0), [1, 2, 3, 4]), at)
    assert shares["kitchen"] == pytest.approx((1.0 + avg) / (1.0 + avg + 2 / 25))
    assert place_shares(_node((5.0, 0.0), [5]), at) == {}
