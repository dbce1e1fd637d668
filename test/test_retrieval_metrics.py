"""Metric functions against hand-computed cases (docs/tour-format.md definitions, on stamps)."""

import math

import pytest

from vlkng_ros.eval.retrieval_metrics import (acc_at_k, goal_error, mean_metrics, mrr_at_k, precision_at_k,
                                              recall_at_k, score_question, summarize)

IV = [[100, 200], [500, 500]]  # relevant: 100..200 inclusive, and exactly 500
KEYFRAMES = [50, 100, 150, 200, 300, 500, 600]  # relevant keyframes: 100, 150, 200, 500 -> 4


def test_acc_at_k_counts_inclusive_interval_ends():
    assert acc_at_k([300, 200], IV, 1) == 0.0
    assert acc_at_k([300, 200], IV, 3) == 1.0
    assert acc_at_k([500], IV, 1) == 1.0
    assert acc_at_k([], IV, 5) == 0.0


def test_precision_divides_by_k_not_by_returned():
    assert precision_at_k([100, 300, 500], IV, 5) == pytest.approx(2 / 5)
    assert precision_at_k([100, 150], IV, 1) == 1.0


def test_recall_uses_relevant_keyframes_of_tour():
    assert recall_at_k([100, 300, 500, 150], IV, 5, KEYFRAMES) == pytest.approx(3 / 4)
    assert recall_at_k([100], IV, 5, [10, 20]) == 0.0  # no relevant keyframe at all


def test_mrr_first_relevant_rank():
    assert mrr_at_k([300, 600, 150], IV, 5) == pytest.approx(1 / 3)
    assert mrr_at_k([300, 600, 150], IV, 2) == 0.0
    assert mrr_at_k([200], IV, 5) == 1.0


def test_goal_error_and_success():
    assert goal_error([3.0, 4.0], [0.0, 0.0]) == pytest.approx(5.0)
    assert goal_error(None, [0.0, 0.0]) == math.inf
    assert goal_error([1, 1], None) is None
    q = {"frames": IV, "options": ["A. x", "B. y"], "answer": "B", "goal_xy": [0.0, 0.0]}
    row = score_question(q, [300, 150], "b", [1.0, 1.0], KEYFRAMES)
    assert row["answer_accuracy"] == 1.0 and row["goal_success"] == 1.0
    assert row["goal_error_m"] == pytest.approx(math.sqrt(2))
    assert row["retrieval_acc@1"] == 0.0 and row["mrr@5"] == 0.5
    far = score_question(q, [], "A", [2.0, 0.0], KEYFRAMES)
    assert far["answer_accuracy"] == 0.0 and far["goal_success"] == 0.0


def test_means_overall_and_by_type_skip_inapplicable():
    a = score_question({"frames": IV}, [150], "", None, KEYFRAMES)
    b = score_question({"frames": IV, "goal_xy": [0, 0]}, [300], "", None, KEYFRAMES)
    overall, by_type = summarize([a, b], ["object_search", "temporal"])
    assert overall["retrieval_acc@1"] == 0.5
    assert overall["answer_accuracy"] is None
    assert overall["goal_success"] == 0.0  # missing goal = failure
    assert overall["goal_error_m"] is None  # but no infinite mean
    assert by_type["object_search"]["retrieval_acc@1"] == 1.0 and by_type["temporal"]["n"] == 1.0
    assert mean_metrics([])["retrieval_acc@1"] is None
