"""A seeded home/office world: a floor plan of rooms off a hallway, furniture and small objects.

Geometry is 2.5-D: rooms are axis-aligned rectangles, walls are thin segments with door gaps,
every object is an axis-aligned box (``x, y`` centre, half extents ``hx, hy``, base ``z``, height
``h``) in the ``map`` frame, metres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from vlkng_ros.eval.sim.catalog import (ALL_CLASSES, COLORS, FLOOR_COLORS, ROOM_FURNITURE,
                                        ROOM_KINDS_OPTIONAL, ROOM_SMALL, VARIED_FLOOR_COLORS,
                                        VARIED_ROOM_FURNITURE, VARIED_ROOM_KINDS, VARIED_ROOM_SMALL,
                                        WALL_COLORS, size_word)

WALL_HEIGHT = 2.5
DOOR_WIDTH = 0.95
GRID_RES = 0.05  # metres per cell of the room / occupancy grids
ROBOT_RADIUS = 0.35
SURFACE_HEIGHT = {"sofa": 0.45, "bed": 0.55}  # where things rest, when not the top of the box
DUPLICATE_LOOK = ("plant",)
# Variety between worlds (so that nothing tuned on one world fits by accident): every class gets a
# per-world size scale, a table gets 2-6 chairs, some small things come in ones to threes, floor
# plans have 3-7 rooms of wider sizes (rooms on one or both sides of hallways of 1.5-2.8 m; kinds
# include a second bedroom, dining and laundry rooms, a gym, a study), and a catalogue of classes
# the default worlds never have (catalog.VARIED_*).
SIZE_SCALE = (0.7, 1.4)
SATELLITES = {"chair": (2, 6)}  # "with:<anchor>" furniture: how many of them, per anchor
MULTIPLES = {"mug": 3, "book": 3, "cushion": 3, "pillow": 2, "towel": 2, "plant": 2, "apple": 3}  # later instances look exactly like the first (association is not trivial)


@dataclass
class Room:
    index: int
    kind: str
    x0: float
    y0: float
    x1: float
    y1: float
    wall_rgb: tuple[int, int, int]
    floor_rgb: tuple[int, int, int]
    door_in: tuple[float, float] | None = None  # point inside the room in front of its door
    door_out: tuple[float, float] | None = None  # point in the hallway in front of the door

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return self.x0 + margin <= x <= self.x1 - margin and self.y0 + margin <= y <= self.y1 - margin

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2.0, (self.y0 + self.y1) / 2.0)


@dataclass
class SimObject:
    gt_track: str
    label: str
    room: int
    x: float
    y: float
    z: float  # base height
    hx: float  # half extent along x
    hy: float  # half extent along y
    h: float  # height
    color: str
    material: str
    size: str
    affordances: list[str]
    description: str
    furniture: bool
    support: str | None = None  # gt_track of what it stands on / under / in
    support_rel: str | None = None  # "on" | "under" | "in"
    moved_from: tuple[float, float] | None = None

    @property
    def rgb(self) -> tuple[int, int, int]:
        return COLORS[self.color]

    @property
    def top(self) -> float:
        return self.z + (SURFACE_HEIGHT.get(self.label, self.h) if self.furniture else self.h)

    def footprint(self, margin: float = 0.0) -> tuple[float, float, float, float]:
        return (self.x - self.hx - margin, self.y - self.hy - margin,
                self.x + self.hx + margin, self.y + self.hy + margin)

    def attributes(self) -> dict[str, str]:
        return {"color": self.color, "material": self.material, "size": self.size}


@dataclass
class World:
    seed: int
    rooms: list[Room]
    walls: np.ndarray  # (N, 4) segments x1, y1, x2, y2
    objects: list[SimObject]
    bounds: tuple[float, float, float, float]  # x0, y0, x1, y1 of the whole plan
    room_grid: np.ndarray = field(repr=False, default=None)  # int8 room index per cell, -1 outside
    free_grid: np.ndarray = field(repr=False, default=None)  # bool, where the robot centre may be
    varied: bool = False  # a generalisation world (other catalogue, layouts, words)

    def by_track(self) -> dict[str, SimObject]:
        return {o.gt_track: o for o in self.objects}

    def room_at(self, x: float, y: float) -> int:
        i, j = self.cell(x, y)
        if 0 <= i < self.room_grid.shape[0] and 0 <= j < self.room_grid.shape[1]:
            return int(self.room_grid[i, j])
        return -1

    def cell(self, x: float, y: float) -> tuple[int, int]:
        return int((y - self.bounds[1]) / GRID_RES), int((x - self.bounds[0]) / GRID_RES)

    def is_free(self, x: float, y: float) -> bool:
        i, j = self.cell(x, y)
        g = self.free_grid
        return 0 <= i < g.shape[0] and 0 <= j < g.shape[1] and bool(g[i, j])

    def segment_free(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        n = max(2, int(math.dist(a, b) / (GRID_RES * 0.8)) + 1)
        return all(self.is_free(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
                   for t in np.linspace(0.0, 1.0, n))

    def relations(self) -> list[tuple[str, str, str]]:
        """Ground-truth spatial relations: support relations plus 'next to' for near neighbours."""
        rels: list[tuple[str, str, str]] = []
        for o in self.objects:
            if o.support and o.support_rel:
                rels.append((o.gt_track, o.support_rel, o.support))
        objs = self.objects
        for i, a in enumerate(objs):
            for b in objs[i + 1:]:
                if a.room != b.room or a.support_rel == "in" or b.support_rel == "in":
                    continue
                if a.support == b.gt_track or b.support == a.gt_track:
                    continue
                same_surface = a.support is not None and a.support == b.support and a.support_rel == b.support_rel
                both_floor = a.support is None and b.support is None
                if not (same_surface or both_floor):
                    continue
                gap = _box_gap(a.footprint(), b.footprint())
                if gap < (0.35 if same_surface else 0.4):
                    first, second = (a, b) if a.furniture <= b.furniture else (b, a)
                    rels.append((first.gt_track, "next to", second.gt_track))
        return rels

    def to_json(self) -> dict:
        return {
            "frame_id": "map",
            "seed": self.seed,
            "rooms": [{"index": r.index, "kind": r.kind, "bounds": [r.x0, r.y0, r.x1, r.y1]}
                      for r in self.rooms],
            "objects": [{
                "gt_track": o.gt_track, "label": o.label, "xy": [round(o.x, 3), round(o.y, 3)],
                "z": round(o.z, 3), "size_m": [round(2 * o.hx, 3), round(2 * o.hy, 3), round(o.h, 3)],
                "room": self.rooms[o.room].kind, "rgb": list(o.rgb),
                "attributes": o.attributes(), "affordances": o.affordances,
                "description": o.description, "furniture": o.furniture,
                **({"support": [o.support_rel, o.support]} if o.support else {}),
                **({"moved_from": [round(o.moved_from[0], 3), round(o.moved_from[1], 3)]}
                   if o.moved_from else {}),
            } for o in self.objects],
            "relations": [list(r) for r in self.relations()],
        }


def _box_gap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    dx = max(0.0, max(a[0], b[0]) - min(a[2], b[2]))
    dy = max(0.0, max(a[1], b[1]) - min(a[3], b[3]))
    return math.hypot(dx, dy)


def _overlaps(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


# ----------------------------------------------------------------------------------------------
# floor plan


def _floor_plan(rng: np.random.Generator, varied: bool = False) -> tuple[list[Room], np.ndarray]:
    if varied:  # 3-7 rooms off the hallway, more kinds, on one or both sides, wider size ranges
        n_rooms = int(rng.integers(4, 9))
        kinds = ["kitchen", "living room"] + [str(k) for k in rng.permutation(VARIED_ROOM_KINDS)[: n_rooms - 3]]
    else:
        n_rooms = int(rng.integers(4, 7))  # hallway included
        kinds = ["kitchen", "living room"] + [str(k) for k in rng.permutation(ROOM_KINDS_OPTIONAL)[: n_rooms - 3]]
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    n_top = (len(kinds) + 1) // 2
    if varied and len(kinds) <= 4 and rng.random() < 0.4:
        n_top = len(kinds)  # every room on one side of the hallway
    sides = {"top": kinds[:n_top], "bottom": kinds[n_top:]}
    hall_w = float(rng.uniform(1.5, 2.8) if varied else rng.uniform(1.8, 2.2))
    stretch = (0.8, 1.3) if varied else None

    def width_of(kind: str) -> float:
        lo, hi = {"bathroom": (2.6, 3.2), "office": (3.4, 4.4), "bedroom": (3.6, 4.6)}.get(kind, (4.2, 5.4))
        if stretch:
            lo, hi = max(2.4, lo * stretch[0]), hi * stretch[1]
        return round(float(rng.uniform(lo, hi)), 2)

    widths = {s: [width_of(k) for k in ks] for s, ks in sides.items()}
    length = max(sum(w) for w in widths.values())
    for s in widths:  # both sides cover the whole hallway: stretch the last room
        if widths[s]:
            widths[s][-1] += length - sum(widths[s])
    wall_cycle = [WALL_COLORS[i] for i in rng.permutation(len(WALL_COLORS))]
    rooms: list[Room] = [Room(0, "hallway", 0.0, 0.0, length, hall_w, wall_cycle[0], FLOOR_COLORS["hallway"])]
    segments: list[tuple[float, float, float, float]] = [(0, 0, 0, hall_w), (length, 0, length, hall_w)]
    for side in ("top", "bottom"):
        x = 0.0
        for kind, w in zip(sides[side], widths[side]):
            depth = round(float(rng.uniform(3.0, 3.6) if kind == "bathroom" else rng.uniform(3.8, 5.0)), 2)
            if varied:
                depth = round(depth * float(rng.uniform(0.85, 1.3)), 2)
            y0, y1 = (hall_w, hall_w + depth) if side == "top" else (-depth, 0.0)
            room = Room(len(rooms), kind, x, y0, x + w, y1, wall_cycle[len(rooms) % len(wall_cycle)],
                        {**FLOOR_COLORS, **VARIED_FLOOR_COLORS}[kind])
            door_x = float(rng.uniform(x + 0.7 + DOOR_WIDTH / 2, x + w - 0.7 - DOOR_WIDTH / 2))
            wall_y = y0 if side == "top" else y1
            inward = 1.0 if side == "top" else -1.0
            room.door_in = (door_x, wall_y + inward * 0.75)
            room.door_out = (door_x, wall_y - inward * min(0.75, hall_w / 2))
            far_y = y1 if side == "top" else y0
            segments += [(x, far_y, x + w, far_y), (x, y0, x, y1), (x + w, y0, x + w, y1),
                         (x, wall_y, door_x - DOOR_WIDTH / 2, wall_y),
                         (door_x + DOOR_WIDTH / 2, wall_y, x + w, wall_y)]
            rooms.append(room)
            x += w
    return rooms, np.array(segments, dtype=np.float64)


def _room_grid(rooms: list[Room], bounds: tuple[float, float, float, float]) -> np.ndarray:
    shape = (int(math.ceil((bounds[3] - bounds[1]) / GRID_RES)) + 1,
             int(math.ceil((bounds[2] - bounds[0]) / GRID_RES)) + 1)
    grid = np.full(shape, -1, dtype=np.int8)
    for r in rooms:
        i0, i1 = int((r.y0 - bounds[1]) / GRID_RES), int((r.y1 - bounds[1]) / GRID_RES)
        j0, j1 = int((r.x0 - bounds[0]) / GRID_RES), int((r.x1 - bounds[0]) / GRID_RES)
        grid[i0:i1 + 1, j0:j1 + 1] = r.index
    return grid


# ----------------------------------------------------------------------------------------------
# furniture and small objects


class _Placer:
    """Places objects in one world, keeping counters per label and looks per class."""

    def __init__(self, rng: np.random.Generator, rooms: list[Room], varied: bool = False):
        self.varied = varied
        self.rng = rng
        self.rooms = rooms
        self.objects: list[SimObject] = []
        self.counts: dict[str, int] = {}
        self.first_look: dict[str, tuple[str, str]] = {}
        self.used_colors: dict[str, set[str]] = {}
        self.scales: dict[str, float] = {}

    def new_object(self, label: str, room: int, x: float, y: float, z: float, along_x: bool,
                   look: tuple[str, str] | None = None, support: SimObject | None = None,
                   support_rel: str | None = None) -> SimObject:
        cls = ALL_CLASSES[label]
        scale = self.scales.setdefault(label, _span(self.rng, *SIZE_SCALE)) if self.varied else 1.0
        w, d, h = (v * scale for v in cls.size)
        if look is None:
            look = self.pick_look(label)
        color, material = look
        self.counts[label] = self.counts.get(label, 0) + 1
        self.used_colors.setdefault(label, set()).add(color)
        self.first_look.setdefault(label, look)
        size = size_word(cls.size)
        hx, hy = (w / 2, d / 2) if along_x else (d / 2, w / 2)
        obj = SimObject(f"{label.replace(' ', '-')}-{self.counts[label]}", label, room, x, y, z, hx, hy, h,
                        color, material, size, list(cls.affordances),
                        f"{_article(size)} {size} {color} {material} {label}", cls.furniture,
                        support.gt_track if support else None, support_rel)
        self.objects.append(obj)
        return obj

    def pick_look(self, label: str) -> tuple[str, str]:
        cls = ALL_CLASSES[label]
        if label in DUPLICATE_LOOK and label in self.first_look:
            return self.first_look[label]
        fresh = [c for c in cls.colors if c not in self.used_colors.get(label, set())] or list(cls.colors)
        return str(self.rng.choice(fresh)), str(self.rng.choice(cls.materials))

    def blocked(self, box: tuple[float, ...], room: Room, ignore: SimObject | None = None) -> bool:
        if not (room.x0 + 0.02 <= box[0] and box[2] <= room.x1 - 0.02 and
                room.y0 + 0.02 <= box[1] and box[3] <= room.y1 - 0.02):
            return True
        if room.door_in is not None:
            dx, dy = room.door_in
            if _overlaps(box, (dx - 0.75, dy - 0.8, dx + 0.75, dy + 0.8)):
                return True
        for o in self.objects:
            if o is ignore or o.room != room.index or o.support is not None and o.support_rel != "under":
                continue
            if _overlaps(box, o.footprint(0.12)):
                return True
        return False

    def place_wall(self, label: str, room: Room) -> SimObject | None:
        w, d, _ = ALL_CLASSES[label].size
        for _ in range(60):
            side = int(self.rng.integers(4))
            along_x = side in (0, 1)
            ext_along, ext_across = w / 2, d / 2
            if along_x:
                x = _span(self.rng, room.x0 + ext_along + 0.05, room.x1 - ext_along - 0.05)
                y = room.y0 + ext_across + 0.03 if side == 0 else room.y1 - ext_across - 0.03
                box = (x - ext_along, y - ext_across, x + ext_along, y + ext_across)
            else:
                y = _span(self.rng, room.y0 + ext_along + 0.05, room.y1 - ext_along - 0.05)
                x = room.x0 + ext_across + 0.03 if side == 2 else room.x1 - ext_across - 0.03
                box = (x - ext_across, y - ext_along, x + ext_across, y + ext_along)
            if not self.blocked(box, room):
                return self.new_object(label, room.index, x, y, 0.0, along_x)
        return None

    def place_center(self, label: str, room: Room) -> SimObject | None:
        w, d, _ = ALL_CLASSES[label].size
        for _ in range(60):
            along_x = bool(self.rng.integers(2))
            hx, hy = (w / 2, d / 2) if along_x else (d / 2, w / 2)
            x = _span(self.rng, room.x0 + hx + 0.9, room.x1 - hx - 0.9) if room.x1 - room.x0 > 2 * hx + 1.8 else room.center[0]
            y = _span(self.rng, room.y0 + hy + 0.9, room.y1 - hy - 0.9) if room.y1 - room.y0 > 2 * hy + 1.8 else room.center[1]
            if not self.blocked((x - hx, y - hy, x + hx, y + hy), room):
                return self.new_object(label, room.index, x, y, 0.0, along_x)
        return None

    def place_with(self, label: str, room: Room, anchor: SimObject, look: tuple[str, str] | None) -> SimObject | None:
        w, d, _ = ALL_CLASSES[label].size
        slots: list[tuple[float, float, bool]] = []
        gap = 0.12 if label == "chair" else 0.05
        if label == "chair":  # around the anchor, on every side
            for s in (-1, 1):
                slots.append((anchor.x + s * (anchor.hx + d / 2 + gap), anchor.y, False))
                slots.append((anchor.x, anchor.y + s * (anchor.hy + d / 2 + gap), True))
                if anchor.hx > 0.6:
                    for t in (-0.35, 0.35):
                        slots.append((anchor.x + t, anchor.y + s * (anchor.hy + d / 2 + gap), True))
        else:  # against a wall, as close to the anchor as possible
            best: tuple[float, float, float, bool] | None = None
            for _ in range(80):
                side = int(self.rng.integers(4))
                along_x = side in (0, 1)
                if along_x:
                    x = _span(self.rng, room.x0 + w / 2 + 0.05, room.x1 - w / 2 - 0.05)
                    y = room.y0 + d / 2 + 0.03 if side == 0 else room.y1 - d / 2 - 0.03
                else:
                    y = _span(self.rng, room.y0 + w / 2 + 0.05, room.y1 - w / 2 - 0.05)
                    x = room.x0 + d / 2 + 0.03 if side == 2 else room.x1 - d / 2 - 0.03
                hx, hy = (w / 2, d / 2) if along_x else (d / 2, w / 2)
                if self.blocked((x - hx, y - hy, x + hx, y + hy), room):
                    continue
                gap = _box_gap((x - hx, y - hy, x + hx, y + hy), anchor.footprint())
                if best is None or gap < best[0]:
                    best = (gap, x, y, along_x)
            if best is None:
                return None
            return self.new_object(label, room.index, best[1], best[2], 0.0, best[3], look=look)
        order = self.rng.permutation(len(slots))
        for k in order:
            x, y, along_x = slots[int(k)]
            hx, hy = (w / 2, d / 2) if along_x else (d / 2, w / 2)
            if not self.blocked((x - hx, y - hy, x + hx, y + hy), room):
                return self.new_object(label, room.index, x, y, 0.0, along_x, look=look)
        return None

    def place_small(self, label: str, room: Room, placement: str) -> SimObject | None:
        w, d, _ = ALL_CLASSES[label].size
        along_x = bool(self.rng.integers(2))
        hx, hy = (w / 2, d / 2) if along_x else (d / 2, w / 2)
        if placement == "floor":
            for _ in range(60):
                x = _span(self.rng, room.x0 + hx + 0.05, room.x1 - hx - 0.05)
                y = _span(self.rng, room.y0 + hy + 0.05, room.y1 - hy - 0.05)
                near_wall = min(x - room.x0, room.x1 - x, y - room.y0, room.y1 - y) < 0.6
                if near_wall and not self.blocked((x - hx, y - hy, x + hx, y + hy), room):
                    return self.new_object(label, room.index, x, y, 0.0, along_x)
            return None
        rel, _, names = placement.partition(":")
        supports = [o for o in self.objects if o.room == room.index and o.label in names.split("|")]
        self.rng.shuffle(supports)
        for sup in supports:
            spot = self.spot_on(sup, hx, hy, rel)
            if spot is not None:
                z = sup.top if rel == "on" else (sup.z + 0.01 if rel == "in" else 0.0)
                return self.new_object(label, room.index, spot[0], spot[1], z, along_x, support=sup,
                                       support_rel=rel)
        return None

    def spot_on(self, sup: SimObject, hx: float, hy: float, rel: str) -> tuple[float, float] | None:
        if rel == "in":
            return (sup.x, sup.y)
        if rel == "under":  # half out of the front edge so it can be seen
            room = self.rooms[sup.room]
            for _ in range(20):
                if sup.hx >= sup.hy:
                    front = 1.0 if abs(sup.y - sup.hy - room.y0) < abs(sup.y + sup.hy - room.y1) else -1.0
                    x = _span(self.rng, sup.x - sup.hx + hx, sup.x + sup.hx - hx)
                    y = sup.y + front * sup.hy
                else:
                    front = 1.0 if abs(sup.x - sup.hx - room.x0) < abs(sup.x + sup.hx - room.x1) else -1.0
                    y = _span(self.rng, sup.y - sup.hy + hy, sup.y + sup.hy - hy)
                    x = sup.x + front * sup.hx
                box = (x - hx, y - hy, x + hx, y + hy)
                if not any(o.support == sup.gt_track and _overlaps(box, o.footprint(0.05)) for o in self.objects):
                    return (x, y)
            return None
        if hx * 2 > sup.hx * 2 - 0.04 or hy * 2 > sup.hy * 2 - 0.04:
            return None
        for _ in range(30):
            x = _span(self.rng, sup.x - sup.hx + hx + 0.02, sup.x + sup.hx - hx - 0.02)
            y = _span(self.rng, sup.y - sup.hy + hy + 0.02, sup.y + sup.hy - hy - 0.02)
            box = (x - hx, y - hy, x + hx, y + hy)
            if not any(o.support == sup.gt_track and o.support_rel == "on" and _overlaps(box, o.footprint(0.06))
                       for o in self.objects):
                return (x, y)
        return None


def _span(rng: np.random.Generator, lo: float, hi: float) -> float:
    """A uniform draw in [lo, hi]; when the range is empty (a thing wider than the room), its
    midpoint without a draw (the caller's box then fails its room check and it tries again)."""
    return float(rng.uniform(lo, hi)) if hi >= lo else (lo + hi) / 2.0


def _varied_furniture(spec: list[tuple[str, str]], rng: np.random.Generator) -> list[tuple[str, str]]:
    """The room's furniture list with its satellites (chairs at a table) repeated 2-6 times."""
    out: list[tuple[str, str]] = []
    done: set[tuple[str, str]] = set()
    for label, where in spec:
        if where.startswith("with:") and label in SATELLITES:
            if (label, where) not in done:
                lo, hi = SATELLITES[label]
                out += [(label, where)] * int(rng.integers(lo, hi + 1))
                done.add((label, where))
        else:
            out.append((label, where))
    return out


def build_world(seed: int, varied: bool = False) -> World:
    """The base world of ``seed``: same seed, same world. ``varied``: per-world object sizes,
    2-6 chairs at a table, some small things in ones to threes (the generalisation sets); off,
    the worlds the tuned tests and earlier numbers were measured on."""
    rng = np.random.default_rng([int(seed), 0x5EED])
    rooms, walls = _floor_plan(rng, varied)
    placer = _Placer(rng, rooms, varied)
    for room in rooms:
        anchors: dict[str, SimObject] = {}
        set_look: dict[str, tuple[str, str]] = {}
        spec = ROOM_FURNITURE.get(room.kind, []) + (VARIED_ROOM_FURNITURE.get(room.kind, []) if varied else [])
        for label, where in (_varied_furniture(spec, rng) if varied else spec):
            if where == "wall":
                obj = placer.place_wall(label, room)
            elif where == "center":
                obj = placer.place_center(label, room)
            else:
                anchor = anchors.get(where.split(":", 1)[1])
                if anchor is None:
                    continue
                look = set_look.get(label)  # chairs of one room form a matching set
                obj = placer.place_with(label, room, anchor, look)
                if obj is not None:
                    set_look[label] = (obj.color, obj.material)
            if obj is not None:
                anchors.setdefault(label, obj)
    for room in rooms:
        for label, placement in ROOM_SMALL.get(room.kind, []) + (VARIED_ROOM_SMALL.get(room.kind, []) if varied else []):
            keep = label in DUPLICATE_LOOK or rng.random() < 0.85
            copies = (int(rng.integers(1, MULTIPLES.get(label, 1) + 1)) if varied else 1) if keep else 0
            for _ in range(copies):
                placer.place_small(label, room, placement)
    # drop containers' contents whose container was not placed, keep ids stable
    objects = placer.objects
    xs = [v for r in rooms for v in (r.x0, r.x1)]
    ys = [v for r in rooms for v in (r.y0, r.y1)]
    bounds = (min(xs) - 0.5, min(ys) - 0.5, max(xs) + 0.5, max(ys) + 0.5)
    world = World(int(seed), rooms, walls, objects, bounds, varied=varied)
    world.room_grid = _room_grid(rooms, bounds)
    world.free_grid = free_space(world)
    return world


def free_space(world: World) -> np.ndarray:
    """Cells where the robot's centre may be: inside a room, clear of walls and floor objects."""
    free = np.zeros(world.room_grid.shape, dtype=bool)
    b = world.bounds
    m = ROBOT_RADIUS

    def mark(box: tuple[float, float, float, float], value: bool) -> None:
        i0, i1 = int((box[1] - b[1]) / GRID_RES), int(math.ceil((box[3] - b[1]) / GRID_RES))
        j0, j1 = int((box[0] - b[0]) / GRID_RES), int(math.ceil((box[2] - b[0]) / GRID_RES))
        free[max(i0, 0):max(i1 + 1, 0), max(j0, 0):max(j1 + 1, 0)] = value

    for r in world.rooms:
        mark((r.x0 + m, r.y0 + m, r.x1 - m, r.y1 - m), True)
    for r in world.rooms:  # door passages
        if r.door_in and r.door_out:
            (xa, ya), (xb, yb) = r.door_in, r.door_out
            mark((min(xa, xb) - 0.08, min(ya, yb), max(xa, xb) + 0.08, max(ya, yb)), True)
    for o in world.objects:
        if o.support is None or o.support_rel == "under":
            mark(o.footprint(m), False)
    return free


def move_objects(world: World, count: int, seed: int) -> list[str]:
    """Move ``count`` small objects of ``world`` (in place) to another surface or floor spot.

    Returns the moved gt_tracks. Objects holding others (a bowl with fruit) stay put.
    """
    if count <= 0:
        return []
    rng = np.random.default_rng([int(world.seed), int(seed), 0x40E])
    holders = {o.support for o in world.objects if o.support_rel == "in"}
    movable = [o for o in world.objects if not o.furniture and o.gt_track not in holders
               and o.support_rel != "in" and o.label not in ("tv", "monitor")]
    if count > len(movable):
        raise ValueError(f"--move-objects {count}: this world has only {len(movable)} movable objects")
    placer = _Placer(rng, world.rooms)
    placer.objects = world.objects
    surfaces = [o for o in world.objects if o.furniture and ALL_CLASSES[o.label].surface]
    moved: list[str] = []
    for obj in [movable[int(i)] for i in rng.permutation(len(movable))]:
        if len(moved) == count:
            break
        old = (obj.x, obj.y)
        for sup in [surfaces[int(i)] for i in rng.permutation(len(surfaces))]:
            if sup.gt_track == obj.support:
                continue
            spot = placer.spot_on(sup, obj.hx, obj.hy, "on")
            if spot is None or math.dist(spot, old) < 1.5:
                continue
            obj.x, obj.y, obj.z = spot[0], spot[1], sup.top
            obj.room, obj.support, obj.support_rel, obj.moved_from = sup.room, sup.gt_track, "on", old
            moved.append(obj.gt_track)
            break
    if len(moved) < count:
        raise ValueError(f"--move-objects {count}: found free spots for only {len(moved)} objects")
    world.free_grid = free_space(world)
    return moved
