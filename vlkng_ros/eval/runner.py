"""The eval runner: build (or reuse) a tour's memory and score every benchmark question.

Scores the configured mode (GER by default) and the baselines F, CwGR, lexical and GR in the
same run, with the metrics of docs/tour-format.md; writes JSON and a markdown report with plots.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

BASELINES = {"F": "full", "CwGR": "cwgr", "lexical": "lexical", "GR": "gr"}


QUESTION_TYPES = {"object_search", "scene_description", "spatial_relation", "action_place", "temporal",
                  "count", "room", "existence", "attribute", "when", "route"}  # tour-format v2


def validate_question(q: Any) -> str:
    """Why a questions.json entry cannot be scored ("" when it can)."""
    if not isinstance(q, dict):
        return "not an object"
    if not isinstance(q.get("question"), str) or not q["question"].strip():
        return "no question text"
    if q.get("type") not in QUESTION_TYPES:
        return f"unknown type {q.get('type')!r}"
    frames = q.get("frames", [])
    if not isinstance(frames, list) or not all(isinstance(f, list) and len(f) == 2 for f in frames):
        return "frames must be a list of [start_ns, end_ns]"
    if isinstance(q.get("options"), list) and not q.get("answer"):
        return "multiple choice without an answer letter"
    return ""


def load_questions(tour_dir: Path, rejected: list[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """The tour's questions that can be scored, validated once; the others go to ``rejected``
    as (id, why). No usable question at all is an error (nothing would be scored)."""
    path = tour_dir / "questions.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: eval needs the tour's benchmark questions")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e
    qs = doc.get("questions") if isinstance(doc, dict) else None
    if not isinstance(qs, list):
        raise ValueError(f"{path}: expected {{'questions': [...]}} (an OpenEQA .json or NaVQA .csv is given "
                         "to 'vlkng eval FILE --memory DIR' directly)")
    accepted, rejects = [], []
    for i, q in enumerate(qs):
        why = validate_question(q)
        if why:
            rejects.append((str(q.get("id", f"#{i}")) if isinstance(q, dict) else f"#{i}", why))
        else:
            accepted.append(q)
    if rejected is not None:
        rejected.extend(rejects)
    if not accepted:
        raise ValueError(f"{path}: no question can be scored ({len(rejects)} rejected, e.g. "
                         + "; ".join(f"{i}: {w}" for i, w in rejects[:3]) + ")")
    return accepted


def evaluate(engine: Any, questions: list[dict[str, Any]], keyframe_stamps: list[int], mode: str,
             top_k: int | None = None) -> dict[str, Any]:
    """Ask every question in ``mode``; per-question answers, metrics and means."""
    from ..core.ask.types import AskRequest
    from .retrieval_metrics import METRIC_K, score_question, summarize

    rows, types, answers = [], [], []
    for q in questions:
        t0 = time.perf_counter()
        res = engine.ask(AskRequest(q["question"], list(q.get("options") or []), top_k or METRIC_K, mode))
        latency = time.perf_counter() - t0
        stamps = [f.stamp_ns for f in res.frames]
        goal = [round(res.goal.x, 3), round(res.goal.y, 3)] if res.goal else None
        rows.append(score_question(q, stamps, res.choice, goal, keyframe_stamps, res.value.text, res.found))
        types.append(str(q.get("type", "unknown")))
        answers.append({"id": q.get("id"), "type": types[-1], "frames": stamps, "choice": res.choice,
                        "goal_xy": goal, "answer": res.answer, "found": res.found,
                        "answer_type": res.answer_type, "value": res.value.text,
                        "latency_s": round(latency, 4), "retrieve_s": round(res.timings_s.get("retrieve", 0.0), 4),
                        "prompt_tokens": res.prompt_tokens.get("answer", 0),
                        "full_graph_tokens": res.prompt_tokens.get("full_graph"), "message": res.message,
                        "scores": rows[-1]})
    overall, by_type = summarize(rows, types)
    lat = sorted(a["latency_s"] for a in answers) or [0.0]
    overall["latency_p50_s"] = statistics.median(lat)
    overall["latency_p95_s"] = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    overall["prompt_tokens_mean"] = statistics.mean(a["prompt_tokens"] for a in answers) if answers else 0
    return {"overall": overall, "by_type": by_type, "questions": answers}


def evaluate_tour(tour_dir: Path, cfg: Any, mem_dir: Path, baselines: bool = True,
                  progress: bool = True) -> dict[str, Any]:
    """Build (or extend) the memory at ``mem_dir`` from ``tour_dir``, then score its questions
    in ``cfg.ask.mode`` and, with ``baselines``, in every baseline mode."""
    from ..core.ask.engine import AskEngine
    from ..core.llm.registry import make_llm
    from ..core.memory import Memory
    from ..core.pipeline import build_tour

    if not tour_dir.is_dir():
        raise FileNotFoundError(f"tour folder {tour_dir} does not exist")
    if not (tour_dir / "bag").is_dir():
        raise FileNotFoundError(f"{tour_dir} has no bag/ folder: not a tour (nothing was built or scored)")
    rejected: list[tuple[str, str]] = []
    questions = load_questions(tour_dir, rejected)
    with Memory.open(mem_dir, cfg) as memory:
        build = build_tour(tour_dir, memory, cfg, progress=progress)
        stamps = [kf.stamp_ns for kf in memory.graph.keyframes(build.tour_id)]
        engine = AskEngine(memory, cfg, make_llm(cfg.llm))
        result = evaluate(engine, questions, stamps, cfg.ask.mode)
        result.update({"tour": build.tour_id, "mode": cfg.ask.mode, "memory": str(mem_dir),
                       "rejected": [{"id": i, "why": w} for i, w in rejected],
                       "noise": cfg.perception.noise, "keyframes": len(stamps),
                       "objects": memory.graph.count_objects(), "baselines": {}})
        if baselines:
            for name, mode in BASELINES.items():
                b = evaluate(engine, questions, stamps, mode)
                result["baselines"][name] = {**b["overall"], "by_type": b["by_type"], "questions": b["questions"]}
    return result


def _fmt(v: Any) -> str:
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


TYPE_ORDER = ["object_search", "action_place", "scene_description", "spatial_relation", "temporal",
              "count", "room", "existence", "attribute", "when", "route", "duration"]


def _type_cell(rows: list[dict[str, Any]]) -> str:
    """A type's headline numbers over its questions' scores: the open-answer accuracy (v2 types),
    the multiple-choice accuracy, else Acc@5; goal success and false-found rate where they apply."""
    def mean(key: str) -> float | None:
        vals = [r[key] for r in rows if r.get(key) is not None]
        return sum(vals) / len(vals) if vals else None

    parts = []
    for key, name in (("open_answer_accuracy", "open"), ("answer_accuracy", "mc")):
        if mean(key) is not None:
            parts.append(f"{name} {mean(key):.2f}")
    if not parts and mean("retrieval_acc@5") is not None:
        parts.append(f"acc@5 {mean('retrieval_acc@5'):.2f}")
    for key, name in (("goal_success", "goal"), ("false_found_rate", "ffr")):
        if mean(key) is not None:
            parts.append(f"{name} {mean(key):.2f}")
    return ", ".join(parts) or "-"


def type_table(results: list[dict[str, Any]]) -> str:
    """One markdown table over several tours' eval results (``evaluate_tour``): per question type,
    the number of questions and each system's headline numbers, pooled question by question."""
    systems: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in results:
        runs = {r["mode"].upper(): r["questions"], **{n: b.get("questions", []) for n, b in r["baselines"].items()}}
        for name, qs in runs.items():
            for q in qs:
                if "scores" in q:
                    systems.setdefault(name, {}).setdefault(q["type"], []).append(q["scores"])
    names = list(systems)
    types = sorted({t for s in systems.values() for t in s},
                   key=lambda t: (TYPE_ORDER.index(t) if t in TYPE_ORDER else len(TYPE_ORDER), t))
    lines = ["| type | n | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for t in types:
        n = len(systems[names[0]].get(t, []))
        lines.append(f"| {t} | {n} | " + " | ".join(_type_cell(systems[s].get(t, [])) for s in names) + " |")

    def pooled(rows: list[dict[str, Any]]) -> str:  # every question with frames to find / a goal
        def mean(key: str) -> str:
            vals = [r[key] for r in rows if r.get(key) is not None]
            return f"{sum(vals) / len(vals):.2f}" if vals else "-"
        return f"acc@1 {mean('retrieval_acc@1')}, acc@5 {mean('retrieval_acc@5')}, goal {mean('goal_success')}"

    every = {s: [r for rows in systems[s].values() for r in rows] for s in names}
    lines.append(f"| all | {len(every[names[0]])} | " + " | ".join(pooled(every[s]) for s in names) + " |")
    return "\n".join(lines)


def write_report(result: dict[str, Any], path: Path) -> None:
    """Markdown tables plus two PNG plots (metrics per system, latency histogram) next to it."""
    from .retrieval_metrics import METRIC_KEYS

    path.parent.mkdir(parents=True, exist_ok=True)
    systems = {result["mode"].upper(): result["overall"], **result["baselines"]}
    lines = [f"# vlkng eval: tour `{result['tour']}`", "",
             f"{len(result['questions'])} questions, {result['keyframes']} keyframes, {result['objects']} objects, "
             f"perception noise {result['noise']}, mode {result['mode']}.", "", "## Systems", "",
             "| system | " + " | ".join(METRIC_KEYS) + " |", "|---" * (len(METRIC_KEYS) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(_fmt(m.get(k)) for k in METRIC_KEYS) + " |" for name, m in systems.items()]
    if any("scores" in q for q in result["questions"]):
        lines += ["", "## By question type, every system", "", type_table([result])]
    lines += ["", f"## By question type ({result['mode']})", "",
              "| type | n | " + " | ".join(METRIC_KEYS) + " |", "|---" * (len(METRIC_KEYS) + 2) + "|"]
    lines += [f"| {t} | {int(m['n'])} | " + " | ".join(_fmt(m.get(k)) for k in METRIC_KEYS) + " |"
              for t, m in result["by_type"].items()]
    o = result["overall"]
    lines += ["", "## Cost", "", f"- latency p50 {o['latency_p50_s'] * 1000:.1f} ms, p95 {o['latency_p95_s'] * 1000:.1f} ms",
              f"- answer prompt tokens (mean): {o['prompt_tokens_mean']:.0f}"]
    full = [q["full_graph_tokens"] for q in result["questions"] if q.get("full_graph_tokens")]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        keys = ["retrieval_acc@1", "retrieval_acc@5", "mrr@5", "answer_accuracy", "goal_success"]
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(systems)
        for i, (name, m) in enumerate(systems.items()):
            ax.bar([j + i * width for j in range(len(keys))], [m.get(k) or 0 for k in keys], width, label=name)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))], keys)
        ax.set_ylim(0, 1)
        ax.legend()
        ax.set_title("retrieval and answers by system")
        metrics_png = path.with_name(path.stem + "_systems.png")
        fig.tight_layout()
        fig.savefig(metrics_png)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.hist([q["latency_s"] * 1000 for q in result["questions"]], bins=20)
        ax.set_xlabel("per-query latency (ms)")
        lat_png = path.with_name(path.stem + "_latency.png")
        fig.tight_layout()
        fig.savefig(lat_png)
        plt.close(fig)
        lines += ["", f"![systems]({metrics_png.name})", "", f"![latency]({lat_png.name})"]
    except ImportError:
        lines += ["", "(matplotlib is not installed: no plots)"]
    if full:
        lines.append(f"- full-graph prompt (F) tokens: {full[0]}")
    lines += ["", "## Questions", "", "| id | type | found | choice | goal | top frames |", "|---|---|---|---|---|---|"]
    lines += [f"| {q['id']} | {q['type']} | {'yes' if q['found'] else 'no'} | {q['choice'] or '-'} | "
              f"{q['goal_xy']} | {', '.join(str(s) for s in q['frames'][:3])} |" for q in result["questions"]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
