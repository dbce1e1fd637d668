"""AskEngine: question -> answer, ranked keyframes, goal pose and evidence, in any retrieval mode.

Thread-safe for reads: the engine keeps only caches (label vectors, image sizes, baseline
corpora) that are safe to rebuild, and never writes to the memory, so the /ask service can call
it while ingest writes through ``memory.write_lock``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from ..config import VlkngConfig
from ..lexicon import make_lexicon
from ..llm.base import LLM, LLMError, LLMUsage
from ..memory import Memory
from ..present import place_words
from ..goals import goal_pose
from .answer import (FrameScore, evidence, goal_target, most_called_first,
                     llm_answer, prefer_by_time, rank_frames, render_prompt, shown_first, visit_first)
from .baselines import Corpus, chunk_corpus, embedding_scan, full_corpus, lexical_scan
from .ger import Retriever
from .found import FoundRule, asked_rank, decide_found
from .graph_retrieval import BEYOND_SAID, BEYOND_TIE, UNWALKED, LabelIndex, Subgraph, TourIndex, relevance_floor
from .options import OptionContext, choose, parse_options
from .query import ParsedQuery, decompose, validate_question
from .typed import answer_typed, place_of_object
from .typed_parse import classify
from .types import CHOICE, OBJECT, AskRequest, AskResult, RankedFrame, TypedValue, resolve_top_k

log = logging.getLogger("vlkng.ask")
MODES = ("ger", "gr", "full", "cwgr", "lexical")


class AskEngine:
    def __init__(self, memory: Memory, cfg: VlkngConfig, llm: LLM | None = None) -> None:
        self.memory = memory
        self.cfg = cfg
        self.llm = llm
        self._labels = LabelIndex(memory, make_lexicon(cfg.embeddings.lexicon, cfg.embeddings.wordnet_dir), cfg.ask.refresh_s)  # shared caches: label/text vectors, keyframe places
        self._tours = TourIndex(memory, cfg.ask.refresh_s)
        self._retrievers = {"ger": Retriever(memory, cfg.ask, True, self._labels, self._tours),
                            "gr": Retriever(memory, cfg.ask, False, self._labels, self._tours)}
        self._sizes: dict[str, tuple[int, int] | None] = {}
        self._corpora: dict[str, tuple[int, Corpus]] = {}
        self._lock = threading.Lock()
        self._found: FoundRule | None = None

    @property
    def found_rule(self) -> FoundRule:
        """The found / not-seen decision (core/ask/found.py), made once per engine."""
        if self._found is None:
            self._found = FoundRule(self.memory.text_embedder, relevance_floor(self.memory.text_embedder.name),
                                    self.cfg.ask.found_margin, self._labels.lexicon, self.memory.embed_cached)
        return self._found

    def camera_height(self) -> float | None:
        """For bearings re-solved at ask time (``answer.placed_on_support``)."""
        from ..calibration import memory_camera_height

        return memory_camera_height(self.memory, self.cfg)

    def warm_up(self) -> None:
        """Pay now what the first question would otherwise pay: the embedding model, the label
        and affordance vocabulary, the found rule's background lists, the keyframe index of every
        tour, the vector index."""
        emb = self.memory.text_embedder
        self._labels.vocabulary()
        self._labels.lexicon.related("object")  # reads the lexicon's index
        for tour in self.memory.graph.tours():
            self._tours.frames(tour)
        self.found_rule.warm_up()
        try:
            self.memory.vectors.ensure_collection(self.memory.text_collection, emb.dim)
            self.memory.vectors.search(self.memory.text_collection, emb.embed_texts(["object"])[0], 1)
        except Exception as e:  # a vector store that is down must not stop the server starting
            log.warning("vector store warm-up failed: %s", e)

    # ------------------------------------------------------------------------------------------
    def ask(self, req: AskRequest, on_stage: Callable[[str], None] | None = None) -> AskResult:
        """Answer ``req``. ``on_stage`` is called with "understanding", "retrieving" and
        "answering" as each stage starts (the Ask action's feedback); an exception it raises (a
        client canceled) ends the question there."""
        mode = (req.mode or self.cfg.ask.mode or "ger").lower()
        question, error = validate_question(req.question, self.cfg.ask.max_question_chars)
        if error:
            return AskResult(False, error, mode=mode)
        if mode not in MODES:
            return AskResult(False, f"unknown mode {mode!r}; use one of {', '.join(MODES)}", mode=mode)
        top_k = resolve_top_k(req.top_k, self.cfg.ask.top_k)
        try:
            options = parse_options(req.options)
            stage = on_stage or (lambda _s: None)
            if not options:  # multiple choice stays multiple choice, whatever the question's type
                tq = classify(question, self._tours.known_places())
                if tq.kind:
                    return answer_typed(self, tq, question, top_k, mode, stage)
            result, sub = self.search(question, options, top_k, mode, stage=stage)
            if options:
                result.answer_type, result.value = CHOICE, TypedValue("choice", result.choice)
            elif result.found and result.target_object_id in sub.objects:
                place = place_of_object(self, sub.objects[result.target_object_id])
                result.answer_type, result.value = OBJECT, TypedValue("place" if place else "", place)
            return result
        except LLMError as e:  # pragma: no cover - every LLM call below is caught
            return AskResult(False, f"LLM failed: {e}", mode=mode)

    def search(self, question: str, options: list[tuple[str, str]], top_k: int, mode: str,
               use_llm: bool = True, stage: Callable[[str], None] = lambda _s: None) -> tuple[AskResult, Subgraph]:
        """The object search behind every answer: (result, the evidence subgraph it came from).
        ``use_llm=False`` keeps the model out of it (questions the graph answers alone);
        ``stage`` hears "understanding", "retrieving", "answering" as each starts."""
        timings: dict[str, float] = {}
        tokens: dict[str, int] = {}
        notes: list[str] = []
        stage("understanding")
        t0 = time.perf_counter()
        usage = LLMUsage()
        llm = self.llm if use_llm else None
        known = self._tours.known_places()
        pq, note = decompose(question, llm, usage, known)
        if note:
            notes.append(note)
        tokens["decompose"] = usage.prompt_tokens
        timings["decompose"] = time.perf_counter() - t0

        stage("retrieving")
        t0 = time.perf_counter()
        sub, full_tokens = self._retrieve(pq, mode)
        timings["retrieve"] = time.perf_counter() - t0
        if full_tokens is not None:
            tokens["full_graph"] = full_tokens

        stage("answering")
        t0 = time.perf_counter()
        floor = 1e-9 if mode == "lexical" else relevance_floor(self.memory.text_embedder.name)
        # "first saw X": the earliest sighting may be a fragment; any competing duplicate may hold the goal
        time_rivals = prefer_by_time(sub, pq, self._labels.same_kind)
        # a thing beyond every walked room is in no walked room, not in the one it was seen from
        sub.rooms = {o: self._room(n) for o, n in sub.objects.items()}
        unentered = next((p for p in pq.places if p not in known), "")  # a room no keyframe was taken in
        beyond = self._beyond(unentered, sub)
        targets = (decide_found(self.found_rule, sub, pq) if mode != "lexical"
                   else [o for o in sub.targets() if sub.relevance.get(o, 0.0) >= floor])
        for oid in targets:  # an object retrieval offered that the found rule took
            if oid not in sub.rooms:
                sub.rooms[oid] = self._room(sub.objects[oid])
        if pq.target:  # of two things called the asked name, the one called so most often leads, among
            # those seen as asked alike (mostly in the asked colour before once in it); a name never
            # given ("easy chair") counts the name the best target was found under ("armchair")
            targets = most_called_first(sub, targets, pq.target,
                                        lambda o: asked_rank(sub.objects[o], pq, sub.rooms.get(o)),
                                        as_found=mode != "lexical" and self.found_rule.names_thing(pq))
        for oid in targets:  # the found rule may keep a named thing the fused retrieval ranked low
            sub.relevance[oid] = max(sub.relevance.get(oid, 0.0), floor)
        found = bool(targets)
        scored = rank_frames(sub, pq, self._image_size, floor) if found else []
        retriever = self._retrievers["ger" if mode == "ger" else "gr"]
        ctx = OptionContext(self.memory, retriever, self._labels.label_vectors, self._tours.place_of,
                            floor if mode in self._retrievers else 2.0)
        choice, _, about = choose(options, pq, sub, scored, ctx)
        if about and about not in sub.objects:
            for node in self.memory.graph.get_objects([about]):
                sub.objects[node.id] = node
        if about and about in sub.objects:
            # the options decided which object the question is about ("which did I see first")
            for oid in targets:
                sub.scores[oid] = 0.2 * sub.scores.get(oid, 0.0)
            sub.scores[about], sub.roles[about] = 1.0, "target"
            sub.relevance[about] = max(sub.relevance.get(about, 0.0), floor)
            targets = [o for o in sub.targets() if sub.relevance.get(o, 0.0) >= floor]
            found = True
            scored = rank_frames(sub, pq, self._image_size, floor)
        if time_rivals and scored and targets and not about:
            scored = visit_first(scored, sub.objects[targets[0]], pq)
        if ctx.shown and scored:
            scored = shown_first(scored, ctx.shown)
        target_id = targets[0] if targets else ""
        prompt = render_prompt(question, options, sub, scored, self.cfg.ask.max_prompt_tokens)
        tokens["answer"] = len(prompt) // 4
        where = (" beyond the rooms I walked" if target_id in beyond else
                 " " + place_words(sub.objects[target_id], self._tours) if sub.rooms.get(target_id) == UNWALKED else None)
        answer = self._unentered(unentered, sub, target_id, found, beyond) + self._offline_answer(pq, sub, target_id, found, where)
        if llm is not None:
            a_usage = LLMUsage()
            try:
                cand = {f.stamp_ns: f for f in scored}
                answer, choice, llm_frames, llm_target, note = llm_answer(llm, prompt, options, cand, sub, a_usage)
                scored = llm_frames + [f for f in scored if f.stamp_ns not in {g.stamp_ns for g in llm_frames}]
                target_id = llm_target or target_id
                found = found or bool(llm_frames)
                if note:
                    notes.append(note)
            except LLMError as e:
                notes.append(f"LLM answer unusable ({e}); used the offline evidence scorer")
            tokens["answer"] = max(tokens["answer"], a_usage.prompt_tokens)
        frames = self._with_poses(scored, top_k) if found else []
        if found and target_id in sub.objects and not about:
            rooms = sub.rooms if pq.places and sub.rooms.get(target_id) else None  # the place asked holds it
            target_id = (goal_target(sub, target_id, radius_m=None, among=time_rivals, same_kind=self._labels.same_kind,
                                     rooms=rooms)
                         if target_id in time_rivals else goal_target(sub, target_id, same_kind=self._labels.same_kind,
                                                                      rooms=rooms))
        goal, goal_source, target_xy = goal_pose(
            self.memory, sub, frames, target_id, self.cfg.ask.robot_radius_m, self.cfg.ask.goal_clearance_m,
            self.camera_height, self.cfg.ask.goal_max_from_object_m) if found else (None, "", None)
        timings["answer"] = time.perf_counter() - t0
        objs, rels = evidence(sub, lead=target_id if found else "")
        if not found:
            notes.insert(0, f"nothing matching '{pq.search_text()}' was seen")
        return AskResult(True, "; ".join(notes) or "ok", answer=answer, choice=choice if options else "",
                         found=found, frames=frames, goal=goal, goal_source=goal_source, target_position=target_xy,
                         target_object_id=target_id if found else "", evidence_objects=objs,
                         evidence_relations=rels, timings_s=timings, prompt_tokens=tokens, mode=mode), sub

    def _room(self, node) -> str:
        """``Subgraph.rooms`` of an object: its kind of place, or UNWALKED beyond every walked room."""
        return self._tours.main_place(node).lower() or (UNWALKED if self._tours.seen_through(node) else "")

    # ------------------------------------------------------------------------------------------
    def _retrieve(self, pq: ParsedQuery, mode: str) -> tuple[Subgraph, int | None]:
        if mode in self._retrievers:
            return self._retrievers[mode].retrieve(pq), None
        corpus = self._corpus(mode)
        if mode == "lexical":
            return lexical_scan(corpus, pq, self.cfg.ask.max_nodes), None
        return embedding_scan(corpus, pq, self.cfg.ask.max_nodes), corpus.prompt_chars() // 4

    def _corpus(self, mode: str) -> Corpus:
        """Baseline corpora are cached until the graph changes (object/chunk count)."""
        version = self.memory.graph.count_objects() + 7919 * len(self.memory.graph.merged_chunks())
        with self._lock:
            hit = self._corpora.get(mode)
            if hit and hit[0] == version:
                return hit[1]
            corpus = (chunk_corpus(self.memory, self.memory.graph.tours()) if mode == "cwgr"
                      else full_corpus(self.memory))
            self._corpora[mode] = (version, corpus)
            return corpus

    def _image_size(self, tour_id: str, stamp_ns: int) -> tuple[int, int] | None:
        """Image size of a tour (constant within a tour), looked up once from a keyframe."""
        if self._sizes.get(tour_id) is None:
            kf = self.memory.graph.get_keyframe(tour_id, stamp_ns)
            self._sizes[tour_id] = (kf.width, kf.height) if kf else None
        return self._sizes[tour_id]

    def _with_poses(self, scored: list[FrameScore], top_k: int) -> list[RankedFrame]:
        """Top-k frames that exist as keyframes in the memory, with their poses."""
        out: list[RankedFrame] = []
        for f in scored:
            kf = self.memory.graph.get_keyframe(f.tour_id, f.stamp_ns)
            if kf is None:
                continue
            if f.tour_id not in self._sizes or self._sizes[f.tour_id] is None:
                self._sizes[f.tour_id] = (kf.width, kf.height)
            out.append(RankedFrame(f.tour_id, f.stamp_ns, round(float(f.score), 5), kf.pose, list(f.object_ids)))
            if len(out) >= top_k:
                break
        return out

    def _beyond(self, place: str, sub: Subgraph) -> set[str]:
        """"The plant in the bedroom" where the robot never entered a bedroom: the subgraph's
        objects that stand beyond every room it walked (``TourIndex.beyond_walked`` at least
        BEYOND_SAID, and about as sure of it as the surest target of their label) may be in it, so
        they count as in the kind of place asked for (``sub.rooms``, read by the found rule): a plant
        seen through the bedroom door from the hallway leads, one in the walked living room does not.
        ``place``: the kind of place the question names that no keyframe was taken in ("" when
        none). Returns those objects."""
        if not place:
            return set()
        evidence = {o: self._tours.beyond_walked(sub.objects[o]) or 0.0 for o in sub.targets()}
        best: dict[str, float] = {}  # per label: of the plants, the most surely beyond
        for o, e in evidence.items():
            label = sub.objects[o].label.lower()
            best[label] = max(best.get(label, 0.0), e)
        # a thing in a walked room that views happened to miss is less sure than one beyond the door
        out = {o for o, e in evidence.items()
               if e >= BEYOND_SAID and e >= best[sub.objects[o].label.lower()] - BEYOND_TIE}
        for o in out:
            sub.rooms[o] = place
        return out

    def _unentered(self, place: str, sub: Subgraph, target_id: str, found: bool, beyond: set[str]) -> str:
        """What the answer owes about a room the question names and the robot never entered (no
        keyframe was taken in it): that it never went in, and either that the thing stands beyond
        every walked room, seen from another one through a door (``_beyond``), or that which one is
        in there cannot be told. "" when no such room (``place`` "", see ``_beyond``)."""
        if not place or not found or target_id not in sub.objects:
            return ""
        node = sub.objects[target_id]
        seen_from = self._tours.seen_from(node)
        if target_id in beyond:
            return (f"I never entered the {place}; this {node.label} stands beyond every room I walked, "
                    f"seen{' from the ' + seen_from if seen_from else ''} through a door. ")
        return (f"I never entered the {place}, so I cannot tell which {node.label} is in it; "
                "the best match: ")

    @staticmethod
    def _offline_answer(pq: ParsedQuery, sub: Subgraph, target_id: str, found: bool, where: str | None = None) -> str:
        if not found:
            closest = next((sub.objects[o].label for o in sub.targets() if o in sub.objects), "")
            # an alternative is offered in words only: never as a goal or a target
            return (f"I have not seen anything matching '{pq.search_text()}'."
                    + (f" The closest thing I saw is a {closest}." if closest else ""))
        node = sub.objects[target_id]
        attrs = " ".join(v for _, v in sorted(node.attributes.items()) if v)
        if where is None:
            where = f" in the {sub.rooms[target_id]}" if sub.rooms.get(target_id) else ""
        pos = f" at about ({node.position[0]:.1f}, {node.position[1]:.1f}) m" if node.position else ""
        rel = next((f"{sub.objects[r.subject].label} {r.predicate} {sub.objects[r.object].label}"
                    for r in sub.relations if target_id in (r.subject, r.object)), "")
        return (f"I saw a {attrs + ' ' if attrs else ''}{node.label}{where}{pos}"
                + (f" ({rel})" if rel else "") + f", in {len(node.frames)} keyframe(s).")
