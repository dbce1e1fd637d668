"""`vlkng build`: build or extend a persistent memory from tour folders."""

from __future__ import annotations

import argparse
import logging

from ._common import add_config_args, config_from_args, print_json

log = logging.getLogger("vlkng.build")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build", help="build or extend a memory from tour folders",
        description="Build (or extend) a persistent memory from one or more tours (tour-format v2): "
                    "keyframes with poses, chunk graphs, the STOA-merged global graph and object "
                    "embeddings. Re-running on the same tour changes nothing; another tour extends "
                    "the memory (objects are associated across tours).")
    p.add_argument("tours", nargs="+", metavar="TOUR", help="tour folder(s): bag/ + optional annotations.jsonl")
    p.add_argument("--memory", required=True, metavar="DIR", help="memory directory (created if missing)")
    p.add_argument("--backend", choices=["auto", "annotations", "openai", "gemini", "transformers"],
                   help="perception backend (default: perception.backend = auto: annotations for a tour "
                        "with annotations.jsonl, else openai when perception.base_url is set)")
    p.add_argument("--model", help="perception model (default: the backend's, see docs/MODELS.md)")
    p.add_argument("--base-url", help="openai backend: server URL, e.g. http://localhost:11434/v1 (Ollama)")
    p.add_argument("--noise", type=float, help="annotations backend: noise scale (0 = exact annotations)")
    p.add_argument("--seed", type=int, help="annotations backend: noise seed")
    p.add_argument("--tour-id", metavar="ID",
                   help="name the tour in the memory (one TOUR only; default: derived from the folder "
                        "name, with a content-hash suffix when another tour already has that name)")
    p.add_argument("--json", action="store_true", help="print the build reports as JSON")
    add_config_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..core.llm.registry import make_llm
    from ..core.memory import Memory
    from ..core.perception.base import PerceptionNotConfigured
    from ..core.perception.registry import resolve_backend
    from ..core.pipeline import build_tour, open_tour
    from ..core.stores.frame_store import validate_tour_id

    cfg = config_from_args(args, **{"perception.backend": args.backend, "perception.noise": args.noise,
                                    "perception.seed": args.seed, "perception.model": args.model,
                                    "perception.base_url": args.base_url})
    if args.tour_id:  # names are checked before any work starts
        validate_tour_id(args.tour_id)
        if len(args.tours) > 1:
            raise ValueError("--tour-id names one tour; give one TOUR with it")
    for tour in args.tours:  # before anything is written: a tour no backend can serve stops here
        opened = open_tour(tour, cfg)
        try:
            resolve_backend(cfg, bool(opened.annotations))
        except PerceptionNotConfigured as e:
            log.error("%s: %s", opened.tour_id, e)
            return 2
    reports = []
    failed = damaged = empty = queued = 0
    stopped = ""
    with Memory.open(args.memory, cfg) as memory:
        memory.check_vectors()  # vectors lost or from another embedder: re-indexed from the graph
        llm = make_llm(cfg.llm)
        for tour in args.tours:
            rep = build_tour(tour, memory, cfg, progress=not args.quiet, llm=llm, tour_id=args.tour_id)
            reports.append(rep.to_dict())
            failed += rep.chunks_failed
            readable = rep.frames - rep.frames_unreadable
            if rep.read_errors or rep.frames_unreadable:
                if readable <= 0 and rep.keyframes == 0:
                    empty += 1
                    log.error("%s: no frame of the tour could be read (%d frames, %d read errors): "
                              "nothing was added", rep.tour_id, rep.frames, len(rep.read_errors))
                else:
                    damaged += 1
                    log.warning("%s: the tour is damaged; %d of %d frames recovered (%d read errors)",
                                rep.tour_id, readable, rep.frames, len(rep.read_errors))
            queued += rep.chunks_queued
            stopped = stopped or rep.backend_stopped
            if not args.json:
                print(f"{rep.tour_id}: {rep.frames} frames -> {rep.keyframes} keyframes "
                      f"({rep.frames_unreadable} unreadable, {rep.frames_without_pose} without pose), "
                      f"{rep.chunks} chunks ({rep.chunks_merged} merged, {rep.chunks_skipped} already "
                      f"merged, {rep.chunks_failed} failed), objects +{rep.objects_created} new / "
                      f"{rep.objects_matched} re-identified / {rep.objects_moved} moved, "
                      f"{rep.seconds.get('total', 0):.1f} s")
                if rep.perception_line():
                    print(f"{rep.tour_id}: {rep.perception_line()}")
                if not rep.has_geometry:
                    print(f"{rep.tour_id}: NO GEOMETRY: no keyframe has a pose ({cfg.pose_topic!r} not in the "
                          "bag or never near a frame): objects have no positions and `ask` gives no goal "
                          "poses; fix the pose source and build again to re-tag the keyframes")
        _cache_vocabulary(memory, cfg)
        totals = {"objects": memory.graph.count_objects(), "relations": memory.graph.count_relations(),
                  "keyframes": memory.graph.count_keyframes(), "tours": len(memory.graph.tours())}
    if args.json:
        print_json({"tours": reports, "memory": totals})
    else:
        print(f"memory {args.memory}: {totals['objects']} objects, {totals['relations']} relations, "
              f"{totals['keyframes']} keyframes, {totals['tours']} tours")
    if empty:
        return 1
    if stopped:
        log.error("perception stopped (%s); %d chunks stay queued: fix it and run build again", stopped, queued)
        return 3
    if failed:
        log.error("%d chunks failed perception and stay queued: run build again to retry them", failed)
        return 3
    if damaged:
        return 4
    return 0


def _cache_vocabulary(memory, cfg) -> None:
    """Embed the memory's labels and affordances now, into its vector cache, so a one-shot
    `vlkng ask` (which opens the memory read-only) finds them (see Memory.embed_cached); and
    the found rule's background lists (core/ask/found.py); and look a word up once, so the
    lexicon's lookup cache (lexicon.WordNetLexicon) exists too."""
    from ..core.ask.found import ACTIVITY_BACKGROUND, BACKGROUND
    from ..core.ask.graph_retrieval import LabelIndex
    from ..core.lexicon import make_lexicon

    try:
        LabelIndex(memory, make_lexicon("none", "")).vocabulary()
        memory.embed_cached([*BACKGROUND, *ACTIVITY_BACKGROUND])
        make_lexicon(cfg.embeddings.lexicon, cfg.embeddings.wordnet_dir).related("thing")
    except Exception as e:  # a cache: never fails a build
        log.warning("could not cache the ask vocabulary: %s", e)
