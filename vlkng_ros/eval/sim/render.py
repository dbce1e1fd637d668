"""A fast pinhole renderer for the simulated world (numpy + OpenCV, one core).

Walls are ray-cast per image column against the wall segments (a 2.5-D world), floor pixels are
back-projected onto the floor plan, objects are boxes drawn far-to-near (painter's order) with
shaded faces; an id buffer records which object owns each pixel, so that annotation boxes are
exactly the drawn pixels. Walls hide what is behind them per column (exact in 2.5-D).

With ``depth=True`` each render also leaves the ideal optical depth (metres along the optical
axis) of every pixel in ``last_depth``, registered to the colour image by construction: walls per
column, floor and ceiling per row, objects by intersecting each drawn pixel's ray with the box
(noise-free: ``sensor.py`` adds an RGB-D camera's noise and dropouts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vlkng_ros.eval.sim.catalog import CEILING_COLOR
from vlkng_ros.eval.sim.world import GRID_RES, WALL_HEIGHT, SimObject, World

NEAR = 0.08  # m, near clipping plane
MAX_RANGE = 7.0  # m, objects farther than this are not drawn
MIN_BOX_PX = 8  # boxes narrower or shorter than this are not annotated
MIN_VISIBLE = 0.35  # fraction of an object's in-image area that must stay unoccluded
_EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)]


@dataclass
class Visible:
    """One object as rendered in one frame."""

    index: int  # into world.objects
    bbox: tuple[int, int, int, int]  # x1, y1, x2, y2 (pixels, x2/y2 exclusive)
    visible_fraction: float
    area_px: int


class Renderer:
    def __init__(self, world: World, width: int = 640, height: int = 480, hfov_deg: float = 90.0,
                 camera_height: float = 1.0, seed: int = 0, depth: bool = False):
        self.world = world
        self.want_depth = depth
        self.last_depth: np.ndarray | None = None
        self._depth: np.ndarray | None = None
        self.w, self.h = int(width), int(height)
        self.fx = (self.w / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
        self.fy = self.fx
        self.cx, self.cy = self.w / 2.0, self.h / 2.0
        self.cam_h = camera_height
        self.slope = (self.cx - (np.arange(self.w) + 0.5)) / self.fx  # lateral offset per metre of depth
        rows = np.arange(self.h) + 0.5
        self.rows = rows
        below = rows > self.cy
        self.floor_rows = np.nonzero(below)[0]
        self.floor_depth = self.fy * camera_height / (rows[below] - self.cy)
        self.floor_depth32 = self.floor_depth.astype(np.float32)
        self.slope32 = self.slope.astype(np.float32)
        segs = world.walls
        self.seg_p = segs[:, 0:2]
        self.seg_e = segs[:, 2:4] - segs[:, 0:2]
        self.seg_len = np.linalg.norm(self.seg_e, axis=1)
        self.wall_rgb = np.array([r.wall_rgb for r in world.rooms] + [(200, 200, 200)], dtype=np.float32)
        self.floor_rgb = np.array([r.floor_rgb for r in world.rooms] + [(90, 90, 90)], dtype=np.float32)
        self.objects = world.objects
        # room grid value -> palette row (-1, outside every room, -> the last row)
        self._room_lut = np.array(list(range(len(world.rooms))) + [len(world.rooms)] * (256 - len(world.rooms)),
                                  dtype=np.int32)
        self._obj_xy = np.array([(o.x, o.y) for o in self.objects]).reshape(-1, 2)
        self._obj_radius = np.array([math.hypot(o.hx, o.hy) for o in self.objects])
        self._order_key = self._stack_roots()
        rng = np.random.default_rng([int(seed), 0x9015E])
        noise = np.round(rng.normal(0.0, 2.5, (self.h + 32, self.w + 32, 3)))
        self._noise_up = np.clip(noise, 0, 255).astype(np.uint8)
        self._noise_down = np.clip(-noise, 0, 255).astype(np.uint8)
        self._noise_rng = rng
        self._ceiling_rows = np.array(CEILING_COLOR, dtype=np.float32)[None, :] * (0.9 + 0.1 * rows / self.h)[:, None]
        self._row_index = np.broadcast_to(np.arange(self.h, dtype=np.int32)[:, None], (self.h, self.w))
        self._col_index = np.arange(self.w, dtype=np.int32)[None, :]

    def _stack_roots(self) -> list[tuple[int, int]]:
        """(root object index, level) per object: supports are drawn before what rests on them."""
        index = {o.gt_track: i for i, o in enumerate(self.objects)}
        out = []
        for i, o in enumerate(self.objects):
            level, root = 0, i
            while self.objects[root].support is not None and self.objects[root].support in index and level < 5:
                root = index[self.objects[root].support]
                level += 1
            out.append((root, level))
        return out

    # ------------------------------------------------------------------------------------------
    def _cast_walls(self, cam: np.ndarray, fwd: np.ndarray, left: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per column: depth of the first wall, its room index, its texture coordinate and shade."""
        d = fwd[None, :] + self.slope[:, None] * left[None, :]  # (W, 2), unit forward component
        e = self.seg_e
        pc = self.seg_p - cam[None, :]
        denom = d[:, None, 0] * e[None, :, 1] - d[:, None, 1] * e[None, :, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (pc[None, :, 0] * e[None, :, 1] - pc[None, :, 1] * e[None, :, 0]) / denom
            s = (pc[None, :, 0] * d[:, None, 1] - pc[None, :, 1] * d[:, None, 0]) / denom
        ok = (np.abs(denom) > 1e-9) & (t > 1e-4) & (s >= -1e-6) & (s <= 1 + 1e-6)
        t = np.where(ok, t, np.inf)
        k = np.argmin(t, axis=1)
        cols = np.arange(self.w)
        depth = t[cols, k]
        depth = np.where(np.isfinite(depth), depth, 50.0)
        hit = cam[None, :] + d * (depth[:, None] - 0.03)
        rooms = self._rooms_at(hit[:, 0], hit[:, 1])
        along = s[cols, k] * self.seg_len[k]
        seg_dir = e[k] / np.maximum(self.seg_len[k], 1e-9)[:, None]
        ray_dir = d / np.linalg.norm(d, axis=1)[:, None]
        incidence = np.abs(seg_dir[:, 0] * ray_dir[:, 1] - seg_dir[:, 1] * ray_dir[:, 0])
        shade = 0.72 + 0.28 * incidence
        stripe = (np.mod(along, 1.0) < 0.025)
        shade = np.where(stripe, shade * 0.82, shade)
        return depth, rooms, shade

    def _rooms_at(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        b = self.world.bounds
        g = self.world.room_grid
        i = np.clip(((ys - b[1]) * (1.0 / GRID_RES)).astype(np.int32), 0, g.shape[0] - 1)
        j = np.clip(((xs - b[0]) * (1.0 / GRID_RES)).astype(np.int32), 0, g.shape[1] - 1)
        if i.ndim > 1:
            return np.take(self._room_lut, np.take(g.ravel(), i * g.shape[1] + j).astype(np.int32) & 255)
        return self._room_lut[g[i, j].astype(np.int32) & 255]

    def render(self, x: float, y: float, yaw: float, omega: float = 0.0) -> tuple[np.ndarray, list[Visible]]:
        """RGB uint8 image seen from the robot at (x, y, yaw), and the objects visible in it."""
        cam = np.array([x, y], dtype=np.float64)
        fwd = np.array([math.cos(yaw), math.sin(yaw)])
        left = np.array([-math.sin(yaw), math.cos(yaw)])
        depth, wall_room, wall_shade = self._cast_walls(cam, fwd, left)

        # one palette gather builds the background: ceiling rows | wall columns | skirting | floor
        h, w = self.h, self.w
        top = self.cy - self.fy * (WALL_HEIGHT - self.cam_h) / depth
        bottom = self.cy + self.fy * self.cam_h / depth
        board = self.cy + self.fy * (self.cam_h - 0.1) / depth
        wall_col = self.wall_rgb[wall_room] * wall_shade[:, None].astype(np.float32)
        fr = self.floor_rows
        fd = self.floor_depth32[:, None]
        sl = self.slope32[None, :]
        wx = np.float32(x) + fd * (np.float32(fwd[0]) + sl * np.float32(left[0]))
        wy = np.float32(y) + fd * (np.float32(fwd[1]) + sl * np.float32(left[1]))
        floor_room = self._rooms_at(wx, wy)
        tile = ((wx * 2.0 + 1000.0).astype(np.int32) + (wy * 2.0 + 1000.0).astype(np.int32)) & 1
        floor_pal = np.concatenate([self.floor_rgb * 0.93, self.floor_rgb]).reshape(-1, 3)
        palette = np.concatenate([self._ceiling_rows, wall_col, wall_col * 0.7, floor_pal]).astype(np.uint8)
        packed = np.zeros((len(palette), 4), dtype=np.uint8)
        packed[:, :3] = palette
        packed = packed.view(np.uint32).ravel()
        rows = self.rows[:, None]
        index = np.where(rows >= top[None, :], h + self._col_index, self._row_index)
        index = np.where(rows >= board[None, :], h + w + self._col_index, index)
        floor_index = h + 2 * w + floor_room * 2 + tile
        index[fr] = np.where(rows[fr] >= bottom[None, :], floor_index, index[fr])
        img = cv2.cvtColor(np.take(packed, index).view(np.uint8).reshape(h, w, 4), cv2.COLOR_RGBA2RGB)
        if self.want_depth:
            self._depth = self._background_depth(depth, top, bottom)
        visible = self._draw_objects(img, cam, fwd, left, depth)
        if self.want_depth:
            self.last_depth, self._depth = self._depth, None
        if abs(omega) > 0.5:  # motion blur on fast turns (exposure ~40 ms)
            k = int(min(31, abs(omega) * 0.04 * self.fx))
            if k >= 3:
                img = cv2.blur(img, (k, 1))
        oy, ox = (int(v) for v in self._noise_rng.integers(0, 32, 2))
        img = cv2.add(img, self._noise_up[oy:oy + self.h, ox:ox + self.w])
        img = cv2.subtract(img, self._noise_down[oy:oy + self.h, ox:ox + self.w])
        return img, visible

    def _background_depth(self, wall_depth: np.ndarray, top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
        """Optical depth of walls, floor and ceiling: per column for the wall, per row elsewhere."""
        rows = self.rows[:, None]
        out = np.broadcast_to(wall_depth[None, :].astype(np.float32), (self.h, self.w)).copy()
        with np.errstate(divide="ignore"):
            floor = (self.fy * self.cam_h / (rows - self.cy)).astype(np.float32)
            ceiling = (self.fy * (WALL_HEIGHT - self.cam_h) / (self.cy - rows)).astype(np.float32)
        below = rows >= bottom[None, :]
        above = rows < top[None, :]
        out = np.where(below, np.broadcast_to(floor, out.shape), out)
        out = np.where(above, np.broadcast_to(ceiling, out.shape), out)
        return out.astype(np.float32)

    # ------------------------------------------------------------------------------------------
    def _draw_objects(self, img: np.ndarray, cam: np.ndarray, fwd: np.ndarray, left: np.ndarray,
                      wall_depth: np.ndarray) -> list[Visible]:
        if not self.objects:
            return []
        rel = self._obj_xy - cam[None, :]
        dist = np.hypot(rel[:, 0], rel[:, 1])
        zc = rel @ fwd
        lat = np.abs(rel @ left)
        rad = self._obj_radius
        in_view = lat - rad * 1.5 < (zc + rad) * (self.cx / self.fx)  # inside the horizontal FOV
        beyond_walls = dist - rad > wall_depth.max() * 1.5  # farther than any wall seen (1.5: slant)
        near = np.nonzero((dist - rad < MAX_RANGE) & (zc + rad > NEAR) & in_view & ~beyond_walls)[0]
        root_depth = {}
        for i in near:
            root = self._order_key[i][0]
            root_depth[root] = float(np.dot(self._obj_xy[root] - cam, fwd))
        order = sorted(near, key=lambda i: (-root_depth.get(self._order_key[i][0], zc[i]), self._order_key[i][1], zc[i]))
        ids = np.zeros((self.h, self.w), dtype=np.int16)
        drawn: dict[int, tuple[int, int, int, int, int]] = {}
        for i in order:
            info = self._draw_one(img, ids, int(i), cam, fwd, left, wall_depth)
            if info is not None:
                drawn[int(i)] = info
        out: list[Visible] = []
        for i, (x0, y0, x1, y1, full) in drawn.items():
            m = ids[y0:y1, x0:x1] == i + 1
            count = int(m.sum())
            if count == 0 or full == 0:
                continue
            cols = np.nonzero(m.any(axis=0))[0]
            rws = np.nonzero(m.any(axis=1))[0]
            bbox = (x0 + int(cols[0]), y0 + int(rws[0]), x0 + int(cols[-1]) + 1, y0 + int(rws[-1]) + 1)
            frac = count / full
            if bbox[2] - bbox[0] < MIN_BOX_PX or bbox[3] - bbox[1] < MIN_BOX_PX or frac < MIN_VISIBLE:
                continue
            out.append(Visible(i, bbox, round(frac, 3), count))
        return out

    def _project(self, pts: np.ndarray, cam: np.ndarray, fwd: np.ndarray, left: np.ndarray) -> np.ndarray:
        rel = pts[:, :2] - cam[None, :]
        z = rel @ fwd
        lat = rel @ left
        u = self.cx - self.fx * lat / z
        v = self.cy - self.fy * (pts[:, 2] - self.cam_h) / z
        return np.clip(np.column_stack([u, v]), -1e5, 1e5)

    def _draw_one(self, img: np.ndarray, ids: np.ndarray, i: int, cam: np.ndarray, fwd: np.ndarray,
                  left: np.ndarray, wall_depth: np.ndarray) -> tuple[int, int, int, int, int] | None:
        o: SimObject = self.objects[i]
        xs = (o.x - o.hx, o.x + o.hx, o.x + o.hx, o.x - o.hx)
        ys = (o.y - o.hy, o.y - o.hy, o.y + o.hy, o.y + o.hy)
        corners = np.array([(xs[k], ys[k], o.z) for k in range(4)] + [(xs[k], ys[k], o.z + o.h) for k in range(4)])
        depth = (corners[:, :2] - cam[None, :]) @ fwd
        if depth.max() <= NEAR:
            return None
        clipped = depth.min() < NEAR
        if clipped:
            pts = [corners[k] for k in range(8) if depth[k] >= NEAR]
            for a, b in _EDGES:
                if (depth[a] - NEAR) * (depth[b] - NEAR) < 0:
                    f = (NEAR - depth[a]) / (depth[b] - depth[a])
                    pts.append(corners[a] + f * (corners[b] - corners[a]))
            verts = np.array(pts)
        else:
            verts = corners
        uv = self._project(verts, cam, fwd, left)
        x0, y0 = max(0, int(math.floor(uv[:, 0].min()))), max(0, int(math.floor(uv[:, 1].min())))
        x1, y1 = min(self.w, int(math.ceil(uv[:, 0].max())) + 1), min(self.h, int(math.ceil(uv[:, 1].max())) + 1)
        if x1 <= x0 or y1 <= y0:
            return None
        off = np.array([x0, y0], dtype=np.float64)
        hull = cv2.convexHull(np.round((uv - off) * 4).astype(np.int32))
        mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
        cv2.fillConvexPoly(mask, hull, 1, lineType=cv2.LINE_8, shift=2)
        full = int(mask.sum())
        if full == 0:
            return None
        base = np.array(o.rgb, dtype=np.float32)
        patch = np.empty((y1 - y0, x1 - x0, 3), dtype=np.uint8)
        patch[:] = np.clip(base * 0.8, 0, 255).astype(np.uint8)
        if not clipped:  # shaded faces: the ones facing the camera, and the top when seen from above
            faces = []
            if cam[0] > o.x + o.hx:
                faces.append(((1, 2, 6, 5), 0.92))
            if cam[0] < o.x - o.hx:
                faces.append(((0, 3, 7, 4), 0.92))
            if cam[1] > o.y + o.hy:
                faces.append(((2, 3, 7, 6), 1.0))
            if cam[1] < o.y - o.hy:
                faces.append(((0, 1, 5, 4), 1.0))
            if self.cam_h > o.z + o.h:
                faces.append(((4, 5, 6, 7), 1.12))
            for face, shade in faces:
                poly = np.round((uv[list(face)] - off) * 4).astype(np.int32)
                color = tuple(int(c) for c in np.clip(base * shade, 0, 255))
                cv2.fillConvexPoly(patch, poly, color, lineType=cv2.LINE_8, shift=2)
        edge = tuple(int(c) for c in np.clip(base * 0.55, 0, 255))
        cv2.polylines(patch, [hull], True, edge, 1, lineType=cv2.LINE_8, shift=2)
        # per-column wall test: the nearest point of the footprint along each column's ray
        cols = np.arange(x0, x1)
        ray = fwd[None, :] + self.slope[cols][:, None] * left[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            tx = np.stack([(o.x - o.hx - cam[0]) / ray[:, 0], (o.x + o.hx - cam[0]) / ray[:, 0]])
            ty = np.stack([(o.y - o.hy - cam[1]) / ray[:, 1], (o.y + o.hy - cam[1]) / ray[:, 1]])
        t_in = np.maximum(np.nan_to_num(tx.min(axis=0), nan=-np.inf), np.nan_to_num(ty.min(axis=0), nan=-np.inf))
        col_ok = t_in < wall_depth[x0:x1]
        m = mask.astype(bool) & col_ok[None, :]
        if not m.any():
            return (x0, y0, x1, y1, full)
        region = img[y0:y1, x0:x1]
        region[m] = patch[m]
        ids[y0:y1, x0:x1][m] = i + 1
        if self._depth is not None:  # the box's entry point along each drawn pixel's ray
            vz = ((self.cy - self.rows[y0:y1]) / self.fy)[:, None]  # height gained per metre of depth
            top, bottom = o.z + o.h - self.cam_h, o.z - self.cam_h
            with np.errstate(divide="ignore", invalid="ignore"):
                t_z = np.where(vz < 0, np.where(top < 0, top / vz, 0.0),
                               np.where(vz > 0, np.where(bottom > 0, bottom / vz, 0.0), 0.0))
            t = np.maximum(np.maximum(t_in, NEAR)[None, :], t_z)
            self._depth[y0:y1, x0:x1][m] = np.broadcast_to(t, m.shape)[m].astype(np.float32)
        return (x0, y0, x1, y1, full)
