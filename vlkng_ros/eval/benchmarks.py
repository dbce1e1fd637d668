"""OpenEQA and NaVQA, read as published and answered in their own output formats.

- OpenEQA (facebookresearch/open-eqa): a JSON list of {question, answer, category, question_id,
  episode_history, extra_answers?}. Predictions: ``[{"question_id": ..., "answer": ...}]``.
  Scored here by normalised exact match (answer or extra_answers; numbers numerically) and, when
  an LLM is configured, by LLM-Match as its authors run it (a 1-5 mark per answer; the score is
  the mean of 100 * (mark - 1) / 4).
- NaVQA (ReMEmbR): a CSV with columns UUID, Seq ID, Question, "Timestamp with answer", "Type
  (binary, position, time, text)", Text answer, Parsable answer, "Question Category".
  Predictions: one JSON object per question in ReMEmbR's answer form ``{"uuid", "type", "text",
  "binary", "position", "time", "duration"}`` (position [x, y, z] in the map frame; time in
  minutes before the end of the recording; duration in minutes). Scored: binary accuracy,
  duration error (minutes), text exact match; position error (m, success within
  NAVQA_POSITION_OK_M) and time error (minutes) where the file holds a real reference - the
  published CSV holds placeholders ("[position]", "[minutes] ago") for those, so they are
  reported as unscorable rather than guessed.

Questions are validated once; rejected ones are listed with the reason and never scored. The
memory is only read (``Memory.open`` + ask): nothing is built or added.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .answer_match import matches, number_in, normalise

NAVQA_POSITION_OK_M = 15.0  # ReMEmbR counts a position within 15 m as correct
NAVQA_TIME_OK_MIN = 2.0  # ... and a time within 2 minutes
NAVQA_COLUMNS = {"uuid": "UUID", "seq": "Seq ID", "question": "Question", "stamp": "Timestamp",
                 "type": "Type", "text": "Text answer", "parsable": "Parsable answer", "category": "Question"}
NAVQA_TYPES = {"binary", "position", "time", "text", "duration"}


@dataclass
class Loaded:
    benchmark: str  # openeqa | navqa
    questions: list[dict[str, Any]]  # accepted, normalised: id, question, answer(s), category, type
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (id or row, why)


def detect(path: Path) -> str:
    """'openeqa' | 'navqa' | 'tour' (a tour folder) for an eval input; ValueError otherwise."""
    if path.is_dir():
        return "tour"
    if path.suffix.lower() == ".csv":
        return "navqa"
    if path.suffix.lower() == ".json":
        return "openeqa"
    raise ValueError(f"{path}: give a tour folder, an OpenEQA .json or a NaVQA .csv")


def load_openeqa(path: Path, episode: str | None = None) -> Loaded:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not readable OpenEQA JSON ({e})") from e
    if not isinstance(doc, list):
        raise ValueError(f"{path}: OpenEQA questions are a JSON list of objects")
    out = Loaded("openeqa", [])
    for i, q in enumerate(doc):
        qid = str(q.get("question_id", f"#{i}")) if isinstance(q, dict) else f"#{i}"
        if not isinstance(q, dict):
            out.rejected.append((qid, "not an object"))
        elif not isinstance(q.get("question"), str) or not q["question"].strip():
            out.rejected.append((qid, "no question text"))
        elif not q.get("question_id"):
            out.rejected.append((qid, "no question_id"))
        elif episode and episode not in str(q.get("episode_history", "")):
            out.rejected.append((qid, f"episode {q.get('episode_history')!r} is not {episode!r}"))
        else:
            out.questions.append({"id": qid, "question": q["question"].strip(), "answer": q.get("answer"),
                                  "extra_answers": list(q.get("extra_answers") or []),
                                  "category": q.get("category", ""), "episode": q.get("episode_history", "")})
    return out


def _col(header: list[str], key: str) -> int:
    for i, h in enumerate(header):
        if " ".join(h.split()).lower().startswith(NAVQA_COLUMNS[key].lower()):
            return i
    raise ValueError(f"NaVQA CSV has no column {NAVQA_COLUMNS[key]!r} (columns: {header})")


def load_navqa(path: Path, seq: str | None = None) -> Loaded:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ValueError(f"{path}: not a readable NaVQA CSV ({e})") from e
    if not rows:
        raise ValueError(f"{path}: empty CSV")
    header = rows[0]
    cols = {k: _col(header, k) for k in NAVQA_COLUMNS}
    out = Loaded("navqa", [])
    for n, row in enumerate(rows[1:], 2):
        get = lambda k: row[cols[k]].strip() if cols[k] < len(row) else ""  # noqa: E731
        qid = get("uuid") or f"row {n}"
        qtype = get("type").lower()
        if not get("question"):
            out.rejected.append((qid, "no question text"))
        elif qtype not in NAVQA_TYPES:
            out.rejected.append((qid, f"unknown type {qtype!r}"))
        elif seq is not None and get("seq") != str(seq):
            out.rejected.append((qid, f"sequence {get('seq')} is not {seq}"))
        else:
            parsable = get("parsable")
            placeholder = parsable.startswith("[") or (not parsable and qtype != "text")
            out.questions.append({"id": qid, "question": get("question"), "type": qtype, "seq": get("seq"),
                                  "answer": None if placeholder else parsable, "text_answer": get("text"),
                                  "stamp": get("stamp"), "category": get("category")})
    return out


# --- answering -----------------------------------------------------------------------------------
def answer_all(engine: Any, questions: list[dict[str, Any]], top_k: int, mode: str | None) -> list[Any]:
    from ..core.ask.types import AskRequest

    return [engine.ask(AskRequest(q["question"], [], top_k, mode)) for q in questions]


def openeqa_predictions(questions: list[dict[str, Any]], results: list[Any]) -> list[dict[str, str]]:
    """OpenEQA's own prediction format: the reply's typed value where there is one (what a
    person would write: "8", "bedroom", "no"), else the text answer."""
    def short(r: Any) -> str:
        v = r.value
        if v.kind == "direction" and v.direction:
            return {"straight": "Keep going straight", "back": "Turn around"}.get(v.direction, f"Turn {v.direction}")
        return v.text if v.text and v.kind not in ("time", "choice") else r.answer

    return [{"question_id": q["id"], "answer": short(r)} for q, r in zip(questions, results)]


def navqa_prediction(q: dict[str, Any], r: Any, end_ns: int | None) -> dict[str, Any]:
    """ReMEmbR's answer form for one question (fields that do not apply are null)."""
    v = r.value
    pos = [round(r.goal.x, 3), round(r.goal.y, 3), 0.0] if r.goal is not None else None
    minutes_ago = None
    if v.stamp_ns is not None and end_ns is not None:
        minutes_ago = round((end_ns - v.stamp_ns) / 60e9, 3)
    binary = None
    if q["type"] == "binary":
        binary = "yes" if v.yes else "no" if v.yes is False else ("yes" if r.found else "no")
    return {"uuid": q["id"], "type": q["type"], "text": r.answer, "binary": binary,
            "position": pos if q["type"] == "position" else None, "time": minutes_ago,
            "duration": v.number if v.kind == "duration" else None}


# --- scoring -------------------------------------------------------------------------------------
LLM_MATCH_PROMPT = """You are an AI assistant who will help me to evaluate the response given the question and
the correct answer. To mark a response, output a single integer between 1 and 5 (including 1 and 5):
5 means the response perfectly matches the answer; 1 means it does not match at all; in between,
partial matches. Question: {question}
Answer: {answer}
Response: {response}
Reply JSON: {{"mark": <1-5>}}"""


def llm_match(llm: Any, question: str, refs: list[str], response: str) -> int:
    from ..core.llm.base import LLMError

    schema = {"type": "object", "properties": {"mark": {"type": "integer"}}, "required": ["mark"]}
    out = llm.generate_json(LLM_MATCH_PROMPT.format(question=question, answer=" / ".join(refs), response=response),
                            schema)
    mark = int(out.get("mark", 0)) if isinstance(out, dict) else 0
    if not 1 <= mark <= 5:
        raise LLMError(f"LLM-Match mark {mark} is not in 1..5")
    return mark


def score_openeqa(questions: list[dict[str, Any]], preds: list[dict[str, str]],
                  results: list[Any], llm: Any = None) -> dict[str, Any]:
    from .answer_match import references

    rows = []
    for q, p, r in zip(questions, preds, results):
        refs = references(q)
        numeric = number_in(q.get("answer")) is not None and number_in(p["answer"]) is not None
        em = matches(p["answer"], refs, numeric=numeric) or matches(r.answer, refs, numeric=False)
        row = {"question_id": q["id"], "category": q["category"], "answer_type": r.answer_type,
               "exact_match": 1.0 if em else 0.0, "cannot_tell": not r.value.text}
        if llm is not None:
            try:
                row["llm_mark"] = llm_match(llm, q["question"], refs, p["answer"])
            except Exception as e:  # a judge failure leaves the row unscored by the judge, said so
                row["llm_error"] = str(e)
        rows.append(row)
    out: dict[str, Any] = {"n": len(rows), "exact_match": _mean(r["exact_match"] for r in rows),
                           "cannot_tell_rate": _mean(float(r["cannot_tell"]) for r in rows)}
    marks = [r["llm_mark"] for r in rows if "llm_mark" in r]
    out["llm_match"] = _mean(100.0 * (m - 1) / 4 for m in marks) if marks else None
    out["llm_match_n"] = len(marks)
    out["by_category"] = {c: {"n": len(rs), "exact_match": _mean(r["exact_match"] for r in rs)}
                          for c, rs in _group(rows, "category").items()}
    out["rows"] = rows
    return out


def _parse_clock_minutes(text: str) -> float | None:
    try:
        parts = [float(x) for x in text.split(":")]
    except ValueError:
        return None
    return parts[0] * 60 + parts[1] + (parts[2] / 60 if len(parts) > 2 else 0.0) if len(parts) >= 2 else None


def score_navqa(questions: list[dict[str, Any]], preds: list[dict[str, Any]],
                truth_xy: Callable[[dict[str, Any]], tuple[float, float] | None] | None = None) -> dict[str, Any]:
    """Per type: binary accuracy; duration absolute error (min); text exact match; position
    error (m) / success and time error (min) only where a real reference exists."""
    per: dict[str, list[float]] = {"binary": [], "duration_err_min": [], "text": [], "position_err_m": [],
                                   "position_ok": [], "time_err_min": [], "time_ok": []}
    unscorable: dict[str, int] = {}
    for q, p in zip(questions, preds):
        t = q["type"]
        ref = q.get("answer")
        if t == "binary" and ref:
            per["binary"].append(1.0 if normalise(p["binary"] or "") == normalise(ref) else 0.0)
        elif t == "duration" and number_in(ref) is not None:
            per["duration_err_min"].append(abs((p["duration"] if p["duration"] is not None else math.inf) - number_in(ref)))
        elif t == "text" and (ref or q.get("text_answer")):
            per["text"].append(1.0 if matches(p["text"], [r for r in (ref, q.get("text_answer")) if r]) else 0.0)
        elif t == "position" and truth_xy is not None and truth_xy(q) is not None and p["position"] is not None:
            gx, gy = truth_xy(q)  # type: ignore[misc]
            err = math.hypot(p["position"][0] - gx, p["position"][1] - gy)
            per["position_err_m"].append(err)
            per["position_ok"].append(1.0 if err <= NAVQA_POSITION_OK_M else 0.0)
        elif t == "time" and ref and number_in(ref) is not None and p["time"] is not None:
            err = abs(p["time"] - number_in(ref))  # type: ignore[operator]
            per["time_err_min"].append(err)
            per["time_ok"].append(1.0 if err <= NAVQA_TIME_OK_MIN else 0.0)
        else:
            unscorable[t] = unscorable.get(t, 0) + 1
    out: dict[str, Any] = {"n": len(questions)}
    for k, vals in per.items():
        finite = [v for v in vals if math.isfinite(v)]
        out[k] = _mean(finite) if finite else None
        out[k + "_n"] = len(vals)
    out["unscorable"] = unscorable
    return out


def _mean(vals) -> float:
    vals = list(vals)
    return sum(vals) / len(vals) if vals else 0.0


def _group(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(str(r[key]), []).append(r)
    return out


def evaluate_benchmark(path: Path, cfg: Any, mem_dir: Path, predictions: Path | None = None,
                       episode: str | None = None, top_k: int = 5) -> dict[str, Any]:
    """Answer an OpenEQA/NaVQA file from an EXISTING memory (never built or changed here),
    write the predictions in the benchmark's format, and score what can be scored."""
    from ..core.ask.engine import AskEngine
    from ..core.llm.registry import make_llm
    from ..core.memory import Memory

    kind = detect(path)
    loaded = load_openeqa(path, episode) if kind == "openeqa" else load_navqa(path, episode)
    if not loaded.questions:
        why = "; ".join(f"{i}: {r}" for i, r in loaded.rejected[:5])
        raise ValueError(f"{path}: no question could be used ({len(loaded.rejected)} rejected: {why})")
    if not mem_dir.is_dir() or not any(mem_dir.iterdir()):
        raise FileNotFoundError(f"memory {mem_dir} does not exist or is empty: build it first with "
                                "'vlkng build' (eval on a benchmark file never builds one)")
    llm = make_llm(cfg.llm)
    with Memory.open(mem_dir, cfg) as memory:
        before = (memory.graph.count_objects(), len(memory.graph.tours()), memory.graph.count_keyframes())
        engine = AskEngine(memory, cfg, llm)
        results = answer_all(engine, loaded.questions, top_k, None)
        kfs = memory.graph.keyframes()
        end_ns = max((k.stamp_ns for k in kfs), default=None)
        after = (memory.graph.count_objects(), len(memory.graph.tours()), memory.graph.count_keyframes())
    assert before == after, "eval changed the memory"  # read-only by construction; a bug if not
    if kind == "openeqa":
        preds: list[Any] = openeqa_predictions(loaded.questions, results)
        scores = score_openeqa(loaded.questions, preds, results, llm)
    else:
        preds = [navqa_prediction(q, r, end_ns) for q, r in zip(loaded.questions, results)]
        scores = score_navqa(loaded.questions, preds)
    if predictions is not None:
        predictions.parent.mkdir(parents=True, exist_ok=True)
        predictions.write_text(json.dumps(preds, indent=2) + "\n", encoding="utf-8")
    by_type: dict[str, int] = {}
    for r in results:
        by_type[r.answer_type or "none"] = by_type.get(r.answer_type or "none", 0) + 1
    return {"benchmark": kind, "file": str(path), "memory": str(mem_dir), "accepted": len(loaded.questions),
            "rejected": [{"id": i, "why": w} for i, w in loaded.rejected], "scores": scores,
            "answer_types": by_type, "predictions": str(predictions) if predictions else None,
            "answers": [{"id": q["id"], "question": q["question"], "answer_type": r.answer_type,
                         "value": r.value.text, "answer": r.answer, "found": r.found}
                        for q, r in zip(loaded.questions, results)]}
