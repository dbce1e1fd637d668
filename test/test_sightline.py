"""Line of sight from stored depth: a view that faced a thing and missed it either had something
standing between (a wall: evidence the thing is in another room) or a clear line to it (the
detector missed it: no evidence either way). ``depth.line_of_sight`` reads that along the thing's
bearing; ``TourIndex`` drops the clear-line misses from ``views_missed`` and keeps everything else,
and a memory without depth answers as it always did."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers_ask import SEC, T0, TOUR, add_objects, add_placed_keyframes, make_memory
from helpers_rooms import BED_PLANT, CAMERA, DOWN, LIVING_PLANT
from vlkng_ros.core.ask.graph_retrieval import TourIndex
from vlkng_ros.core.depth import line_of_sight
from vlkng_ros.core.images import encode_depth_png
from vlkng_ros.core.model import CameraModel, Pose

CAM = CameraModel(160, 120, 80.0, 80.0, 80.0, 60.0)  # 90 degrees across
HEIGHT = 1.0  # camera above the floor (m)


def scene(blocker_m: float, blocker_top_m: float = 3.0, camera: CameraModel = CAM) -> np.ndarray:
    """The depth a level camera HEIGHT above a flat floor reads facing a vertical surface
    ``blocker_m`` ahead that rises ``blocker_top_m`` above the floor (a wall: 3 m; a counter:
    less): each row's ray ends on the floor or on that surface, whichever comes first; above the
    surface's top the ray goes on to a far wall 7.9 m ahead."""
    rows = (np.arange(camera.height) + 0.5 - camera.cy) / camera.fy  # y / z of each row's ray
    with np.errstate(divide="ignore"):
        floor = np.where(rows > 0, HEIGHT / rows, np.inf)
    height_at_blocker = HEIGHT - rows * blocker_m
    hits_blocker = (height_at_blocker >= 0.0) & (height_at_blocker <= blocker_top_m)
    z = np.minimum(floor, np.where(hits_blocker, blocker_m, 7.9))
    return np.repeat(z[:, None], camera.width, axis=1).astype(np.float32)


def sight(depth: np.ndarray, target=(5.0, 0.0)) -> bool | None:
    return line_of_sight(depth, CAM, Pose.from_xy_yaw(0.0, 0.0, 0.0), target, HEIGHT)


def test_a_wall_nearer_than_the_thing_blocks_the_line():
    assert sight(scene(2.0)) is False


def test_open_floor_to_the_thing_is_a_clear_line():
    # nothing before the far wall; the thing at 5 m would have been in view
    assert sight(scene(7.9)) is True
    # the thing itself in the way reads as reaching it (its front some tenths before its centre)
    assert sight(scene(4.7)) is True


def test_furniture_lower_than_the_camera_does_not_wall_off_the_thing():
    # a counter 0.9 m high at 2 m hides the lower rows only: the line over it reaches the thing
    assert sight(scene(2.0, blocker_top_m=0.9)) is True
    # a low one (a sofa's seat) the same
    assert sight(scene(2.0, blocker_top_m=0.45)) is True


def test_dropouts_are_ignored_and_no_reading_cannot_tell():
    rng = np.random.default_rng(3)
    wall = scene(2.0)
    wall[rng.random(wall.shape) < 0.5] = np.nan  # half the pixels without a reading
    assert sight(wall) is False
    clear = scene(7.9)
    clear[rng.random(clear.shape) < 0.5] = np.nan
    assert sight(clear) is True
    assert sight(np.full((CAM.height, CAM.width), np.nan, dtype=np.float32)) is None


def test_a_thing_behind_the_camera_or_out_of_range_cannot_be_told():
    assert sight(scene(2.0), target=(-3.0, 0.0)) is None
    assert sight(scene(2.0), target=(9.0, 0.0)) is None  # beyond the sensor's 8 m
    # a decimated image (every second row and column) reads the same
    assert line_of_sight(scene(2.0)[::2, ::2], CAM, Pose.from_xy_yaw(0.0, 0.0, 0.0), (5.0, 0.0), HEIGHT) is False


# The unentered-room layout (test_unentered_room): a hallway along 0 < y < 2 whose bedroom door is at
# x in [-0.45, 0.45] (y = 2); the bedroom plant at (0, 3.2) was seen twice through the door, and four
# hallway views that faced it missed it. Whether those four say "a wall" is what their depth tells.
MISSED_BED = (12, 13, 14, 15)  # the hallway views that faced the bedroom plant and missed it


def _memory(path, depth_of=None, objects=(BED_PLANT, LIVING_PLANT), cameras=CAMERA):
    """``objects`` seen from ``cameras`` (test_unentered_room's layout by default); ``depth_of(second)``:
    the depth stored with each keyframe (None: none)."""
    mem = make_memory(path)
    add_objects(mem, list(objects), with_vectors=False)
    add_placed_keyframes(mem, cameras)
    mem.graph.set_meta(f"camera:{TOUR}", json.dumps(CAM.__dict__))
    for s in cameras:
        depth = depth_of(s) if depth_of is not None else None
        if depth is not None:
            mem.frames.put_depth(TOUR, T0 + int(s * SEC), encode_depth_png(depth))
    return mem


def _answers(mem) -> dict:
    tours = TourIndex(mem)
    return {n.id: (tours.views_missed(n), tours.beyond_walked(n), tours.seen_through(n), tours.main_place(n),
                   tours.place_shares(n))
            for n in mem.graph.get_objects(["o-bed", "o-living"])}


@pytest.fixture(scope="module")
def without_depth(tmp_path_factory):
    mem = _memory(tmp_path_factory.mktemp("nodepth"))
    yield mem
    mem.close()


def test_without_depth_the_misses_count_as_walls(without_depth):
    answers = _answers(without_depth)
    # 2 seen, 4 missed among the 6 hallway views that faced it, one pseudo-view each way
    assert answers["o-bed"][0] == pytest.approx((4 + 1) / (6 + 2))
    assert answers["o-bed"][1] > 0.5 > answers["o-living"][1]


def test_depth_showing_the_wall_answers_as_without_depth(without_depth, tmp_path):
    walls = _memory(tmp_path / "walls", lambda s: scene(1.0))  # every view: the hallway wall 1 m ahead
    try:
        assert _answers(walls) == _answers(without_depth)
    finally:
        walls.close()


def test_depth_showing_a_clear_line_takes_the_misses_for_the_detectors(without_depth, tmp_path):
    # the four views that missed the bedroom plant saw open floor up to the far wall: the detector
    # missed it, no wall stood between; the rest keep the hallway wall
    open_ = _memory(tmp_path / "open", lambda s: scene(7.9) if s in MISSED_BED else scene(1.0))
    try:
        answers, before = _answers(open_), _answers(without_depth)
        assert answers["o-bed"][0] == pytest.approx((0 + 1) / (2 + 2))
        assert answers["o-bed"][1] < 0.5  # no longer taken for a thing behind a wall
        assert answers["o-living"] == before["o-living"]
    finally:
        open_.close()


# The far side of a large walked room: a lamp 2.8 m from the nearest living-room camera (beyond
# the walked floor's reach), seen twice from the living room; two more living-room views and three
# hallway views (behind the wall at y = 0) faced it and missed it. Without depth that reads as a
# thing seen through a door; with depth showing the living-room views had a clear line to it (the
# detector missed it) and the hallway's a wall, it is in the living room.
FAR_LAMP = {"id": "o-lamp", "label": "lamp", "description": "a white floor lamp", "attributes": {"color": "white"},
            "position": (0.0, -3.8), "position_var": 0.01, "seen": [40, 41]}
FAR_CAMERA = {40: ((1.5, -0.9), DOWN, "living room"), 41: ((-1.5, -0.9), DOWN, "living room"),
              42: ((0.0, -1.0), DOWN, "living room"), 43: ((0.8, -1.0), DOWN, "living room"),
              44: ((-0.3, 0.1), DOWN, "hallway"), 45: ((0.3, 0.1), DOWN, "hallway"), 46: ((0.0, 0.2), DOWN, "hallway")}


def _far(path, depth_of=None):
    mem = _memory(path, depth_of, [FAR_LAMP], FAR_CAMERA)
    tours = TourIndex(mem)
    node = mem.graph.get_objects(["o-lamp"])[0]
    out = tours.beyond_walked(node), tours.seen_through(node), tours.main_place(node).lower()
    mem.close()
    return out


def test_the_far_side_of_a_walked_room_open_to_its_views_is_in_that_room(tmp_path):
    beyond, through, place = _far(tmp_path / "nodepth")
    assert beyond == 1.0 and through == "living room" and place == ""  # as before: beyond the walked rooms
    beyond, through, place = _far(tmp_path / "open", lambda s: scene(0.3) if s >= 44 else scene(7.9))
    assert beyond < 0.5 and through == "" and place == "living room"
    # the living room's misses blocked too (a tall shelf before it): nothing says it is open
    assert _far(tmp_path / "shut", lambda s: scene(0.3) if s >= 44 else scene(1.5)) == (1.0, "living room", "")


def test_a_fresh_index_reads_one_keyframes_line_of_sight(tmp_path):
    """``sight_line`` asked first, before any room question warmed the index: it reads the stored
    depth of that keyframe (open floor: clear; the hallway wall: blocked; no depth: cannot tell)."""
    open_ = _memory(tmp_path / "open", lambda s: scene(7.9) if s in MISSED_BED else None)
    try:
        bed = open_.graph.get_objects(["o-bed"])[0].position
        missed, other = sorted(MISSED_BED)[0], next(s for s in CAMERA if s not in MISSED_BED)
        assert TourIndex(open_).sight_line(TOUR, T0 + int(missed * SEC), bed, []) is True
        assert TourIndex(open_).sight_line(TOUR, T0 + int(other * SEC), bed, []) is None
    finally:
        open_.close()
    walls = _memory(tmp_path / "walls", lambda s: scene(1.0))
    try:
        bed = walls.graph.get_objects(["o-bed"])[0].position
        # a wall a metre ahead shows no floor to give the camera's height: other keyframes' floors do
        assert TourIndex(walls).sight_line(TOUR, T0 + int(sorted(MISSED_BED)[0] * SEC), bed, []) is None
        assert TourIndex(walls).sight_line(TOUR, T0 + int(sorted(MISSED_BED)[0] * SEC), bed, [HEIGHT]) is False
    finally:
        walls.close()


def test_the_memorys_camera_height_is_read_once_while_the_memory_stands(tmp_path):
    """Views whose depth shows no floor take the memory's camera height: one read of the graph
    store for all of them (a remote store pays a round trip per read), again after a change."""
    from vlkng_ros.core.calibration import CAMERA_HEIGHT_META

    walls = _memory(tmp_path / "walls", lambda s: scene(1.0))  # a wall a metre ahead: no floor seen
    try:
        walls.graph.set_meta(CAMERA_HEIGHT_META, f"{HEIGHT:.4f}")
        reads = []
        get_meta = walls.graph.get_meta
        walls.graph.get_meta = lambda key: (reads.append(key), get_meta(key))[1]
        tours = TourIndex(walls)
        bed = walls.graph.get_objects(["o-bed"])[0].position
        lines = [tours.sight_line(TOUR, T0 + int(s * SEC), bed, []) for s in sorted(MISSED_BED)]
        assert lines == [False] * len(MISSED_BED)  # the memory's height read each view's wall
        assert reads.count(CAMERA_HEIGHT_META) == 1
        walls.touch()
        assert tours.sight_line(TOUR, T0 + int(sorted(MISSED_BED)[0] * SEC), bed, []) is False
        assert reads.count(CAMERA_HEIGHT_META) == 2
    finally:
        walls.close()


def test_a_room_that_glimpsed_it_through_a_door_does_not_wall_it_off_from_its_own(tmp_path):
    """The far lamp seen twice from the living room and once from the hallway, through the door:
    the hallway's other views read their wall, the living room's a clear line. The room it was
    seen from most is open to it, so it stands in the living room (fresh seed 786: the kitchen's
    counter 2.7 m from the walked kitchen floor, glimpsed twice from the hallway, was put in the
    hallway, and "the kitchen counter" sent the robot to a table)."""
    lamp = dict(FAR_LAMP, seen=[40, 41, 44])
    mem = _memory(tmp_path / "door", lambda s: scene(0.3) if s >= 45 else scene(7.9), [lamp], FAR_CAMERA)
    try:
        tours = TourIndex(mem)
        node = mem.graph.get_objects(["o-lamp"])[0]
        assert tours.beyond_walked(node) < 0.5 and tours.seen_through(node) == ""
        assert tours.main_place(node).lower() == "living room"
    finally:
        mem.close()
