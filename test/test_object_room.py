"""An object's room is where it IS, not where the camera stood when it saw it: the places of the
camera positions nearest the object (the floor the robot walked around it) weigh against the places
of its sightings (graph_retrieval.place_shares / floor_shares), for the room shown, "the plant in
the living room", typed counts and the map."""

from __future__ import annotations

import pytest

from helpers_ask import TOUR, add_objects, add_placed_keyframes, ask_ok, make_memory
from vlkng_ros.core.ask.graph_retrieval import floor_shares, place_shares
from vlkng_ros.core.model import ObjectNode, Observation
from vlkng_ros.core.present import map_payload, object_detail

# A hallway along y < 2.5 and a living room beyond it (y > 2.5), the door at x in [-0.5, 0.5].
# The living-room plant at (0, 4), just inside the door: seen three times from the hallway through
# the door (2.5-2.8 m) and once from the far end of the living room (3.9 m); the robot walked the
# living room past it (keyframes 0.7-1.5 m from it, the camera facing elsewhere).
LIVING_PLANT = {"id": "o-lplant", "label": "potted plant", "description": "a green potted plant",
                "attributes": {"color": "green"}, "position": (0.0, 4.0), "seen": [10, 11, 12, 40]}
# The hallway plant at (1.2, 1.8): seen only from the living room, four times through the door
# (about 3.2 m); the robot drove down the hallway beside it (0.8 m), facing along the hallway.
HALLWAY_PLANT = {"id": "o-hplant", "label": "potted plant", "description": "a green potted plant",
                 "attributes": {"color": "green"}, "position": (1.2, 1.8), "seen": [30, 31, 32, 33]}
SOFA = {"id": "o-sofa", "label": "sofa", "description": "a grey fabric sofa", "position": (3.0, 7.5),
        "seen": [40, 41]}
CAMERA = {10: ((0.5, 1.5), "hallway"), 11: ((0.3, 1.2), "hallway"), 12: ((-0.3, 1.3), "hallway"),
          20: ((2.0, 1.2), "hallway"), 21: ((3.0, 1.2), "hallway"),  # walked, saw neither plant
          30: ((-0.5, 4.5), "living room"), 31: ((-0.4, 4.6), "living room"),
          32: ((-0.6, 4.7), "living room"), 33: ((-0.5, 4.8), "living room"),
          34: ((1.0, 5.0), "living room"), 35: ((-1.0, 5.2), "living room"),  # walked, saw neither
          40: ((3.0, 6.5), "living room"), 41: ((3.5, 6.5), "living room")}
WALKED = [20, 21, 34, 35]


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    mem = make_memory(tmp_path_factory.mktemp("room"))
    add_objects(mem, [LIVING_PLANT, HALLWAY_PLANT, SOFA])
    add_placed_keyframes(mem, {s: (xy, 0.0, place) for s, (xy, place) in CAMERA.items()})
    yield mem
    mem.close()


ask = ask_ok


def test_an_object_seen_through_a_door_is_in_the_room_whose_floor_it_stands_on(memory):
    # what the operator is shown (map, object detail) is the room each plant stands in
    places = {o["id"]: o["place"] for o in map_payload(memory)["objects"]}
    assert places["o-lplant"] == "living room" and places["o-hplant"] == "hallway"
    assert object_detail(memory, "o-lplant")["name"].endswith("in the living room")
    assert object_detail(memory, "o-hplant")["place"] == "hallway"


def test_the_plant_in_the_living_room_is_the_one_standing_there(memory):
    for room, plant, y in (("living room", "o-lplant", 4.0), ("hallway", "o-hplant", 1.8)):
        res = ask(memory, f"Where did I see the green potted plant in the {room}?")
        assert (res.found, res.target_object_id) == (True, plant) and abs(res.target_position[1] - y) < 0.5


def test_counts_in_a_room_count_what_stands_there(memory):
    living = ask(memory, "How many potted plants did you see in the living room?")
    assert living.value.number == 1 and "(0.0, 4.0)" in living.answer  # the one standing there
    hall = ask(memory, "How many potted plants did you see in the hallway?")
    assert hall.value.number == 1 and "(1.2, 1.8)" in hall.answer


def _node(position, stamps):
    return ObjectNode("o", "plant", position=position,
                      observations=[Observation(TOUR, s, (0, 0, 1, 1), "c", "o") for s in stamps])


def test_the_floor_decides_when_clear_and_the_sightings_when_not():
    frames = {1: ("hallway", (0.0, 0.0)), 2: ("hallway", (0.2, 0.0)), 3: ("kitchen", (6.0, 0.0))}

    def at(tour, stamp):
        return frames.get(stamp)

    node = _node((2.0, 0.0), [1, 2, 3])
    seen = place_shares(node, at)  # no walked floor known: the sightings alone (today's rule)
    assert max(seen, key=seen.get) == "hallway"
    # the kitchen's walked floor is 0.5 m from it, the hallway's 1.5 m: the kitchen
    clear = place_shares(node, at, lambda xy: {"kitchen": 0.5, "hallway": 1.5})
    assert max(clear, key=clear.get) == "kitchen" and sum(clear.values()) == pytest.approx(1.0)
    # both floors about as near (within the position's noise): the sightings decide
    tied = place_shares(node, at, lambda xy: {"kitchen": 1.0, "hallway": 1.05})
    assert max(tied, key=tied.get) == "hallway"
    # no walked floor within reach (a room never entered), or no position: the sightings alone
    assert place_shares(node, at, lambda xy: {"kitchen": 4.0, "hallway": 5.0}) == seen
    assert place_shares(_node(None, [1, 2, 3]), at, lambda xy: {"kitchen": 0.1}) == \
        place_shares(_node(None, [1, 2, 3]), at)
    # a memory with no place named at all has no room for anything
    assert place_shares(node, lambda t, s: (None, (0.0, 0.0)), lambda xy: {}) == {}
    # walked floors but no sighting with a place: the floor alone
    assert place_shares(node, lambda t, s: None, lambda xy: {"kitchen": 0.5}) == {"kitchen": 1.0}
    assert floor_shares({}) == {}


def test_room_questions_ask_for_entered_rooms_and_mark_views_through_a_door(tmp_path):
    """bench_absent --rooms: one question per (class, kind of room) seen, none for a room never entered."""
    import json

    from vlkng_ros.eval.absent import room_questions

    objects = [("plant-1", "plant", "living room"), ("sofa-1", "sofa", "living room"),
               ("bench-1", "bench", "hallway"), ("bed-1", "bed", "bedroom")]
    (tmp_path / "world.json").write_text(json.dumps({"objects": [
        {"gt_track": t, "label": lab, "room": room} for t, lab, room in objects]}))
    frames = [("hallway", ["plant-1", "bed-1"]), ("hallway", ["plant-1"]), ("living room", ["plant-1", "sofa-1"]),
              ("living room", ["bench-1"]), ("hallway", [])]
    (tmp_path / "annotations.jsonl").write_text("".join(
        json.dumps({"place": place, "objects": [{"gt_track": t} for t in seen]}) + "\n" for place, seen in frames))
    asked = {(q.label, q.room): q for q in room_questions(tmp_path)}
    assert set(asked) == {("plant", "living room"), ("sofa", "living room"), ("bench", "hallway")}  # no bedroom
    assert asked["plant", "living room"].through_door and asked["bench", "hallway"].through_door
    assert not asked["sofa", "living room"].through_door
    assert "plant in the living room" in asked["plant", "living room"].question
