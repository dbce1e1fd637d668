"""A room the robot never entered: "the green plant in the bedroom" where no keyframe was taken in
a bedroom is the plant seen through the bedroom door from the hallway (it stands beyond every walked
room: the hallway views that looked its way from as near missed it), not the plant that stands in
the walked living room; the answer says the robot never went in (engine._beyond, _unentered;
TourIndex.beyond_walked)."""

from __future__ import annotations

import math

import pytest

from helpers_ask import add_objects, add_placed_keyframes, ask_ok, make_memory
from vlkng_ros.core.ask.graph_retrieval import TourIndex

UP, DOWN, EAST = math.pi / 2, -math.pi / 2, 0.0
# The hallway along 0 < y < 2, its bedroom door at x in [-0.45, 0.45] (y = 2); the living room
# below it (y < 0). The bedroom plant at (0, 3.2) is seen twice through the door from the hallway;
# four hallway views that faced it from no farther did not see it (the wall). The living-room plant
# at (0, -3) is seen four times from inside the living room.
BED_PLANT = {"id": "o-bed", "label": "potted plant", "description": "a green potted plant",
             "attributes": {"color": "green"}, "position": (0.0, 3.2), "seen": [10, 11]}
LIVING_PLANT = {"id": "o-living", "label": "potted plant", "description": "a green potted plant",
                "attributes": {"color": "green"}, "position": (0.0, -3.0), "seen": [30, 31, 32, 33]}
CAMERA = {10: ((0.0, 1.0), UP, "hallway"), 11: ((-0.2, 0.9), UP, "hallway"),
          12: ((-1.5, 1.0), UP, "hallway"), 13: ((1.5, 1.0), UP, "hallway"),  # faced it: the wall
          14: ((-1.2, 1.1), UP, "hallway"), 15: ((1.3, 0.9), UP, "hallway"),
          16: ((-3.0, 1.0), EAST, "hallway"), 17: ((3.0, 1.0), EAST, "hallway"),
          30: ((0.0, -1.5), DOWN, "living room"), 31: ((0.5, -1.6), DOWN, "living room"),
          32: ((-0.6, -1.8), DOWN, "living room"), 33: ((1.0, -2.0), DOWN, "living room"),
          34: ((-1.5, -3.5), EAST, "living room")}


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
