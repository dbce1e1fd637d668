"""Real perception path on REAL frames: OpenEQA's HM3D demo walk (../shared/data, read in place;
skipped where absent) turned into a bag, perceived through the openai backend by a fake
OpenAI-compatible VLM server that answers hand-written labels for those frames
(helpers_hm3d_walk.py: what is visible, as a VLM would name it), built with and without a pose
track. Asserts what a person checks: different doors stay different, the chairs around the dining
table are counted apart (and the bedroom chair is not one of them), "where is the TV" shows the TV.
"""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

import helpers_hm3d_walk as L
from helpers_openai import FakeOpenAI, Reply
from helpers import write_tour
from helpers_data import shared_data_dir
from vlkng_ros.cli import main as cli_main
from vlkng_ros.core.ask.engine import AskEngine
from vlkng_ros.core.ask.types import AskRequest
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory

DATA = shared_data_dir("openeqa/open-eqa-hm3d-demo.mp4")
VIDEO = DATA / "openeqa" / "open-eqa-hm3d-demo.mp4" if DATA else None
pytestmark = pytest.mark.skipif(VIDEO is None, reason="the shared HM3D demo video is not on this machine")

T0 = 1_750_000_000_000_000_000
STEP_NS = 100_000_000  # 10 fps
W, H = 1280, 720


def stamp(i: int) -> int:
    return T0 + i * STEP_NS


def thumb(rgb: np.ndarray) -> np.ndarray:
    return cv2.resize(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), (32, 18), interpolation=cv2.INTER_AREA).astype(np.float32)


def pose_at(i: int) -> tuple[float, float, float]:
    wps = L.WAYPOINTS
    for (f0, x0, y0, a0), (f1, x1, y1, a1) in zip(wps, wps[1:]):
        if f0 <= i <= f1:
            t = (i - f0) / (f1 - f0)
            return x0 + t * (x1 - x0), y0 + t * (y1 - y0), a0 + t * (a1 - a0)
    return wps[-1][1:]


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    cap = cv2.VideoCapture(str(VIDEO))
    frames = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    cap.release()
    if len(frames) < 160:
        pytest.skip("this OpenCV build cannot decode the mp4")
    root = tmp_path_factory.mktemp("walk")
    stamped = [(stamp(i), f) for i, f in enumerate(frames)]
    no_pose = write_tour(root / "hm3d_walk", stamped)
    posed = write_tour(root / "hm3d_walk_posed", stamped,
                       poses=[(stamp(i), *pose_at(i)) for i in range(len(frames))])
    return {"frames": frames, "no_pose": no_pose, "posed": posed,
            "thumbs": {i: thumb(frames[i]) for i in L.BOXES}}


class HandLabelVLM:
    """Answers a chunk prompt with the hand labels of the frames it was shown (each image is
    recognised by its thumbnail among the labelled frames), one id per physical object per
    answer, as a VLM does inside one prompt. Records each chunk's frames."""

    def __init__(self, thumbs: dict[int, np.ndarray]) -> None:
        self.thumbs = thumbs
        self.chunks: list[list[int]] = []

    def frame_of(self, jpeg: bytes) -> int:
        rgb = cv2.cvtColor(cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
        t = thumb(rgb)
        best = min(self.thumbs, key=lambda i: float(np.mean(np.abs(self.thumbs[i] - t))))
        assert float(np.mean(np.abs(self.thumbs[best] - t))) < 6.0, "an image that is no labelled frame"
        return best

    def __call__(self, req) -> Reply:
        frames = [self.frame_of(j) for j in req.images]
        self.chunks.append(frames)
        objects: dict[str, dict] = {}
        for img, f in enumerate(frames):
            for ident, box in L.BOXES[f]:
                label, color, material = L.OBJECTS[ident]
                obj = objects.setdefault(ident, {"id": ident, "label": label, "color": color,
                                                 "material": material, "boxes": []})
                obj["boxes"].append({"image": img, "box_2d": box})
        relations = []
        for s, p, o in L.RELATIONS:
            imgs = [i for i, f in enumerate(frames) if {s, o} <= {ident for ident, _ in L.BOXES[f]}]
            if imgs:
                relations.append({"subject": s, "predicate": p, "object": o, "images": imgs})
        places = [{"image": i, "place": L.PLACES[f]} for i, f in enumerate(frames)]
        answer = {"objects": list(objects.values()), "relations": relations, "places": places}
        # token counts as a Qwen2.5-VL server would report them: ~1k image tokens a 1280x720 frame
        return FakeOpenAI.ok(answer, prompt_tokens=1000 * len(frames) + 700)


def identity_of(stamp_ns: int, bbox) -> str:
    """The hand-labelled object an observation's pixel box came from (best IoU in its frame)."""
    f = (stamp_ns - T0) // STEP_NS

    def iou(b):
        px = (b[1] * W / 1000, b[0] * H / 1000, b[3] * W / 1000, b[2] * H / 1000)
        ix = max(0.0, min(px[2], bbox[2]) - max(px[0], bbox[0]))
        iy = max(0.0, min(px[3], bbox[3]) - max(px[1], bbox[1]))
        inter = ix * iy
        return inter / ((px[2] - px[0]) * (px[3] - px[1]) + (bbox[2] - bbox[0]) * (bbox[3] - bbox[1]) - inter)

    return max(L.BOXES[f], key=lambda ib: iou(ib[1]))[0]


def build(tour, mem, thumbs, capsys, extra=()):
    vlm = HandLabelVLM(thumbs)
    with FakeOpenAI(responder=vlm) as server:
        capsys.readouterr()
        rc = cli_main(["-q", "build", str(tour), "--memory", str(mem), "--base-url", server.url,
                       "--json", *extra])
        out = capsys.readouterr().out
    assert rc == 0
    return json.loads(out)["tours"][0], vlm


def nodes_by_identity(mem):
    """node id -> set of hand identities its observations came from, and the nodes' labels."""
    with Memory.open(mem, VlkngConfig()) as m:
        nodes = list(m.graph.iter_objects())
    return ({n.id: {identity_of(o.stamp_ns, o.bbox) for o in n.observations} for n in nodes},
            {n.id: n for n in nodes})


def check_what_a_person_checks(mem, tv_frames_top=3):
    idents, nodes = nodes_by_identity(mem)
    doors = {"front_door", "grey_door", "bedroom_door", "bathroom_door"}
    door_nodes = [ids & doors for ids in idents.values() if ids & doors]
    # every door node is one door, and the four doors are four nodes
    assert all(len(d) == 1 for d in door_nodes), door_nodes
    assert {next(iter(d)) for d in door_nodes} == doors
    # the chairs around the dining table are counted apart, and none is the bedroom chair
    dining = {i for i in L.OBJECTS if i.startswith("dchair_")}
    chair_nodes = [ids & (dining | {"bedroom_chair"}) for ids in idents.values() if ids & (dining | {"bedroom_chair"})]
    assert not [c for c in chair_nodes if "bedroom_chair" in c and c & dining], chair_nodes
    assert sum(1 for c in chair_nodes if c & dining) >= 5, chair_nodes
    # the two pictures (living room, dining room) stay two
    pics = [ids & {"living_picture", "dining_picture"} for ids in idents.values()
            if ids & {"living_picture", "dining_picture"}]
    assert all(len(p) == 1 for p in pics), pics
    # where is the TV: frames that show the TV
    tv_frames = {stamp(f) for f, objs in L.BOXES.items() if any(i == "tv" for i, _ in objs)}
    with Memory.open(mem, VlkngConfig()) as m:
        res = AskEngine(m, m.cfg).ask(AskRequest("where is the TV?", top_k=tv_frames_top))
    assert res.found and res.frames
    assert {f.stamp_ns for f in res.frames} <= tv_frames, [(f.stamp_ns - T0) // STEP_NS for f in res.frames]
    return res, idents, nodes


def test_real_walk_without_poses_keeps_look_alikes_apart_then_a_fixed_rebuild_places_them(walk, tmp_path, capsys):
    mem = tmp_path / "mem"
    # the bag has /pose, but the first build is configured with a topic it does not have
    rep, vlm = build(walk["posed"], mem, walk["thumbs"], capsys, ["--set", "pose_topic=slam/pose"])
    assert rep["has_geometry"] is False and rep["keyframes"] == 35 and rep["chunks_merged"] == rep["chunks"] == 5
    assert sorted(f for c in vlm.chunks for f in c) == sorted(L.BOXES)  # every keyframe sent once
    assert len(rep["chunk_latency_s"]) == 5 and rep["input_tokens"] == 35 * 1000 + 5 * 700
    res, _, nodes = check_what_a_person_checks(mem)
    assert res.goal is None  # no geometry, no goal
    assert all(n.position is None for n in nodes.values())
    capsys.readouterr()
    assert cli_main(["stats", str(mem)]) == 0
    assert "geometry:  NONE" in capsys.readouterr().out
    # fixed: the rebuild re-tags the keyframes and places the objects; nothing is perceived again
    rep2, vlm2 = build(walk["posed"], mem, walk["thumbs"], capsys)
    assert rep2["keyframes_retagged"] == 35 and rep2["frames_without_pose"] == 0 and not vlm2.chunks
    assert rep2["objects_replaced"] == len(nodes) and rep2["chunks_skipped"] == 5
    res2, idents, nodes2 = check_what_a_person_checks(mem)
    tv = [nodes2[n] for n, ids in idents.items() if "tv" in ids]
    assert res2.goal is not None and tv[0].position is not None
    rep3, _ = build(walk["posed"], mem, walk["thumbs"], capsys)
    assert rep3["keyframes_retagged"] == 0  # nothing left to fix


def test_real_walk_with_a_pose_track_places_objects_and_gives_goals(walk, tmp_path, capsys):
    rep, _ = build(walk["posed"], tmp_path / "mem", walk["thumbs"], capsys)
    assert rep["has_geometry"] is True and rep["frames_without_pose"] == 0
    res, idents, nodes = check_what_a_person_checks(tmp_path / "mem")
    tv = [nodes[n] for n, ids in idents.items() if "tv" in ids]
    assert res.goal is not None and len(tv) == 1 and tv[0].position is not None
    # the TV is placed in the living room, nearer the start than the bedroom's exercise machine
    ex = [nodes[n] for n, ids in idents.items() if "elliptical" in ids]
    assert ex and math.dist(tv[0].position, (0, 0)) < math.dist(ex[0].position, (0, 0))
