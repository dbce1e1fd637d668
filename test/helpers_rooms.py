"""The unentered-room layout shared by the room tests (test_unentered_room, test_sightline): a
hallway, a bedroom the robot never entered seen through its door, and a walked living room."""

from __future__ import annotations

import math

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
