"""STOA: spatiotemporal object association of a chunk graph into the global graph.

The paper scores every (new, existing) object pair with an LLM and thresholds the similarity.
That cost grows with the graph. Here, for each new object of a chunk, a shortlist is drawn from
three indexed sources — the vector store (descriptor embedding, top-k), the graph store's spatial
index (objects near the triangulated position) and recency (objects of this tour seen in the last
``recent_s``) — capped at ``max_candidates``. Only the shortlist is judged: by the LLM in ONE
batched call per chunk when one is configured, else by a deterministic scorer (semantic, attribute
and spatial agreement). Decisions are one-to-one within a chunk (two detections of one chunk are
two objects: the VLM already grouped a chunk's detections). Work per chunk is therefore bounded
by (objects in the chunk) x (max_candidates), whatever the graph's size.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from .config import VlkngConfig
from .geometry import MIN_RANGE_M, RayAccumulator, bottom_hidden, cut_by_border, fuse, ray_for
from .lexicon import is_kind_of, make_lexicon
from .llm.base import LLM, LLMError, LLMUsage
from .memory import Memory
from .model import CameraModel, ChunkGraph, ChunkObject, Keyframe, ObjectNode, Observation, Pose, Relation, replace_word

log = logging.getLogger("vlkng.stoa")

# Deterministic judge weights (semantic, attributes, space). Space dominates inside a tour
# (objects rarely move while the robot looks); across tours objects may have been moved, so
# semantics carry more weight there.
WEIGHTS_SAME_TOUR = (0.2, 0.1, 0.7)
WEIGHTS_OTHER_TOUR = (0.5, 0.25, 0.25)
LABEL_GATE = 0.6  # below this label similarity (and weak text similarity) two objects never match ("toilet"~"seat" 0.57)
TEXT_GATE = 0.75
IN_FRONT_MARGIN_DEG = 90.0  # _in_view with this margin asks only "in front of the camera at all"
POSITION_NOISE_M2 = 0.1
# Consolidation of earlier splits (see StoaMerger._consolidate)
CONSOLIDATE_MAX_VAR = 0.3
CONSOLIDATE_RADIUS_M = 4.0  # poorly localised nodes can sit metres off along their bearings
CONSOLIDATE_SIGMAS = 2.0  # squared-distance gate: d^2 <= 2 * sigma2 * this
SIZE_CHECK_SIGHTINGS = 4  # recent sightings used to check apparent size
SIZE_RATIO_MAX = 2.0  # implied width vs measured width, either way
# Floor-contact ranging (geometry.py): who may use it, and the camera height estimated per memory
RESTS_ON_PREDICATES = ("on", "in", "above")  # a subject of these does not stand on the floor
CAMERA_HEIGHT_META = "camera_height"
CAMERA_HEIGHT_SAMPLES_META = "camera_height_samples"
CALIB_MIN_CONDITIONING = 0.1  # bearings spread enough to place an object without the floor
CALIB_MIN_FLOOR_RAYS = 3.0
CALIB_MIN_OBJECTS = 4
CALIB_MAX_SPREAD = 0.35  # interquartile range / median of the objects' implied heights; beyond it the flat-floor model does not hold
CALIB_MAX_OBJECTS = 400  # the most recent objects' heights are kept
RECALIBRATE_CHANGE = 0.05  # re-solve every floor-ranged object when the estimate moves this much


@dataclass
class MergeReport:
    chunk_id: str
    skipped: bool = False
    created: list[str] = field(default_factory=list)
    matched: dict[str, str] = field(default_factory=dict)  # chunk-local id -> global id
    moved: list[str] = field(default_factory=list)
    consolidated: list[tuple[str, str]] = field(default_factory=list)  # (removed id, kept id)
    shortlist_sizes: list[int] = field(default_factory=list)
    judge: str = "deterministic"  # deterministic | llm | llm-fallback
    judge_prompt_chars: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


@dataclass
class _New:
    obj: ChunkObject
    vec: np.ndarray
    label_vec: np.ndarray
    position: tuple[float, float] | None
    var: float
    places: dict[str, int]  # place -> keyframes of this chunk it was seen in there
    rays: RayAccumulator
    extent_m: float = 0.0  # rough width of the object (angular box width x range)
    views: list[tuple[Pose, CameraModel]] = field(default_factory=list)  # where it was seen from


def memory_camera_height(memory: Memory, cfg: VlkngConfig) -> float | None:
    """The camera height floor ranging uses: ``capture.camera_height_m`` when given (> 0), the
    memory's estimate with the default 0 (None before there is one), None when off (< 0)."""
    given = cfg.capture.camera_height_m
    if given != 0.0:
        return given if given > 0.0 else None
    raw = memory.graph.get_meta(CAMERA_HEIGHT_META)
    return float(raw) if raw else None


def object_id_for(chunk_id: str, local_id: str) -> str:
    """Deterministic global id of an object first created from (chunk, local id)."""
    return "obj-" + hashlib.sha1(f"{chunk_id}/{local_id}".encode()).hexdigest()[:12]


class _EmbeddingCache:
    """LRU of text -> vector so candidates' descriptors are not re-embedded every chunk."""

    def __init__(self, embed, capacity: int = 20000) -> None:
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


class StoaMerger:
    def __init__(self, memory: Memory, cfg: VlkngConfig, llm: LLM | None = None) -> None:
        self.memory = memory
        self.cfg = cfg
        self.llm = llm
        self._cameras: dict[str, CameraModel] = {}
        self._emb = _EmbeddingCache(lambda ts: memory.text_embedder.embed_texts(ts))
        self._lexicon = make_lexicon(cfg.embeddings.lexicon, cfg.embeddings.wordnet_dir)
        self.llm_usage = LLMUsage()
        self._floor_ranging = cfg.capture.camera_height_m >= 0.0
        self.camera_height: float | None = memory_camera_height(memory, cfg)
        self._height_samples: dict[str, float] | None = None  # object id -> implied height (loaded lazily)

    # ----------------------------------------------------------------------------------------
    def camera_for(self, tour_id: str, width: int, height: int) -> CameraModel:
        cam = self._cameras.get(tour_id)
        if cam is None:
            raw = self.memory.graph.get_meta(f"camera:{tour_id}")
            cam = CameraModel(**json.loads(raw)) if raw else CameraModel.from_hfov(
                width, height, self.cfg.capture.camera_hfov_deg)
            self._cameras[tour_id] = cam
        return cam

    def merge(self, chunk: ChunkGraph) -> MergeReport:
        t0 = time.perf_counter()
        report = MergeReport(chunk.chunk_id, warnings=list(chunk.warnings))
        graph = self.memory.graph
        with self.memory.write_lock:
            if graph.chunk_merged(chunk.chunk_id):
                report.skipped = True
                return report
            keyframes = {s: kf for s in chunk.frames
                         if (kf := graph.get_keyframe(chunk.tour_id, s)) is not None}
            if chunk.places:
                updated = [replace(kf, place=chunk.places[s]) for s, kf in keyframes.items()
                           if chunk.places.get(s) and kf.place != chunk.places[s]]
                if updated:
                    graph.upsert_keyframes(updated)
                    self.memory.touch()
            news = self._prepare(chunk, keyframes, report)
            candidates = self._shortlist(chunk, news, report)
            scores = self._judge(chunk, news, candidates, report)
            assignment = _assign(scores, self.cfg.stoa.threshold)
            objects, local_to_global = self._apply(chunk, news, candidates, assignment, report)
            relations = self._relations(chunk, local_to_global)
            objects, moved_relations, removed = self._consolidate(objects, news, local_to_global, report)
            objects, calibrated = self._calibrate(objects, removed)
            self._write_vectors(chunk, news, local_to_global, keyframes)
            graph.apply_merge(chunk.chunk_id, objects, relations + moved_relations, removed)
            if calibrated:  # after the merge: a crash before it redoes the calibration with the chunk
                graph.set_meta(CAMERA_HEIGHT_SAMPLES_META, json.dumps(self._height_samples))
                if self.camera_height:
                    graph.set_meta(CAMERA_HEIGHT_META, f"{self.camera_height:.4f}")
            self.memory.touch()
        report.seconds = time.perf_counter() - t0
        return report

    # ----------------------------------------------------------------------------------------
    def _prepare(self, chunk: ChunkGraph, keyframes: dict[int, Keyframe], report: MergeReport) -> list[_New]:
        objs = chunk.objects
        if not objs:
            return []
        vecs = self._emb.get([o.text() for o in objs])
        label_vecs = self._emb.get([o.label.lower() for o in objs])
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
            # small things and things perceived on something stand on furniture, not on the floor
            may_stand = (self._floor_ranging and o.local_id not in resting
                         and o.attributes.get("size", "").strip().lower() != "small")
            for stamp, box in o.boxes.items():
                kf = keyframes.get(stamp)
                if kf is not None and kf.pose is not None:
                    cam = self.camera_for(chunk.tour_id, kf.width, kf.height)
                    rays.add(ray_for(kf.pose, box, cam, on_floor=may_stand and not bottom_hidden(box, boxes_at[stamp]),
                                     pitch_rad=pitch))
                    views.append((kf.pose, cam))
                    widths.append(_angular_width(cam, box))
            est = rays.solve(self.camera_height)
            places = Counter(chunk.places[s] for s in o.boxes if chunk.places.get(s))
            extent = float(np.median([w * math.dist((p.x, p.y), est[0]) for (p, _), w in zip(views, widths)])) \
                if est else 0.0  # rough width of the object (m): angular width times range
            news.append(_New(o, v, lv, est[0] if est else None, est[1] if est else 0.0, dict(places), rays,
                             extent, views))
        return news

    def _shortlist(self, chunk: ChunkGraph, news: list[_New], report: MergeReport) -> list[list[ObjectNode]]:
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
                pre = [self._score(chunk, n, c) for c in cands]
                order = np.argsort(pre)[::-1][: st.max_candidates]
                cands = [cands[i] for i in order]
            report.shortlist_sizes.append(len(cands))
            out.append(cands)
        return out

    def _score(self, chunk: ChunkGraph, n: _New, c: ObjectNode) -> float:
        labels = list(dict.fromkeys([c.label.lower(), *[x.lower() for x in c.labels_seen]]))
        if n.obj.label.lower() in labels:
            s_label = 1.0
        else:
            # a VLM names one object differently across chunks ("settee", "sofa", "seat"): the
            # embedding, or the lexicon where it knows the words better (synonym, kind of)
            related = self._lexicon.related(n.obj.label.lower())
            s_label = max(max(float(n.label_vec @ v), related.get(lab, 0.0))
                          for lab, v in zip(labels, self._emb.get(labels)))
        s_text = float(n.vec @ self._emb.get([c.text()])[0])
        if s_label < LABEL_GATE and s_text < TEXT_GATE:
            return 0.0
        shared = [k for k in n.obj.attributes if k in c.attributes]
        s_attr = (sum(n.obj.attributes[k].lower() == c.attributes[k].lower() for k in shared) / len(shared)
                  if shared else 0.5)
        s_space = self._spatial_agreement(n, c)
        w_sem, w_attr, w_space = WEIGHTS_SAME_TOUR if chunk.tour_id in c.tours else WEIGHTS_OTHER_TOUR
        return w_sem * (0.5 * s_label + 0.5 * s_text) + w_attr * s_attr + w_space * s_space

    def _spatial_agreement(self, n: _New, c: ObjectNode) -> float:
        """How well the new detection and candidate ``c`` agree in space, in [0, 1].

        Bearings are accurate; range along them often is not (little parallax inside a chunk).
        A well-localised candidate must lie on this chunk's bearings, in view of its cameras.
        A poorly-ranged candidate may also be judged by its own bearings: this chunk's estimate
        on them, at a distance where it would have the apparent size it had. Box centres of big
        objects wander with the viewpoint, so the tolerance grows with the object's size."""
        if n.position is None or c.position is None:
            return 0.5  # no poses: space says nothing
        reliable = (c.position_var or 9.0) <= CONSOLIDATE_MAX_VAR * 2
        if reliable and n.views and not _in_view(c.position, n.views):
            return 0.0  # behind the camera or outside the image where this object was seen
        c_rays = RayAccumulator(c.ray_stats) if c.ray_stats else None
        if c_rays is not None and n.views:
            # the point both sets of bearings meet at must lie in front of this chunk's cameras:
            # rays of two objects always cross somewhere, often behind one of the viewers
            joint = n.rays.merged(c_rays).solve(self.camera_height)
            if joint is not None and not _in_view(joint[0], n.views, margin_deg=IN_FRONT_MARGIN_DEG):
                return 0.0
        resid = n.rays.residual_at(c.position)
        if not reliable and c_rays is not None:
            back = c_rays.residual_at(n.position)
            if back < resid and self._size_consistent(c, n.position, n.extent_m):
                resid = back
        sigma2 = POSITION_NOISE_M2 + (0.35 * n.extent_m) ** 2 + 0.3 * min(c.position_var or 0.5, 1.0)
        d2 = (n.position[0] - c.position[0]) ** 2 + (n.position[1] - c.position[1]) ** 2
        far = math.exp(-d2 / (2.0 * (n.var + (c.position_var or 0.5) + 1.0)))
        return math.exp(-resid / (2.0 * sigma2)) * (0.5 + 0.5 * far)

    def _judge(self, chunk: ChunkGraph, news: list[_New], cands: list[list[ObjectNode]],
               report: MergeReport) -> list[list[tuple[str, float]]]:
        mode = self.cfg.stoa.judge
        use_llm = self.llm is not None and mode in ("auto", "llm") and any(cands)
        if mode == "llm" and self.llm is None:
            report.warnings.append("stoa.judge=llm but no LLM is configured: deterministic judge used")
        if use_llm:
            try:
                scores = self._judge_llm(chunk, news, cands, report)
                report.judge = "llm"
                return scores
            except LLMError as e:
                report.judge = "llm-fallback"
                report.warnings.append(f"LLM judge failed ({e}); deterministic judge used")
                log.warning("%s: LLM judge failed (%s); using the deterministic judge", chunk.chunk_id, e)
        return [[(c.id, self._score(chunk, n, c)) for c in cs] for n, cs in zip(news, cands)]

    def _judge_llm(self, chunk: ChunkGraph, news: list[_New], cands: list[list[ObjectNode]],
                   report: MergeReport) -> list[list[tuple[str, float]]]:
        lines = ["You associate objects seen in a new video chunk with objects already in a robot's "
                 "memory. For each NEW object, give the similarity in [0,1] that it is the SAME "
                 "physical object as each of its CANDIDATES (same object: same kind, compatible "
                 "colour/material/size, close position in metres; objects can move between tours).",
                 "Answer JSON: {\"scores\": [{\"new\": id, \"candidate\": id, \"similarity\": number}]}.",
                 ""]
        for n, cs in zip(news, cands):
            if not cs:
                continue
            lines.append(f"NEW {n.obj.local_id}: {_describe(n.obj.label, n.obj.attributes, n.obj.description, n.position)}")
            for c in cs:
                dist = (f", {math.dist(n.position, c.position):.1f} m away"
                        if n.position is not None and c.position is not None else "")
                lines.append(f"  CANDIDATE {c.id}: {_describe(c.label, c.attributes, c.description, c.position)}{dist}")
        prompt = "\n".join(lines)
        report.judge_prompt_chars = len(prompt)
        schema = {"type": "object", "properties": {"scores": {"type": "array", "items": {
            "type": "object", "properties": {"new": {"type": "string"}, "candidate": {"type": "string"},
                                             "similarity": {"type": "number"}},
            "required": ["new", "candidate", "similarity"]}}}, "required": ["scores"]}
        reply = self.llm.generate_json(prompt, schema, usage=self.llm_usage)  # type: ignore[union-attr]
        allowed = {(n.obj.local_id, c.id) for n, cs in zip(news, cands) for c in cs}
        got: dict[tuple[str, str], float] = {}
        for item in reply.get("scores", []) if isinstance(reply, dict) else []:
            try:
                key = (str(item["new"]), str(item["candidate"]))
                sim = float(item["similarity"])
            except (KeyError, TypeError, ValueError):
                report.warnings.append(f"LLM judge: malformed item dropped: {item!r:.80}")
                continue
            if key not in allowed:
                report.warnings.append(f"LLM judge: unknown pair {key} dropped (hallucinated id)")
                continue
            got[key] = min(1.0, max(0.0, sim))
        return [[(c.id, got.get((n.obj.local_id, c.id), 0.0)) for c in cs] for n, cs in zip(news, cands)]

    # ----------------------------------------------------------------------------------------
    def _apply(self, chunk: ChunkGraph, news: list[_New], cands: list[list[ObjectNode]],
               assignment: dict[int, str], report: MergeReport) -> tuple[list[ObjectNode], dict[str, str]]:
        by_id = {c.id: c for cs in cands for c in cs}
        out: list[ObjectNode] = []
        local_to_global: dict[str, str] = {}
        for i, n in enumerate(news):
            o = n.obj
            obs = [Observation(chunk.tour_id, s, tuple(b), chunk.chunk_id, o.local_id)  # type: ignore[arg-type]
                   for s, b in sorted(o.boxes.items())]
            if not obs:
                continue
            first, last = obs[0].stamp_ns, obs[-1].stamp_ns
            target = by_id.get(assignment.get(i, ""))
            if target is None:
                gid = object_id_for(chunk.chunk_id, o.local_id)
                label_votes, attribute_votes = _votes_of_chunk_object(o)
                node = ObjectNode(
                    id=gid, label=o.label, description=o.description, attributes=dict(o.attributes),
                    affordances=list(o.affordances), labels_seen=[o.label],
                    label_votes=label_votes, attribute_votes=attribute_votes,
                    places=_ranked(n.places), place_counts=dict(n.places),
                    first_seen_ns=first, last_seen_ns=last,
                    observations=obs, position=n.position, position_var=n.var if n.position else None,
                    position_history=[(first, *n.position)] if n.position else [], tours=[chunk.tour_id],
                    ray_stats=n.rays.to_list() if n.position else [])
                report.created.append(gid)
            else:
                node = _updated(target, n, obs, chunk, self.cfg.stoa.moved_distance_m, report, self.camera_height)
                report.matched[o.local_id] = node.id
            local_to_global[o.local_id] = node.id
            out.append(node)
        return out, local_to_global

    def _consolidate(self, objects: list[ObjectNode], news: list[_New], local_to_global: dict[str, str],
                     report: MergeReport) -> tuple[list[ObjectNode], list[Relation], list[str]]:
        """Fix earlier splits: once a node touched by this chunk is well localised, an older node
        of the same kind at the same place that was never in view together with it is the same
        object seen earlier from a poor viewpoint. It is absorbed (observations, bearings, labels)
        and deleted in the same transaction; its relations are re-pointed."""
        graph = self.memory.graph
        extents = {local_to_global.get(n.obj.local_id): n.extent_m for n in news}
        in_chunk = {o.id for o in objects}
        removed: list[str] = []
        moved_relations: list[Relation] = []
        out = []
        for u in objects:
            if u.position is None or (u.position_var or 9.0) > CONSOLIDATE_MAX_VAR:
                out.append(u)
                continue
            u_frames = set(u.frames)
            u_labels = {x.lower() for x in [u.label, *u.labels_seen]}
            for c in graph.objects_near(u.position[0], u.position[1], CONSOLIDATE_RADIUS_M, limit=16):
                if c.id in in_chunk or c.id in removed or c.position is None:
                    continue
                c_labels = {x.lower() for x in [c.label, *c.labels_seen]}
                if not (u_labels & c_labels) and float(
                        self._emb.get([u.label.lower()])[0] @ self._emb.get([c.label.lower()])[0]) < 0.8 \
                        and not is_kind_of(self._lexicon, u.label.lower(), c.label.lower()):
                    continue
                if u_frames & set(c.frames):
                    continue  # seen together: two objects
                colors = (u.attributes.get("color"), c.attributes.get("color"))
                other_color = all(colors) and colors[0].lower() != colors[1].lower()  # type: ignore[union-attr]
                extent = extents.get(u.id, 0.0)
                if (c.position_var or 9.0) <= CONSOLIDATE_MAX_VAR * 2:
                    # both well localised, at one place, never seen together: one object, even if
                    # a colour was read differently (light changes colour more than position)
                    sigma2 = (POSITION_NOISE_M2 + (0.35 * extent) ** 2 + 0.3 * (u.position_var or 1.0)
                              + 0.3 * (c.position_var or 1.0))
                    if math.dist(u.position, c.position) ** 2 > 2.0 * sigma2 * CONSOLIDATE_SIGMAS:
                        continue
                elif other_color or not c.ray_stats or RayAccumulator(c.ray_stats).residual_at(u.position) > (
                        0.3 + 0.35 * extent) ** 2 or not self._size_consistent(c, u.position, extent, ignore_cut=True):
                    continue  # c's range was never pinned down: its bearings must point at u,
                    # and its boxes must have the size u would have from there
                u = _absorb(u, c, self.camera_height)
                u_frames = set(u.frames)
                removed.append(c.id)
                report.consolidated.append((c.id, u.id))
                for r in graph.relations_of([c.id]):
                    s_id = u.id if r.subject == c.id else r.subject
                    o_id = u.id if r.object == c.id else r.object
                    if s_id != o_id and s_id not in removed and o_id not in removed:
                        moved_relations.append(Relation(s_id, r.predicate, o_id, list(r.stamps), r.tour_id))
            out.append(u)
        moved_relations = [r for r in moved_relations if r.subject not in removed and r.object not in removed]
        return out, moved_relations, removed

    def _size_consistent(self, c: ObjectNode, point: tuple[float, float], extent_m: float,
                         ignore_cut: bool = False) -> bool:
        """Would ``c``'s boxes have their pixel widths if ``c`` stood at ``point``? Bearings alone
        cannot tell how far along its rays a poorly-ranged object is; apparent size can: an
        object of width ``extent_m`` at ``point`` must look that wide from where ``c`` was seen.
        ``ignore_cut``: skip sightings cut by the image border (consolidation: a big object's
        centre may lie outside the image that shows part of it; per-chunk matching keeps them)."""
        if extent_m <= 0.0:
            return False
        implied = []
        for ob in c.observations[-SIZE_CHECK_SIGHTINGS:]:
            kf = self.memory.graph.get_keyframe(ob.tour_id, ob.stamp_ns)
            if kf is None or kf.pose is None:
                continue
            cam = self.camera_for(ob.tour_id, kf.width, kf.height)
            if ignore_cut and cut_by_border(ob.bbox, cam):
                continue  # part of it is out of the image: its centre may be too, its width is cut
            if not _in_view(point, [(kf.pose, cam)]):
                return False  # behind or beside that camera: c was not there
            implied.append(_angular_width(cam, ob.bbox) * math.dist((kf.pose.x, kf.pose.y), point))
        if not implied:
            return False
        ratio = float(np.median(implied)) / extent_m
        return 1.0 / SIZE_RATIO_MAX <= ratio <= SIZE_RATIO_MAX

    def _calibrate(self, objects: list[ObjectNode], removed: list[str]) -> tuple[list[ObjectNode], bool]:
        """Estimate the camera height from the objects whose bearings alone place them well: at
        their bearing-only position, the height their floor rays imply (robust median over
        objects, so things standing on furniture unnoticed do not move it). When the estimate
        first exists or moves by RECALIBRATE_CHANGE, every floor-ranged object is re-solved with
        it, in this chunk's transaction. Returns (objects to write, whether samples changed)."""
        if self.cfg.capture.camera_height_m != 0.0:
            return objects, False  # given by the user, or floor ranging off
        if self._height_samples is None:
            raw = self.memory.graph.get_meta(CAMERA_HEIGHT_SAMPLES_META)
            self._height_samples = {str(k): float(v) for k, v in json.loads(raw).items()} if raw else {}
        samples = self._height_samples
        changed = False
        for rid in removed:
            changed |= samples.pop(rid, None) is not None
        for u in objects:
            acc = RayAccumulator(u.ray_stats) if u.ray_stats else None
            if acc is None or acc.floor_w < CALIB_MIN_FLOOR_RAYS or acc.bearing_conditioning() < CALIB_MIN_CONDITIONING:
                continue
            est = acc.solve(None)
            height = acc.implied_camera_height(est[0]) if est else None
            if height is not None and 0.05 < height < 5.0:
                samples.pop(u.id, None)  # re-inserted last: the most recent are kept
                samples[u.id] = round(height, 4)
                changed = True
        while len(samples) > CALIB_MAX_OBJECTS:
            samples.pop(next(iter(samples)))
        new = robust_camera_height(list(samples.values()))
        old = self.camera_height
        if new is None or (old is not None and abs(new - old) <= RECALIBRATE_CHANGE * old):
            return objects, changed
        self.camera_height = new
        log.info("camera height estimated at %.2f m from %d objects%s: re-solving floor-ranged objects",
                 new, len(samples), f" (was {old:.2f} m)" if old else "")
        in_chunk = {o.id for o in objects}
        gone = set(removed)
        others = [o for o in self.memory.graph.iter_objects() if o.id not in in_chunk and o.id not in gone]
        out = []
        for node in [*objects, *others]:
            acc = RayAccumulator(node.ray_stats) if node.ray_stats else None
            est = acc.solve(new) if acc is not None and acc.has_floor else None
            if est is not None:
                node = replace(node, position=est[0], position_var=est[1])
            if est is not None or node.id in in_chunk:
                out.append(node)
        return out, True

    def _relations(self, chunk: ChunkGraph, local_to_global: dict[str, str]) -> list[Relation]:
        rels: dict[tuple[str, str, str], Relation] = {}
        for r in chunk.relations:
            s, o = local_to_global.get(r.subject), local_to_global.get(r.object)
            if not s or not o or s == o:
                continue
            key = (s, r.predicate.strip().lower(), o)
            rel = rels.setdefault(key, Relation(s, key[1], o, [], chunk.tour_id))
            rel.stamps = sorted(set(rel.stamps) | set(r.stamps or chunk.frames[:1]))
        return list(rels.values())

    def _write_vectors(self, chunk: ChunkGraph, news: list[_New], local_to_global: dict[str, str],
                       keyframes: dict[int, Keyframe]) -> None:
        """Vectors first, graph second: a crash in between re-merges the chunk, and the
        deterministic point ids make the re-upsert replace, not duplicate."""
        if not news:
            return
        vectors = self.memory.vectors
        ids, vecs, payloads = [], [], []
        for n in news:
            gid = local_to_global.get(n.obj.local_id)
            if gid is None:
                continue
            ids.append(f"{gid}|{chunk.chunk_id}")
            vecs.append(n.vec)
            payloads.append({"object_id": gid, "tour_id": chunk.tour_id, "chunk_id": chunk.chunk_id,
                             "stamp_ns": min(n.obj.boxes), "label": n.obj.label})
        vectors.ensure_collection(self.memory.text_collection, self.memory.text_embedder.dim)
        vectors.upsert(self.memory.text_collection, ids, np.stack(vecs), payloads)
        self._write_crops(chunk, news, local_to_global, keyframes, payloads)

    def _write_crops(self, chunk: ChunkGraph, news: list[_New], local_to_global: dict[str, str],
                     keyframes: dict[int, Keyframe], payloads: list[dict]) -> None:
        """One SigLIP2 crop embedding per (object, chunk): its largest box in the chunk."""
        embedder = self.memory.image_embedder
        if embedder is None:
            return
        from .capture import decode_image

        crops, ids, pls = [], [], []
        for n, payload in zip([n for n in news if n.obj.local_id in local_to_global], payloads):
            stamp, box = max(n.obj.boxes.items(), key=lambda sb: (sb[1][2] - sb[1][0]) * (sb[1][3] - sb[1][1]))
            kf = keyframes.get(stamp)
            if kf is None or not kf.image_ref:
                continue
            try:
                img = decode_image(self.memory.frames.get(kf.image_ref))
            except (OSError, ValueError) as e:
                log.warning("%s: crop of %s skipped: %s", chunk.chunk_id, n.obj.local_id, e)
                continue
            x1, y1, x2, y2 = (int(round(v)) for v in box)
            crops.append(img[y1:y2, x1:x2])
            ids.append(f"{payload['object_id']}|{chunk.chunk_id}")
            pls.append({**payload, "stamp_ns": stamp})
        if crops:
            collection = self.memory.image_collection
            assert collection is not None
            self.memory.vectors.ensure_collection(collection, embedder.dim)
            self.memory.vectors.upsert(collection, ids, embedder.embed_images(crops), pls)


def _angular_width(cam: CameraModel, bbox) -> float:
    """Horizontal angle (rad) a box spans in the image."""
    return abs(cam.bearing(bbox[0]) - cam.bearing(bbox[2]))


def _in_view(point: tuple[float, float], views: list[tuple[Pose, CameraModel]], margin_deg: float = 15.0) -> bool:
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


def robust_camera_height(samples: list[float]) -> float | None:
    """Median of the objects' implied camera heights, or None with too few of them or when they
    disagree (interquartile range over CALIB_MAX_SPREAD of the median: the box bottoms are not
    floor contacts here, or the floor is not flat)."""
    if len(samples) < CALIB_MIN_OBJECTS:
        return None
    q1, med, q3 = (float(x) for x in np.percentile(samples, [25, 50, 75]))
    if med <= 0.0 or (q3 - q1) / med > CALIB_MAX_SPREAD:
        return None
    return med


def _add_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return dict(Counter(a) + Counter(b))


def _ranked(counts: dict[str, int]) -> list[str]:
    return [p for p, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _absorb(keep: ObjectNode, gone: ObjectNode, camera_height: float | None) -> ObjectNode:
    """``keep`` with everything ``gone`` was built from (its sightings and bearings)."""
    ray_stats, position, var = keep.ray_stats, keep.position, keep.position_var
    if keep.ray_stats and gone.ray_stats:
        acc = RayAccumulator(keep.ray_stats).merged(RayAccumulator(gone.ray_stats))
        est = acc.solve(camera_height)
        if est is not None:
            (position, var), ray_stats = est, acc.to_list()
    label_votes, attribute_votes = _add_votes(*_votes(keep), *_votes(gone))
    return replace(
        _renamed(replace(keep, description=keep.description or gone.description), label_votes, attribute_votes),
        affordances=list(dict.fromkeys([*keep.affordances, *gone.affordances])),
        labels_seen=list(dict.fromkeys([*keep.labels_seen, *gone.labels_seen])),
        places=_ranked(counts := _add_counts(keep.place_counts, gone.place_counts)), place_counts=counts,
        first_seen_ns=min(keep.first_seen_ns, gone.first_seen_ns),
        last_seen_ns=max(keep.last_seen_ns, gone.last_seen_ns),
        observations=sorted([*gone.observations, *keep.observations], key=lambda o: (o.tour_id, o.stamp_ns)),
        position=position, position_var=var,
        position_history=sorted([*gone.position_history, *keep.position_history]),
        tours=list(dict.fromkeys([*gone.tours, *keep.tours])), ray_stats=ray_stats)


def _votes(node: ObjectNode) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """The node's label and attribute votes (copies); a node stored before voting existed counts
    its current label and attributes once."""
    labels = dict(node.label_votes) or {node.label: 1}
    attributes = {k: dict(v) for k, v in node.attribute_votes.items()}
    for k, v in node.attributes.items():
        attributes.setdefault(k, {v: 1})
    return labels, attributes


def _votes_of_chunk_object(o: ChunkObject) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    return {o.label: 1}, {k: {v: 1} for k, v in o.attributes.items()}


def _add_votes(labels: dict[str, int], attributes: dict[str, dict[str, int]], more_labels: dict[str, int],
               more_attributes: dict[str, dict[str, int]]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    attributes = {k: dict(v) for k, v in attributes.items()}
    for k, votes in more_attributes.items():
        attributes[k] = _add_counts(attributes.get(k, {}), votes)
    return _add_counts(labels, more_labels), attributes


def _majority(votes: dict[str, int], current: str) -> str:
    """The value most chunks gave; on a tie the current one stays (no flapping), else the first
    in alphabetical order (deterministic)."""
    best = max(votes.values())
    if votes.get(current, 0) == best:
        return current
    return min(v for v, c in votes.items() if c == best)


def _renamed(node: ObjectNode, label_votes: dict[str, int],
             attribute_votes: dict[str, dict[str, int]]) -> ObjectNode:
    """``node`` named by its votes: label and attribute values are the majorities, and its
    description, written by the chunk that first saw it, is reworded to match."""
    label = _majority(label_votes, node.label)
    attributes = {k: _majority(v, node.attributes.get(k, "")) for k, v in attribute_votes.items() if v}
    description = replace_word(node.description, node.label, label) if label != node.label else node.description
    for k, v in attributes.items():
        old = node.attributes.get(k)
        if old and old != v:
            description = replace_word(description, old, v)
    return replace(node, label=label, attributes=attributes, description=description,
                   label_votes=label_votes, attribute_votes=attribute_votes)


def _describe(label: str, attributes: dict[str, str], description: str,
              position: tuple[float, float] | None) -> str:
    attrs = ", ".join(f"{k}={v}" for k, v in sorted(attributes.items()))
    pos = f" at ({position[0]:.1f}, {position[1]:.1f})" if position else ""
    return f"{label} [{attrs}] {description}{pos}".strip()


def _assign(scores: list[list[tuple[str, float]]], threshold: float) -> dict[int, str]:
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


def _updated(node: ObjectNode, n: _New, obs: list[Observation], chunk: ChunkGraph,
             moved_distance_m: float, report: MergeReport, camera_height: float | None) -> ObjectNode:
    o = n.obj
    position, var, history = node.position, node.position_var, list(node.position_history)
    ray_stats = node.ray_stats
    if n.position is not None:
        if position is None:
            position, var, ray_stats = n.position, n.var, n.rays.to_list()
            history.append((obs[0].stamp_ns, *n.position))
        elif math.dist(position, n.position) > moved_distance_m and n.var < 0.5 and chunk.tour_id not in node.tours:
            report.moved.append(node.id)  # seen somewhere else in a later tour: it was moved
            position, var, ray_stats = n.position, n.var, n.rays.to_list()
            history.append((obs[0].stamp_ns, *n.position))
        elif node.ray_stats:  # all rays so far, re-solved: the estimate sharpens with each view
            acc = RayAccumulator(node.ray_stats).merged(n.rays)
            (position, var), ray_stats = acc.solve(camera_height), acc.to_list()  # type: ignore[misc]
        else:
            position, var = fuse(position, var or 0.5, n.position, n.var)
    label_votes, attribute_votes = _add_votes(*_votes(node), *_votes_of_chunk_object(o))
    return replace(
        _renamed(replace(node, description=node.description or o.description), label_votes, attribute_votes),
        affordances=list(dict.fromkeys([*node.affordances, *o.affordances])),
        labels_seen=list(dict.fromkeys([*node.labels_seen, o.label])),
        places=_ranked(counts := _add_counts(node.place_counts, n.places)), place_counts=counts,
        first_seen_ns=min(node.first_seen_ns, obs[0].stamp_ns),
        last_seen_ns=max(node.last_seen_ns, obs[-1].stamp_ns),
        observations=[*node.observations, *obs],
        position=position, position_var=var, position_history=history,
        tours=list(dict.fromkeys([*node.tours, chunk.tour_id])), ray_stats=ray_stats,
    )
