"""A room the robot never entered: "the green plant in the bedroom" where no keyframe was taken in
a bedroom is the plant seen through the bedroom door from the hallway (it stands beyond every walked
room: the hallway views that looked its way from as near missed it), not the plant that stands in
the walked living room; the answer says the robot never went in (engine._beyond, _unentered;
TourIndex.beyond_walked)."""

from __future__ import annotations

import math

import pytest

from helpers_ask import add_objects, add_placed_keyframes, ask_ok, make_memory
from helpers_rooms import BED_PLANT, CAMERA, DOWN, EAST, LIVING_PLANT, UP
from vlkng_ros.core.ask.graph_retrieval import TourIndex
from vlkng_ros.core.present import object_name

@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    mem = make_memory(tmp_path_factory.mktemp("unentered"))
    add_objects(mem, [BED_PLANT, LIVING_PLANT])
    add_placed_keyframes(mem, CAMERA)
    yield mem
    mem.close()


ask = ask_ok


def test_the_plant_in_a_room_never_entered_is_the_one_seen_through_its_door(memory):
    res = ask(memory, "Where is the green plant in the bedroom?")
    assert res.found and res.target_object_id == "o-bed"
    assert res.goal is not None and math.dist((res.goal.x, res.goal.y), BED_PLANT["position"]) < 1.5
    # honest: it never went in, and says where it saw the plant from
    assert "never entered the bedroom" in res.answer and "from the hallway through a door" in res.answer
    assert "in the bedroom" not in res.answer.split(";", 1)[1]


def test_a_plant_in_a_walked_room_is_still_the_one_asked_there(memory):
    res = ask(memory, "Where is the green plant in the living room?")
    assert res.found and res.target_object_id == "o-living"
    assert "never entered" not in res.answer


def test_beyond_walked_tells_the_plant_behind_the_wall_from_the_one_in_the_room(memory):
    tours = TourIndex(memory)
    nodes = {n.id: n for n in memory.graph.get_objects(["o-bed", "o-living"])}
    bed, living = nodes["o-bed"], nodes["o-living"]
    assert tours.beyond_walked(bed) > 0.5 > tours.beyond_walked(living)
    assert tours.seen_from(bed) == "hallway"


# The other side: "the green plant in the HALLWAY". A kitchen the robot never entered lies beyond the
# hallway's door (y > 2); its plant at (0, 4.6), 3.5 m from every walked camera, was seen first and
# most, four times through the door from the hallway, while six hallway views that faced it as near
# missed it (the wall). The hallway plant at (3, 1.6) was seen later, twice, from the hallway itself. A lamp at
# (0, -5) stands in the walked living room as far from its cameras, but every view that faced it saw
# it: that one is in the living room.
KITCHEN_PLANT = {"id": "o-kitchen", "label": "potted plant", "description": "a green potted plant",
                 "attributes": {"color": "green"}, "position": (0.0, 4.6), "seen": [10, 11, 18, 19]}
HALL_PLANT = {"id": "o-hall", "label": "potted plant", "description": "a green potted plant",
              "attributes": {"color": "green"}, "position": (3.0, 1.6), "seen": [20, 21]}
FAR_LAMP = {"id": "o-lamp", "label": "lamp", "description": "a white floor lamp",
            "attributes": {"color": "white"}, "position": (0.0, -5.0), "seen": [30, 31, 32, 33]}
HALL_CAMERA = {**{s: CAMERA[s] for s in range(10, 18)},
               18: ((0.2, 1.0), UP, "hallway"), 19: ((0.1, 0.8), UP, "hallway"),  # through the door
               24: ((-1.0, 1.0), UP, "hallway"), 25: ((1.0, 1.0), UP, "hallway"),  # faced it: the wall
               20: ((1.5, 1.2), EAST, "hallway"), 21: ((2.0, 1.0), EAST, "hallway"),
               22: ((2.2, 0.8), EAST, "hallway"), 23: ((1.8, 1.1), EAST, "hallway"),
               30: ((0.0, -1.5), DOWN, "living room"), 31: ((0.4, -1.4), DOWN, "living room"),
               32: ((-0.4, -1.6), DOWN, "living room"), 33: ((0.1, -1.5), DOWN, "living room")}


@pytest.fixture(scope="module")
def hallway_memory(tmp_path_factory):
    mem = make_memory(tmp_path_factory.mktemp("unentered-hallway"))
    add_objects(mem, [KITCHEN_PLANT, HALL_PLANT, FAR_LAMP])
    add_placed_keyframes(mem, HALL_CAMERA)
    yield mem
    mem.close()


@pytest.mark.parametrize("question", ["Where is the green plant in the hallway?",
                                      "Where was I when I first saw the green plant in the hallway?"])
def test_a_thing_seen_through_a_door_is_not_in_the_room_it_was_seen_from(hallway_memory, question):
    res = ask(hallway_memory, question)
    assert res.found and res.target_object_id == "o-hall"
    assert res.goal is not None and math.dist((res.goal.x, res.goal.y), HALL_PLANT["position"]) < 1.5


def test_a_thing_beyond_the_walked_rooms_is_shown_as_seen_through_a_door(hallway_memory):
    tours = TourIndex(hallway_memory)
    nodes = {n.id: n for n in hallway_memory.graph.get_objects(["o-kitchen", "o-hall", "o-lamp"])}
    assert object_name(nodes["o-kitchen"], tours) == "green potted plant seen through a door from the hallway"
    assert object_name(nodes["o-hall"], tours) == "green potted plant in the hallway"
    # far from its cameras, but every view that faced it saw it: in the walked room
    assert object_name(nodes["o-lamp"], tours) == "white lamp in the living room"


def test_which_room_a_thing_beyond_the_walked_rooms_is_in(hallway_memory):
    res = ask(hallway_memory, "Which room is the white lamp in?")
    assert res.target_object_id == "o-lamp" and res.answer.startswith("In the living room")
    tours = TourIndex(hallway_memory)
    kitchen = hallway_memory.graph.get_objects(["o-kitchen"])[0]
    assert tours.main_place(kitchen) == "" and tours.seen_through(kitchen) == "hallway"


@pytest.mark.parametrize("question", ["Which room is the green plant in?", "Where is the green plant?"])
def test_an_answer_about_a_thing_beyond_the_walked_rooms_says_it_was_seen_through_a_door(hallway_memory, question):
    res = ask(hallway_memory, question)  # the plant seen most: the kitchen one
    assert res.found and res.target_object_id == "o-kitchen"
    assert "seen through a door from the hallway" in res.answer and "in the hallway" not in res.answer


def test_the_judgement_is_made_once_per_object_until_the_robot_walks_in(tmp_path, monkeypatch):
    """Asked for many times per question (shares, main place, shown name), the views are read once
    per object; once the robot has walked the kitchen, the plant is in the kitchen."""
    mem = make_memory(tmp_path / "walk-in")
    add_objects(mem, [KITCHEN_PLANT, HALL_PLANT])
    add_placed_keyframes(mem, HALL_CAMERA)
    tours = TourIndex(mem)
    calls = []
    views_toward = TourIndex._views_toward
    monkeypatch.setattr(TourIndex, "_views_toward", lambda self, node, *a: calls.append(node.id) or views_toward(self, node, *a))
    kitchen = mem.graph.get_objects(["o-kitchen"])[0]
    for _ in range(3):
        assert tours.seen_through(kitchen) == "hallway" and tours.main_place(kitchen) == ""
        assert tours.beyond_walked(kitchen) == 1.0
    assert calls == ["o-kitchen"]
    # walked in beside it, facing along the kitchen (views that faced it and missed it would say a
    # wall stood between: WALLED_VIEWS)
    add_placed_keyframes(mem, {**HALL_CAMERA, 40: ((0.0, 3.5), EAST, "kitchen"), 41: ((0.5, 3.8), EAST, "kitchen")})
    mem.touch()
    assert tours.seen_through(kitchen) == "" and tours.main_place(kitchen) == "kitchen"
    mem.close()


@pytest.mark.parametrize("var, shown", [(0.1, "red stool seen through a door from the living room"),
                                        (0.5, "red stool in the living room")])
def test_a_thing_placed_no_better_than_the_floor_reach_stays_in_the_room_it_was_seen_in(tmp_path, var, shown):
    """A stool 2.9 m beyond the walked living-room floor, seen once from it while three other views
    that faced it missed it: placed to a few tenths of a metre, it stands beyond the walked rooms;
    placed no better than 0.7 m (one sighting's fix), it may stand within the floor's reach, in the
    far corner of the room it was seen in, and is not called seen through a door."""
    mem = make_memory(tmp_path / "far-corner")
    add_objects(mem, [{"id": "o-stool", "label": "stool", "description": "a red stool", "attributes": {"color": "red"},
                       "position": (1.0, -4.3), "position_var": var, "seen": [31]}])
    add_placed_keyframes(mem, {s: HALL_CAMERA[s] for s in range(10, 18)}
                         | {s: HALL_CAMERA[s] for s in (30, 31, 32, 33)})
    tours = TourIndex(mem)
    stool = mem.graph.get_objects(["o-stool"])[0]
    assert tours.views_missed(stool) > 0.5
    assert object_name(stool, tours) == shown
    mem.close()


def test_the_goal_stays_on_the_thing_in_the_room_asked_for():
    """"Which room was I in when I first noticed the green plant in the kitchen?" where the kitchen
    was never entered: the kitchen's plant, seen nine times through its door, is the answer; the
    hallway's plant 2.7 m from it, seen twice as often, is no duplicate of it (read seed 747 sent the
    robot there). Where the question names no place, the better-seen node still takes the goal."""
    from helpers_stores import make_object

    from vlkng_ros.core.ask.answer import goal_target
    from vlkng_ros.core.ask.graph_retrieval import Subgraph

    kitchen = make_object("o-kitchen", "plant", [("t", 20 + i) for i in range(9)], (6.5, 4.1))
    hall = make_object("o-hall", "plant", [("t", 1 + i) for i in range(18)], (4.5, 2.2))
    sub = Subgraph()
    for node, score in ((kitchen, 1.0), (hall, 0.9)):
        sub.objects[node.id], sub.scores[node.id], sub.roles[node.id] = node, score, "target"
    sub.rooms = {"o-kitchen": "kitchen", "o-hall": "hallway"}
    rivals = ["o-kitchen", "o-hall"]
    assert goal_target(sub, "o-kitchen", radius_m=None, among=rivals, rooms=sub.rooms) == "o-kitchen"
    assert goal_target(sub, "o-kitchen", rooms=sub.rooms) == "o-kitchen"
    assert goal_target(sub, "o-kitchen", radius_m=None, among=rivals) == "o-hall"  # no place named
