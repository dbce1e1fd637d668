"""Retrieval and answer metrics exactly as docs/tour-format.md defines them, on stamps.

A returned frame is relevant when its stamp lies in any ground-truth interval [start, end]
(inclusive). Recall's denominator is the number of the tour's KEYFRAMES that are relevant.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

Interval = Sequence[int]
GOAL_SUCCESS_M = 1.5
METRIC_K = 5  # the metrics go to @5, so an evaluation asks for 5 frames whatever ask.top_k is
METRIC_KEYS = ["retrieval_acc@1", "retrieval_acc@3", "retrieval_acc@5", "precision@5", "recall@5",
               "mrr@5", "answer_accuracy", "goal_success", "goal_error_m", "open_answer_accuracy",
               "false_found_rate"]
NUMERIC_TYPES = {"count", "duration"}


def is_relevant(stamp: int, intervals: Iterable[Interval]) -> bool:
    return any(int(a) <= int(stamp) <= int(b) for a, b in intervals)


def acc_at_k(ranked: Sequence[int], intervals: Sequence[Interval], k: int) -> float:
    return 1.0 if any(is_relevant(s, intervals) for s in ranked[:k]) else 0.0


def precision_at_k(ranked: Sequence[int], intervals: Sequence[Interval], k: int) -> float:
    return sum(1 for s in ranked[:k] if is_relevant(s, intervals)) / k


def recall_at_k(ranked: Sequence[int], intervals: Sequence[Interval], k: int,
                keyframe_stamps: Iterable[int]) -> float:
    """Relevant among the top k over the tour's relevant keyframes (0 when none is relevant)."""
    total = sum(1 for s in keyframe_stamps if is_relevant(s, intervals))
    if total == 0:
        return 0.0
    return sum(1 for s in ranked[:k] if is_relevant(s, intervals)) / total


def mrr_at_k(ranked: Sequence[int], intervals: Sequence[Interval], k: int) -> float:
    for i, s in enumerate(ranked[:k]):
        if is_relevant(s, intervals):
            return 1.0 / (i + 1)
    return 0.0


def goal_error(goal_xy: Sequence[float] | None, truth_xy: Sequence[float] | None) -> float | None:
    """Metres from the returned goal to the ground truth; inf when no goal was returned for a
    question that has one; None when the question has no goal_xy."""
    if truth_xy is None:
        return None
    if goal_xy is None:
        return math.inf
    return math.hypot(goal_xy[0] - truth_xy[0], goal_xy[1] - truth_xy[1])


def open_answer_correct(q: dict[str, Any], value: str) -> float | None:
    """v2 open answers: 1.0/0.0, or None when the question has no open answer. A `when` answer
    (a stamp) is right when it lies in the question's frames; numbers match numerically."""
    from .answer_match import matches, references

    if isinstance(q.get("options"), list):
        return None
    refs = references(q)
    if not refs:
        return None
    if q.get("type") == "when":
        try:
            return 1.0 if is_relevant(int(str(value).strip()), q.get("frames") or []) else 0.0
        except ValueError:
            return 0.0
    return 1.0 if matches(value, refs, numeric=q.get("type") in NUMERIC_TYPES) else 0.0


def score_question(q: dict[str, Any], frames: Sequence[int], choice: str, goal_xy: Sequence[float] | None,
                   keyframe_stamps: Sequence[int], value: str | None = None,
                   found: bool | None = None) -> dict[str, float | None]:
    """Per-question metrics; None where a metric does not apply (no options / no goal_xy / no
    open answer / not a question about something never seen). ``value``: the reply's typed
    value in canonical form; ``found``: whether the reply said it found the thing."""
    iv = q.get("frames") or []
    out: dict[str, float | None] = {
        "retrieval_acc@1": acc_at_k(frames, iv, 1), "retrieval_acc@3": acc_at_k(frames, iv, 3),
        "retrieval_acc@5": acc_at_k(frames, iv, 5), "precision@5": precision_at_k(frames, iv, 5),
        "recall@5": recall_at_k(frames, iv, 5, keyframe_stamps), "mrr@5": mrr_at_k(frames, iv, 5),
        "answer_accuracy": None, "goal_success": None, "goal_error_m": None,
        "open_answer_accuracy": None, "false_found_rate": None,
    }
    if value is not None:
        out["open_answer_accuracy"] = open_answer_correct(q, value)
    if q.get("expect_found") is False and found is not None:
        # found, or given a goal, for something never seen
        out["false_found_rate"] = 1.0 if (found or goal_xy is not None) else 0.0
        for key in ("retrieval_acc@1", "retrieval_acc@3", "retrieval_acc@5", "precision@5", "recall@5", "mrr@5"):
            out[key] = None  # nothing to retrieve
    if isinstance(q.get("options"), list) and q.get("answer"):
        out["answer_accuracy"] = 1.0 if (choice or "").upper() == str(q["answer"]).upper() else 0.0
    err = goal_error(goal_xy, q.get("goal_xy"))
    if err is not None:
        out["goal_error_m"] = err
        out["goal_success"] = 1.0 if err <= GOAL_SUCCESS_M else 0.0
    return out


def mean_metrics(rows: Sequence[dict[str, float | None]]) -> dict[str, float | None]:
    """Means over the questions where each metric applies (None if it applies to none). Goal
    error's mean is over questions that got a goal (a missing goal counts as a failure in
    goal_success, not as an infinite error)."""
    out: dict[str, float | None] = {}
    for key in METRIC_KEYS:
        vals = [r[key] for r in rows if r.get(key) is not None]
        if key == "goal_error_m":
            vals = [v for v in vals if math.isfinite(v)]
        out[key] = (sum(vals) / len(vals)) if vals else None
    out["n"] = float(len(rows))
    return out


def summarize(rows: Sequence[dict[str, float | None]], types: Sequence[str]) -> tuple[dict, dict]:
    """(overall means, per-type means)."""
    by_type: dict[str, list] = {}
    for r, t in zip(rows, types):
        by_type.setdefault(t, []).append(r)
    return mean_metrics(rows), {t: mean_metrics(rs) for t, rs in sorted(by_type.items())}
