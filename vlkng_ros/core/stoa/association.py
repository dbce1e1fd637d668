"""Association: which existing node each object of a chunk is.

Each new object is placed (bearings, floor contact), given a bounded shortlist of candidates
(vector search, spatial index, recency), scored against them (deterministically here, or by the
LLM judge in ``judge.py``) and assigned one-to-one above the threshold.
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..calibration import CameraHeightCalibrator
from ..config import VlkngConfig
from ..depth import KeyframeDepths, add_depth_fixes
from ..geometry import BORDER_PX, MIN_RANGE_M, RayAccumulator, bottom_hidden, ray_for
from ..lexicon import make_lexicon
from ..llm.base import LLM, LLMError, LLMUsage
from ..memory import Memory
from ..model import CameraModel, ChunkGraph, ChunkObject, Keyframe, ObjectNode, Pose
from .judge import llm_scores
from .report import MergeReport

log = logging.getLogger("vlkng.stoa")

# Deterministic judge weights (semantic, attributes, space). Space dominates inside a tour
# (objects rarely move while the robot looks); across tours objects may have been moved, so
# semantics carry more weight there.
WEIGHTS_SAME_TOUR = (0.2, 0.1, 0.7)
WEIGHTS_OTHER_TOUR = (0.5, 0.25, 0.25)
LABEL_GATE = 0.6  # below this label similarity (and weak text similarity) two objects never match ("toilet"~"seat" 0.57)
TEXT_GATE = 0.75  # a descriptor this similar passes even with a weak label match
IN_FRONT_MARGIN_DEG = 90.0  # _in_view with this margin asks only "in front of the camera at all"
POSITION_NOISE_M2 = 0.1  # variance (m^2) of a position that bearings pinned down: the floor of every tolerance
WELL_LOCALISED_VAR = 0.3  # position variance (m^2) at or under which a node's place is trusted
SIZE_CHECK_SIGHTINGS = 4  # recent sightings used to check apparent size
SIZE_RATIO_MAX = 2.0  # implied width vs measured width, either way
# A detector's box edge is off by a share of the box's size: a box ending this share of its width
# (or BORDER_PX) from the image border may be cut by it, and gives no width for a size check
BOX_EDGE_NOISE = 0.1
SAME_KIND_SIMILARITY = 0.8  # label embeddings this close name one kind of thing
# Floor-contact ranging (geometry.py): who may use it
RESTS_ON_PREDICATES = ("on", "in", "above")  # a subject of these does not stand on the floor
EMBEDDING_CACHE_SIZE = 20000  # descriptor vectors kept between chunks (a few MB)
# Without geometry (no pose for the new object or the candidate), space is judged from context:
# the kinds of place both were seen in, what was seen around them, and (same tour) how long ago.
CONTEXT_WEIGHTS = (0.5, 0.4, 0.1)  # place, co-visible things, time adjacency
CONTEXT_SIGHTINGS = 8  # candidate's latest sightings whose frames give its co-visible things


@dataclass
class NewObject:
    """An object of the chunk being merged, placed and embedded."""
    obj: ChunkObject
    vec: np.ndarray
    label_vec: np.ndarray
    position: tuple[float, float] | None
    var: float
    places: dict[str, int]  # place -> keyframes of this chunk it was seen in there
    rays: RayAccumulator
    extent_m: float = 0.0  # rough width of the object (angular box width x range)
    views: list[tuple[Pose, CameraModel]] = field(default_factory=list)  # where it was seen from
    # (pose, angular box width in rad) of each view whose box the image border does not cut
    widths: list[tuple[Pose, float]] = field(default_factory=list)


class EmbeddingCache:
    """LRU of text -> vector so candidates' descriptors are not re-embedded every chunk."""

    def __init__(self, embed, capacity: int = EMBEDDING_CACHE_SIZE) -> None:
        self._embed = embed
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.capacity = capacity

    def get(self, texts: Sequence[str]) -> list[np.ndarray]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for t, v in zip(missing, self._embed(missing)):
                self._cache[t] = v
        out = []
        for t in texts:
            self._cache.move_to_end(t)
            out.append(self._cache[t])
        while len(self._cache) > self.capacity:
            self._cache.popitem(last=False)
        return out


class Associator:
    """Places a chunk's objects, shortlists and scores their candidates. Reads the memory only."""

    def __init__(self, memory: Memory, cfg: VlkngConfig, calibration: CameraHeightCalibrator) -> None:
        self.memory = memory
        self.cfg = cfg
        self.calibration = calibration
        self._cameras: dict[str, CameraModel] = {}
        self.emb = EmbeddingCache(lambda ts: memory.text_embedder.embed_texts(ts))
        self.lexicon = make_lexicon(cfg.embeddings.lexicon, cfg.embeddings.wordnet_dir)
        # depth where the robot has it: each sighting in a keyframe with stored depth adds a fix
        self.depths = KeyframeDepths(memory.frames) if cfg.depth.enabled else None
        self.depth_noise = cfg.depth.noise()
        self._covisible: dict[str, set[str]] = {}  # candidate id -> labels seen with it (per chunk)

    @property
    def camera_height(self) -> float | None:
        return self.calibration.height

    def camera_for(self, tour_id: str, width: int, height: int) -> CameraModel:
        cam = self._cameras.get(tour_id)
        if cam is None:
            raw = self.memory.graph.get_meta(f"camera:{tour_id}")
            cam = CameraModel(**json.loads(raw)) if raw else CameraModel.from_hfov(
                width, height, self.cfg.capture.camera_hfov_deg)
            self._cameras[tour_id] = cam
        return cam

    # ----------------------------------------------------------------------------------------
    def prepare(self, chunk: ChunkGraph, keyframes: dict[int, Keyframe]) -> list[NewObject]:
        self._covisible = {}  # candidates change as chunks merge
        objs = chunk.objects
        if not objs:
            return []
        vecs = self.emb.get([o.text() for o in objs])
        label_vecs = self.emb.get([o.label.lower() for o in objs])
        boxes_at: dict[int, list] = defaultdict(list)  # stamp -> every box of the chunk in that frame
        for o in objs:
            for stamp, box in o.boxes.items():
                boxes_at[stamp].append(box)
        resting = {r.subject for r in chunk.relations if r.predicate.strip().lower() in RESTS_ON_PREDICATES}
        pitch = math.radians(self.cfg.capture.camera_pitch_deg)
        news = []
        for o, v, lv in zip(objs, vecs, label_vecs):
            rays = RayAccumulator()
            views: list[tuple[Pose, CameraModel]] = []
            widths: list[float] = []  # angular box widths (rad), one per view
            whole: list[tuple[Pose, float]] = []  # the same, of boxes the image border does not cut
            sightings = []  # for depth: (tour, stamp, pose, box, camera, the other boxes in that image)
            # small things and things perceived on something stand on furniture, not on the floor
            may_stand = (self.calibration.floor_ranging and o.local_id not in resting
                         and o.attributes.get("size", "").strip().lower() != "small")
            for stamp, box in o.boxes.items():
                kf = keyframes.get(stamp)
                if kf is not None and kf.pose is not None:
                    cam = self.camera_for(chunk.tour_id, kf.width, kf.height)
                    rays.add(ray_for(kf.pose, box, cam, on_floor=may_stand and not bottom_hidden(box, boxes_at[stamp]),
                                     pitch_rad=pitch))
                    views.append((kf.pose, cam))
                    widths.append(angular_width(cam, box))
                    if not maybe_cut(box, cam):
                        whole.append((kf.pose, widths[-1]))
                    sightings.append((chunk.tour_id, stamp, kf.pose, box, cam, [b for b in boxes_at[stamp] if b is not box]))
            if self.depths is not None:  # all at once: a fix that disagrees with the others is left out
                add_depth_fixes(rays, self.depths, sightings, self.depth_noise, pitch, self.camera_height)
            est = rays.solve(self.camera_height)
            places = Counter(chunk.places[s] for s in o.boxes if chunk.places.get(s))
            footprint = rays.footprint()
            if footprint is not None:  # measured by depth
                extent = footprint[0]
            else:  # rough width of the object (m): angular width times range
                extent = float(np.median([w * math.dist((p.x, p.y), est[0]) for (p, _), w in zip(views, widths)])) \
                    if est else 0.0
            news.append(NewObject(o, v, lv, est[0] if est else None, est[1] if est else 0.0, dict(places), rays,
                                  extent, views, whole))
        return news

    def shortlist(self, chunk: ChunkGraph, news: list[NewObject], report: MergeReport) -> list[list[ObjectNode]]:
        st = self.cfg.stoa
        graph, vectors = self.memory.graph, self.memory.vectors
        collection = self.memory.text_collection
        have_vectors = True
        try:
            vectors.ensure_collection(collection, self.memory.text_embedder.dim)
        except Exception as e:  # the vector store is down: shortlist from the graph alone
            have_vectors = False
            report.warnings.append(f"vector store unavailable for shortlist: {e}")
        since = chunk.frames[0] - int(st.recent_s * 1e9) if chunk.frames else 0
        recent = graph.recent_objects(chunk.tour_id, since, limit=st.shortlist_k * 2)
        out: list[list[ObjectNode]] = []
        for n in news:
            ids: list[str] = []
            if have_vectors:
                hits = vectors.search(collection, n.vec, limit=st.shortlist_k * 3)
                ids += [h.payload.get("object_id", "") for h in hits]
            ids = list(dict.fromkeys(i for i in ids if i))[: st.shortlist_k]
            pool = {o.id: o for o in graph.get_objects(ids)}
            if n.position is not None:
                for o in graph.objects_near(n.position[0], n.position[1], st.radius_m, limit=st.shortlist_k):
                    pool.setdefault(o.id, o)
            for o in recent:
                pool.setdefault(o.id, o)
            cands = list(pool.values())
            if len(cands) > st.max_candidates:
                pre = [self.score(chunk, n, c) for c in cands]
                order = np.argsort(pre)[::-1][: st.max_candidates]
                cands = [cands[i] for i in order]
            report.shortlist_sizes.append(len(cands))
            out.append(cands)
        return out

    def judge(self, chunk: ChunkGraph, news: list[NewObject], cands: list[list[ObjectNode]],
              report: MergeReport, llm: LLM | None, usage: LLMUsage) -> list[list[tuple[str, float]]]:
        """Similarity of each new object to each of its candidates: the LLM judge when one is
        configured (``stoa.judge`` auto/llm), else, or when it fails, the deterministic one."""
        mode = self.cfg.stoa.judge
        use_llm = llm is not None and mode in ("auto", "llm") and any(cands)
        if mode == "llm" and llm is None:
            report.warnings.append("stoa.judge=llm but no LLM is configured: deterministic judge used")
        if use_llm:
            try:
                scores = llm_scores(llm, usage, news, cands, report)  # type: ignore[arg-type]
                report.judge = "llm"
                return scores
            except LLMError as e:
                report.judge = "llm-fallback"
                report.warnings.append(f"LLM judge failed ({e}); deterministic judge used")
                log.warning("%s: LLM judge failed (%s); using the deterministic judge", chunk.chunk_id, e)
        return [[(c.id, self.score(chunk, n, c)) for c in cs] for n, cs in zip(news, cands)]

    def score(self, chunk: ChunkGraph, n: NewObject, c: ObjectNode) -> float:
        """The deterministic judge: semantic, attribute and spatial agreement, in [0, 1]."""
        # the gate weighs each name by its votes: one stray name (a sofa merged once into the
        # cushion lying on it) must not make every later sofa a perfect match for the cushion;
        # past the gate, a name the object was given is a name match (one misnaming chunk of a
        # table called "desk" is still the table)
        s_gate, s_named, s_label = self.label_agreement(n, c)
        s_text = float(n.vec @ self.emb.get([c.text()])[0])
        if s_gate < LABEL_GATE and s_text < TEXT_GATE:
            return 0.0
        if s_gate < SAME_KIND_SIMILARITY and s_named < LABEL_GATE and c.position is not None and n.views:
            # names only loosely alike by embedding, neither one name nor related in the lexicon
            # ("sofa" / "cushion" 0.63, as "lamp" / "light"): one object has one size, and a
            # cushion lying on a sofa has the sofa's place but not its size. Both widths as if at
            # c's place, from boxes the image border does not cut. Where one of the two was seen
            # only cut by the border its size is unknown (a cut box is part of the object, not
            # its width): the names alone do not make one object of a sofa seen at the image's
            # edge and the cushion on it, so they stay two.
            theirs = self.implied_width(c, c.position, ignore_cut=True)
            mine = float(np.median([w * math.dist((p.x, p.y), c.position) for p, w in n.widths])) if n.widths else 0.0
            if not theirs or mine <= 0.0 or not 1.0 / SIZE_RATIO_MAX <= theirs / mine <= SIZE_RATIO_MAX:
                return 0.0
        shared = [k for k in n.obj.attributes if k in c.attributes]
        s_attr = (sum(n.obj.attributes[k].lower() == c.attributes[k].lower() for k in shared) / len(shared)
                  if shared else 0.5)
        if n.position is None or c.position is None:
            s_space = self.context_agreement(chunk, n, c)
        else:
            s_space = self.spatial_agreement(n, c)
        w_sem, w_attr, w_space = WEIGHTS_SAME_TOUR if chunk.tour_id in c.tours else WEIGHTS_OTHER_TOUR
        return w_sem * (0.5 * s_label + 0.5 * s_text) + w_attr * s_attr + w_space * s_space

    def label_agreement(self, n: NewObject, c: ObjectNode) -> tuple[float, float, float]:
        """How well the new object's label names candidate ``c``, each in [0, 1]: the best
        similarity to one of the names ``c`` was given, (1) each name weighted by how many chunks
        gave it against the majority name (``label_weights``), (2) the same with the embedding left
        out (one name, or related in the lexicon), (3) unweighted. A VLM names one object
        differently across chunks ("settee", "sofa", "seat"): the embedding, or the lexicon where
        it knows the words better (synonym, kind of), says how close two names are."""
        weights = label_weights(c)
        new = n.obj.label.lower()
        if weights.get(new, 0.0) >= 1.0:
            return 1.0, 1.0, 1.0
        labels = list(weights)
        related = self.lexicon.related(new)
        named = [1.0 if lab == new else related.get(lab, 0.0) for lab in labels]
        sims = [max(s, float(n.label_vec @ v)) for s, v in zip(named, self.emb.get(labels))]
        return (max(weights[lab] * x for lab, x in zip(labels, sims)),
                max(weights[lab] * x for lab, x in zip(labels, named)), max(sims))

    def context_agreement(self, chunk: ChunkGraph, n: NewObject, c: ObjectNode) -> float:
        """Space without geometry, in [0, 1]: did both sightings happen in the same kind of place,
        among the same things, close in time? Two doors, one seen in the entrance hall with a
        planter and one in the bedroom with a bed, are two doors; 0.5 where nothing is known."""
        w_place, w_covis, w_time = CONTEXT_WEIGHTS
        places_c = c.place_counts or {p: 1 for p in c.places}
        if n.places and places_c:
            keys = set(n.places) | set(places_c)
            dot = sum(n.places.get(k, 0) * places_c.get(k, 0) for k in keys)
            norm = math.sqrt(sum(v * v for v in n.places.values()) * sum(v * v for v in places_c.values()))
            s_place = dot / norm if norm else 0.5
        else:
            s_place = 0.5
        mine = {o.label.lower() for o in chunk.objects
                if o is not n.obj and set(o.boxes) & set(n.obj.boxes)} - {n.obj.label.lower()}
        theirs = self._covisible_labels(c) - {c.label.lower()}
        s_covis = len(mine & theirs) / len(mine | theirs) if mine and theirs else 0.5
        if chunk.tour_id in c.tours and c.last_seen_ns:
            first = min(n.obj.boxes) if n.obj.boxes else chunk.frames[0]
            gap_s = max(0.0, first - c.last_seen_ns) / 1e9
            s_time = math.exp(-gap_s / max(self.cfg.stoa.recent_s, 1.0))
        else:
            s_time = 0.0
        return w_place * s_place + w_covis * s_covis + w_time * s_time

    def _covisible_labels(self, c: ObjectNode) -> set[str]:
        """Labels of the other objects in the frames of ``c``'s latest sightings (cached per chunk)."""
        if c.id not in self._covisible:
            frames = [(ob.tour_id, ob.stamp_ns) for ob in c.observations[-CONTEXT_SIGHTINGS:]]
            ids = {i for row in self.memory.graph.objects_in_frames(frames).values() for i in row} - {c.id}
            self._covisible[c.id] = {o.label.lower() for o in self.memory.graph.get_objects(sorted(ids))}
        return self._covisible[c.id]

    def spatial_agreement(self, n: NewObject, c: ObjectNode) -> float:
        """How well the new detection and candidate ``c`` agree in space, in [0, 1].

        Bearings are accurate; range along them often is not (little parallax inside a chunk).
        A well-localised candidate must lie on this chunk's bearings, in view of its cameras.
        A poorly-ranged candidate may also be judged by its own bearings: this chunk's estimate
        on them, at a distance where it would have the apparent size it had. Box centres of big
        objects wander with the viewpoint, so the tolerance grows with the object's size."""
        if n.position is None or c.position is None:
            return 0.5  # no poses: space says nothing
        reliable = (c.position_var or 9.0) <= WELL_LOCALISED_VAR * 2
        if reliable and n.views and not in_view(c.position, n.views):
            return 0.0  # behind the camera or outside the image where this object was seen
        c_rays = RayAccumulator(c.ray_stats) if c.ray_stats else None
        if c_rays is not None and n.views:
            # the point both sets of bearings meet at must lie in front of this chunk's cameras:
            # rays of two objects always cross somewhere, often behind one of the viewers
            joint = n.rays.merged(c_rays).solve(self.camera_height)
            if joint is not None and not in_view(joint[0], n.views, margin_deg=IN_FRONT_MARGIN_DEG):
                return 0.0
        resid = n.rays.residual_at(c.position)
        if not reliable and c_rays is not None:
            back = c_rays.residual_at(n.position)
            if back < resid and self.size_consistent(c, n.position, n.extent_m):
                resid = back
        sigma2 = POSITION_NOISE_M2 + (0.35 * n.extent_m) ** 2 + 0.3 * min(c.position_var or 0.5, 1.0)
        d2 = (n.position[0] - c.position[0]) ** 2 + (n.position[1] - c.position[1]) ** 2
        far = math.exp(-d2 / (2.0 * (n.var + (c.position_var or 0.5) + 1.0)))
        return math.exp(-resid / (2.0 * sigma2)) * (0.5 + 0.5 * far)

    def size_consistent(self, c: ObjectNode, point: tuple[float, float], extent_m: float,
                        ignore_cut: bool = False) -> bool:
        """Would ``c``'s boxes have their pixel widths if ``c`` stood at ``point``? Bearings alone
        cannot tell how far along its rays a poorly-ranged object is; apparent size can: an
        object of width ``extent_m`` at ``point`` must look that wide from where ``c`` was seen.
        ``ignore_cut``: skip sightings cut by the image border (consolidation: a big object's
        centre may lie outside the image that shows part of it; per-chunk matching keeps them)."""
        if extent_m <= 0.0:
            return False
        implied = self.implied_width(c, point, ignore_cut)
        return implied is not None and 1.0 / SIZE_RATIO_MAX <= implied / extent_m <= SIZE_RATIO_MAX

    def implied_width(self, c: ObjectNode, point: tuple[float, float], ignore_cut: bool = False) -> float | None:
        """The width (m) ``c``'s latest boxes give an object at ``point`` (median); None where it
        cannot be told (no usable sighting, or ``point`` is out of one's view: c was not there)."""
        implied = []
        for ob in c.observations[-SIZE_CHECK_SIGHTINGS:]:
            kf = self.memory.graph.get_keyframe(ob.tour_id, ob.stamp_ns)
            if kf is None or kf.pose is None:
                continue
            cam = self.camera_for(ob.tour_id, kf.width, kf.height)
            if ignore_cut and maybe_cut(ob.bbox, cam):
                continue  # part of it is out of the image: its centre may be too, its width is cut
            if not in_view(point, [(kf.pose, cam)]):
                return None  # behind or beside that camera: c was not there
            implied.append(angular_width(cam, ob.bbox) * math.dist((kf.pose.x, kf.pose.y), point))
        return float(np.median(implied)) if implied else None


def label_weights(node: ObjectNode) -> dict[str, float]:
    """Each name ``node`` was given (lower case) -> the chunks that gave it over the chunks that
    gave the majority name, in (0, 1]; its current label 1. A node stored before label votes
    existed weighs every name it was given 1."""
    votes: Counter[str] = Counter()
    for lab, k in node.label_votes.items():
        votes[lab.lower()] += k
    top = max(votes.values(), default=0)
    out = {lab: k / top for lab, k in votes.items()} if top > 0 else {x.lower(): 1.0 for x in node.labels_seen}
    out[node.label.lower()] = 1.0
    return out


def assign(scores: list[list[tuple[str, float]]], threshold: float) -> dict[int, str]:
    """Greedy one-to-one assignment by descending similarity above the threshold."""
    pairs = sorted(((s, i, cid) for i, row in enumerate(scores) for cid, s in row if s > threshold),
                   key=lambda t: (-t[0], t[1], t[2]))
    taken_new: set[int] = set()
    taken_old: set[str] = set()
    out: dict[int, str] = {}
    for _, i, cid in pairs:
        if i in taken_new or cid in taken_old:
            continue
        out[i] = cid
        taken_new.add(i)
        taken_old.add(cid)
    return out


def maybe_cut(bbox, cam: CameraModel) -> bool:
    """Is the box perhaps cut by the left or right image border (``cut_by_border``), allowing for
    its edge's noise: the object may go on beyond it, and its width is no measure of its size."""
    margin = max(BORDER_PX, BOX_EDGE_NOISE * (bbox[2] - bbox[0]))
    return bbox[0] <= margin or bbox[2] >= cam.width - margin


def angular_width(cam: CameraModel, bbox) -> float:
    """Horizontal angle (rad) a box spans in the image."""
    return abs(cam.bearing(bbox[0]) - cam.bearing(bbox[2]))


def in_view(point: tuple[float, float], views: list[tuple[Pose, CameraModel]], margin_deg: float = 15.0) -> bool:
    """Is ``point`` in front of, and inside the horizontal field of view of, most of the views?
    (Bearing lines extend behind the camera; the object cannot be there.)"""
    inside = 0
    for pose, cam in views:
        dx, dy = point[0] - pose.x, point[1] - pose.y
        if dx * math.cos(pose.yaw) + dy * math.sin(pose.yaw) < MIN_RANGE_M:
            continue
        off = abs(math.atan2(math.sin(math.atan2(dy, dx) - pose.yaw), math.cos(math.atan2(dy, dx) - pose.yaw)))
        if off <= math.atan2(cam.width / 2.0, cam.fx) + math.radians(margin_deg):
            inside += 1
    return inside * 2 >= len(views)
