"""The rendered evidence: one image that shows why the memory answered as it did.

Up to four of the answer's top keyframes, each with the boxes and labels of the evidence objects
seen in it, beside a small top-down map of the robot's recorded path, the evidence objects and the
frames' viewpoints (the "reasoning frame" of Graph-to-Frame RAG, seed 001: a model reads one image
with the knowledge drawn in, instead of many images plus a text dump). Pure numpy/cv2.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import cv2
import numpy as np

from ..capture import encode_jpeg
from ..images import decode_compressed

if TYPE_CHECKING:
    from ..memory import Memory
    from .types import AskResult

log = logging.getLogger("vlkng.ask")
TILE_W, TILE_H = 400, 300
MAP_SIZE = 300
MAX_TILES = 4
PALETTE = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240),
           (240, 50, 230), (210, 245, 60), (0, 128, 128), (170, 110, 40)]


def _text(img: np.ndarray, text: str, org: tuple[int, int], color=(255, 255, 255), scale: float = 0.45) -> None:
    x, y = org
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    cv2.rectangle(img, (x, y - h - 3), (x + w + 2, y + 2), (0, 0, 0), -1)
    cv2.putText(img, text, (x + 1, y), cv2.FONT_HERSHEY_SIMPLEX, scale, color, 1, cv2.LINE_AA)


def _tile(memory: "Memory", tour_id: str, stamp_ns: int, boxes: list[tuple[str, tuple, tuple]],
          caption: str) -> np.ndarray:
    """One keyframe scaled to the tile, with its boxes; grey with a note when it is not stored."""
    tile = np.full((TILE_H, TILE_W, 3), 60, np.uint8)
    kf = memory.graph.get_keyframe(tour_id, stamp_ns)
    img = None
    if kf is not None and kf.image_ref:
        try:
            img = decode_compressed(memory.frames.get(kf.image_ref))
        except (KeyError, ValueError, OSError) as e:
            log.debug("evidence image: keyframe %s/%s unreadable: %s", tour_id, stamp_ns, e)
    if img is None:
        _text(tile, "(image not stored)", (10, TILE_H // 2))
    else:
        h, w = img.shape[:2]
        s = min(TILE_W / w, TILE_H / h)
        small = cv2.resize(img, (max(1, int(w * s)), max(1, int(h * s))), interpolation=cv2.INTER_AREA)
        oy, ox = (TILE_H - small.shape[0]) // 2, (TILE_W - small.shape[1]) // 2
        tile[oy:oy + small.shape[0], ox:ox + small.shape[1]] = small
        for label, bbox, color in boxes:
            x1, y1, x2, y2 = (int(round(v * s)) for v in bbox)
            p1, p2 = (ox + x1, oy + y1), (ox + x2, oy + y2)
            cv2.rectangle(tile, p1, p2, color, 2)
            _text(tile, label, (p1[0] + 2, max(12, p1[1] - 2)), color)
    _text(tile, caption, (4, TILE_H - 6), scale=0.4)
    return tile


def _map(memory: "Memory", res: "AskResult", colors: dict[str, tuple]) -> np.ndarray:
    """Top-down map: the recorded path (grey), the answer's frames' viewpoints (white, numbered),
    evidence objects (coloured dots) and the goal (a cross); north-up, map frame."""
    canvas = np.full((MAP_SIZE, MAP_SIZE, 3), 25, np.uint8)
    tours = sorted({f.tour_id for f in res.frames}) or memory.graph.tours()[:1]
    path = [(k.pose.x, k.pose.y) for t in tours for k in memory.graph.keyframes(t) if k.pose]
    objs = [(o.position, o.id, o.label) for o in res.evidence_objects if o.position]
    views = [(f.pose.x, f.pose.y, f.pose.yaw) for f in res.frames if f.pose]
    pts = path + [p for p, _, _ in objs] + [(x, y) for x, y, _ in views]
    if res.goal:
        pts.append((res.goal.x, res.goal.y))
    if not pts:
        _text(canvas, "(no poses: no map)", (10, MAP_SIZE // 2))
        return canvas
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1.0) * 1.1
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    margin = 14

    def px(x: float, y: float) -> tuple[int, int]:
        s = (MAP_SIZE - 2 * margin) / span
        return int(MAP_SIZE / 2 + (x - cx) * s), int(MAP_SIZE / 2 - (y - cy) * s)

    for a, b in zip(path, path[1:]):
        cv2.line(canvas, px(*a), px(*b), (110, 110, 110), 1, cv2.LINE_AA)
    for i, (x, y, yaw) in enumerate(views, 1):
        p = px(x, y)
        q = (int(p[0] + 12 * math.cos(yaw)), int(p[1] - 12 * math.sin(yaw)))
        cv2.arrowedLine(canvas, p, q, (255, 255, 255), 1, cv2.LINE_AA, tipLength=0.4)
        _text(canvas, str(i), (p[0] + 3, p[1] + 12), scale=0.35)
    for (x, y), oid, label in objs:
        p = px(x, y)
        color = colors.get(oid, (200, 200, 200))
        cv2.circle(canvas, p, 5, color, -1, cv2.LINE_AA)
        _text(canvas, label, (p[0] + 6, p[1] - 4), color, scale=0.38)
    if res.goal:
        g = px(res.goal.x, res.goal.y)
        cv2.drawMarker(canvas, g, (255, 255, 0), cv2.MARKER_CROSS, 14, 2)
    _text(canvas, f"map {span:.0f} m across", (4, 14), scale=0.4)
    return canvas


def compose(memory: "Memory", res: "AskResult", max_tiles: int = MAX_TILES) -> np.ndarray | None:
    """The evidence image (RGB) for a reply, or None when it has no frames and no objects."""
    if not res.frames and not res.evidence_objects:
        return None
    colors = {o.id: PALETTE[i % len(PALETTE)] for i, o in enumerate(res.evidence_objects)}
    labels = {o.id: o.label for o in res.evidence_objects}
    wanted = set(colors)
    nodes = {n.id: n for n in memory.graph.get_objects(wanted)} if wanted else {}
    tiles = []
    for i, f in enumerate(res.frames[:max_tiles], 1):
        boxes = []
        for oid in dict.fromkeys(list(f.object_ids) + list(wanted)):
            node = nodes.get(oid)
            if node is None:
                continue
            ob = next((o for o in node.observations if o.stamp_ns == f.stamp_ns and o.tour_id == f.tour_id), None)
            if ob is not None:
                boxes.append((labels.get(oid, node.label), ob.bbox, colors.get(oid, (255, 255, 255))))
        tiles.append(_tile(memory, f.tour_id, f.stamp_ns, boxes, f"{i}. {f.tour_id} {f.stamp_ns}"))
    while len(tiles) % 2 or not tiles:
        tiles.append(np.full((TILE_H, TILE_W, 3), 40, np.uint8))
    grid = np.vstack([np.hstack(tiles[i:i + 2]) for i in range(0, len(tiles), 2)])
    side = np.full((grid.shape[0], MAP_SIZE, 3), 25, np.uint8)
    side[:MAP_SIZE] = _map(memory, res, colors)
    y = MAP_SIZE + 20
    for line in _wrap(f"A: {res.answer}", 44)[: max(0, (grid.shape[0] - y) // 16)]:
        _text(side, line, (6, y), scale=0.42)
        y += 16
    return np.hstack([grid, side])


def _wrap(text: str, width: int) -> list[str]:
    lines, cur = [], ""
    for w in text.split():
        if len(cur) + len(w) + 1 > width and cur:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return lines + ([cur] if cur else [])


def compose_for_result(memory: "Memory", res: "AskResult") -> bytes | None:
    """The evidence image as JPEG bytes (for a VLM or a client), or None."""
    img = compose(memory, res)
    return encode_jpeg(img, 85) if img is not None else None


def write_evidence_image(memory: "Memory", res: "AskResult", path: str) -> str:
    """Write the evidence image (JPEG or PNG by the path's suffix) and record its path in the
    reply; returns the path, or "" when there was nothing to draw."""
    img = compose(memory, res)
    if img is None:
        return ""
    ok = cv2.imwrite(str(path), cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
    if not ok:
        raise OSError(f"could not write the evidence image to {path} (use a .jpg or .png path in a writable folder)")
    res.evidence_image = str(path)
    return str(path)
